"""A Kaggle download that is a SQLite database (`database.sqlite` beside its `dataset-metadata.json`) is read by
`--sources local:DIR` through the `sqlite:` source's own reader: one candidate per analysis table (a fact table
joined to what it links to, or a table that takes part in no relation), the record the `sqlite:` source gives
(schema, join path) under a local ref with the folder's card on top, and a build of it ends in a task. A file
named like a database that is none is one candidate rejected with the reason. The fixture is a real SQLite file
made here."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from pipeline.build import BuildJob, build_one
from pipeline.core.jsonio import read_json
from sourcing.local import LocalFilesSource

CARD = {"title": "European Football Matches", "subtitle": "Matches and teams of one season",
        "description": "Every match of a season with the home team and the attendance.",
        "id": "someone/european-football", "licenses": [{"name": "CC0-1.0"}],
        "resources": [{"path": "database.sqlite", "description": "The database",
                       "schema": {"fields": [{"name": "attendance", "description": "Spectators in the stadium",
                                              "type": "integer"}]}}]}


def _download(root: Path, n: int = 240) -> Path:
    """root/european-football/{database.sqlite, dataset-metadata.json}, as `kaggle datasets download --unzip`
    and `kaggle datasets metadata` leave a database dataset."""
    folder = root / "european-football"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    con = sqlite3.connect(folder / "database.sqlite")
    con.execute("CREATE TABLE team (team_id INTEGER PRIMARY KEY, capacity INTEGER, league TEXT)")
    con.execute("CREATE TABLE match (match_id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES team(team_id), "
                "price REAL, temperature REAL, attendance REAL)")
    con.execute("CREATE TABLE weather (day INTEGER, rain REAL, wind REAL, temp REAL)")
    capacity = rng.integers(10_000, 60_000, 12)
    con.executemany("INSERT INTO team VALUES (?, ?, ?)",
                    [(t, int(capacity[t]), ["north", "south", "east"][t % 3]) for t in range(12)])
    rows = []
    for m in range(n):
        team, price, temp = int(rng.integers(0, 12)), float(rng.uniform(10, 80)), float(rng.normal(15, 6))
        attendance = 0.6 * capacity[team] - 120 * price + 150 * temp + rng.normal(0, 1500)
        rows.append((m, team, round(price, 2), round(temp, 1), round(float(attendance), 1)))
    con.executemany("INSERT INTO match VALUES (?, ?, ?, ?, ?)", rows)
    con.executemany("INSERT INTO weather VALUES (?, ?, ?, ?)",
                    [(d, float(rng.gamma(1.0)), float(rng.normal(5, 2)), float(rng.normal(12, 5))) for d in range(50)])
    con.commit()
    con.close()
    (folder / "dataset-metadata.json").write_text(json.dumps(CARD), encoding="utf-8")
    return root


def test_a_database_download_is_one_candidate_per_analysis_table_documented_by_its_card(tmp_path: Path) -> None:
    data = _download(tmp_path / "downloads")
    (data / "broken").mkdir()
    (data / "broken" / "data.db").write_bytes(b"not a database at all")
    source = LocalFilesSource(data)
    assert source.candidates() == ["local/broken", "local/european-football/match",
                                   "local/european-football/weather"]
    record = source.record("local/european-football/match")
    assert (record.source, record.title, record.license) == ("local", "European Football Matches: match", "CC0-1.0")
    assert record.description.startswith("Every match of a season") and "left-joined many-to-one to team" in \
        record.description
    assert record.column_descriptions["attendance"] == "Spectators in the stadium"
    assert record.column_descriptions["capacity"] == "capacity from table team, declared INTEGER"
    assert [(s.left, s.right, s.left_on, s.columns) for s in record.join_path] == [
        ("match", "team", "team_id", ("capacity", "league"))]
    table = source.load_table("local/european-football/match")
    assert list(table.columns) == ["match_id", "team_id", "price", "temperature", "attendance", "capacity",
                                   "league"] and len(table) == 240
    assert len(source.load_table("local/european-football/weather")) == 50
    with pytest.raises(ValueError, match="not a SQLite database"):
        source.record("local/broken")


def test_a_database_download_builds_a_task_end_to_end(tmp_path: Path) -> None:
    data = _download(tmp_path / "downloads")
    outcome = build_one("local/european-football/match", "local", str(data), BuildJob.make(0), tmp_path / "work",
                        tmp_path / "tasks")[0]
    assert outcome.ok, f"{outcome.stage}: {outcome.reason}"
    task = next((tmp_path / "tasks").iterdir())
    question = read_json(task / "verify" / "all_metadata.json")["question"]
    # the joined table's columns reach the task: the team's own columns beside the match's
    assert question["target"][0] in {"price", "temperature", "attendance"}, question
    assert set(question["column_type_inference"]) >= {"capacity", "league"}, question
