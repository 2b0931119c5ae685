"""A `local:` folder someone else wrote cannot leak or stall a build: a link out of the folder (a
`SECRET-*` table elsewhere), a FIFO, an oversized or too-wide file and a linked sidecar are each a
rejection of that dataset with its one-line reason, read within the configured limits."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from pipeline import steps
from pipeline.core.safe_io import InputLimits
from sourcing.local import LocalFilesSource


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    pd.DataFrame({"x": range(40), "y": [i % 2 for i in range(40)]}).to_csv(data / "honest.csv", index=False)
    return data


def _rejection(folder: Path, name: str, limits: InputLimits | None = None) -> str:
    """The source step's reason for `local/<name>` (the step a build runs, with the build's limits)."""
    work = folder.parent / "work"
    outcome = steps.start(f"local/{name}", str(work))
    outcome = steps.source_step(outcome, "local", str(folder), limits.model_dump_json() if limits else "")
    assert not outcome.ok and outcome.stage == "source"
    return outcome.reason


def test_the_honest_file_still_loads(folder: Path) -> None:
    assert LocalFilesSource(folder).load_table("local/honest").shape == (40, 2)


def test_a_link_out_of_the_folder_is_refused(folder: Path, tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "SECRET-salaries.csv"
    secret.parent.mkdir()
    secret.write_text("name,salary\nalice,1\n")
    (folder / "SECRET-salaries.csv").symlink_to(secret)
    assert "local/SECRET-salaries" in LocalFilesSource(folder).candidates()
    assert _rejection(folder, "SECRET-salaries") == \
        "cannot load: SECRET-salaries.csv is a symbolic link, which is refused"


def test_a_fifo_is_refused_without_blocking(folder: Path) -> None:
    os.mkfifo(folder / "fifo.csv")
    assert _rejection(folder, "fifo") == "cannot load: fifo.csv is not a regular file"


def test_an_oversized_file_is_refused_by_the_configured_limit(folder: Path) -> None:
    size = (folder / "honest.csv").stat().st_size
    assert _rejection(folder, "honest", InputLimits(max_file_bytes=100)) == \
        f"cannot load: honest.csv is {size} bytes, over the 100-byte limit (max_file_bytes)"


def test_a_too_wide_file_is_refused_before_it_is_parsed(folder: Path) -> None:
    """A 100k-column CSV ran for 10 minutes in design; scaled down to 50 columns against a limit of 10."""
    (folder / "wide.csv").write_text(",".join(f"c{i}" for i in range(50)) + "\n" + ",".join("1" * 50) + "\n")
    assert _rejection(folder, "wide", InputLimits(max_columns=10)) == \
        "cannot load: wide.csv has 50 columns, over the limit of 10 (max_columns)"


def test_a_linked_sidecar_is_refused(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_text('{"title": "from elsewhere"}')
    (folder / "honest.json").symlink_to(tmp_path / "doc.json")
    assert _rejection(folder, "honest") == "cannot load: honest.json is a symbolic link, which is refused"


def test_a_database_named_fifo_or_link_is_one_rejected_candidate_not_a_crash(folder: Path, tmp_path: Path) -> None:
    # Issue 49's SQLite path: a `.db` entry is opened by sourcing.sqlite_source; one that is a FIFO (which would
    # hang a read) or a link to a folder elsewhere must not break the listing of the others.
    os.mkfifo(folder / "pipe.db")
    elsewhere = tmp_path / "elsewhere.sqlite"
    sqlite3.connect(elsewhere).execute("CREATE TABLE secret (x INTEGER)").connection.commit()
    (folder / "linked.sqlite").symlink_to(elsewhere)
    assert LocalFilesSource(folder).candidates() == ["local/honest", "local/linked", "local/pipe"]
    assert _rejection(folder, "pipe") == "cannot load: pipe.db is not a regular file"
    assert _rejection(folder, "linked") == "cannot load: linked.sqlite is a symbolic link, which is refused"
