"""A build from a relational SQLite source gives tasks whose IF training data is the source's
tables, whose instruction and metadata name every join, and whose reference solution, doing
exactly those joins, reproduces the published ground truth; a single-table database beside them
is an ordinary tabular task, and a file that is not a database is rejected with its reason."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from finalize.checks import check_tabular_task, errors
from finalize.runner import run_reference
from pipeline.core import names
from pipeline.core.jsonio import read_json
from pipeline.core.records import JoinStep
from postprocess.formats import read_frame, write_relational_tables
from postprocess.relational import join_tables, split_relational
from tests.factories import FACT, HOSTILE_TABLE, build_patients_db, build_shop_db, file_sha256, q

SEED = 2


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    from flows import build_tasks

    root = tmp_path_factory.mktemp("sqlite_build")
    dbs = root / "dbs"
    # The hint makes the designer try the learnable target first (the MM check rejects unlearnable ones).
    doc = {"target_hint": f"{FACT}.returned", "license": "CC0-1.0"}
    build_shop_db(dbs / "shop.db", seed=0, sidecar=doc)
    build_shop_db(dbs / "shop_b.sqlite", n_orders=180, seed=5, sidecar=doc)
    (dbs / "broken.db").write_bytes(b"PK\x03\x04 not a database")
    build_patients_db(dbs / "patients.db")  # one table, no relations: a plain tabular candidate
    # Its schema documents no outcome: its owner's sidecar names it, or no target would be guessed.
    (dbs / "patients.json").write_text(json.dumps({"target_hint": "patients.readmitted"}), encoding="utf-8")
    hashes = {p.name: file_sha256(p) for p in dbs.iterdir()}
    out = root / "tasks"
    report = build_tasks(out=str(out), limit=10, seed=SEED, sources=f"sqlite:{dbs}")
    return {"out": out, "report": report, "dbs": dbs, "hashes": hashes}


def _tasks(built: dict) -> list[Path]:
    """The relational tasks (the single-table database's task is checked on its own)."""
    return [built["out"] / e["file_path"] for e in read_json(built["out"] / names.QUESTION_LIST)
            if "patients" not in e["file_path"]]


def test_relational_tasks_are_built_and_bad_files_are_rejected_with_a_reason(built):
    report = built["report"]
    # broken, patients/patients, shop/order, shop/t, shop_b/order, shop_b/t (the 1-row bystander tables)
    # three datasets built, each into one or two tasks (a class and a reg task when both have a natural target)
    assert report["considered"] == 6 and len({t.rsplit("_", 1)[0] for t in report["tasks"]}) == 3, report
    reasons = {r["ref"]: r["reason"] for r in report["rejections"]}
    assert sorted(reasons) == ["sqlite/broken", "sqlite/shop/t", "sqlite/shop_b/t"]
    assert "not a SQLite database" in reasons["sqlite/broken"]
    assert "too few rows" in reasons["sqlite/shop/t"]
    assert {p.name: file_sha256(p) for p in built["dbs"].iterdir()} == built["hashes"]  # read, never written


def test_a_single_table_database_is_an_ordinary_tabular_task(built):
    entries = [e for e in read_json(built["out"] / names.QUESTION_LIST) if "patients" in e["file_path"]]
    assert len(entries) == 1
    task = built["out"] / entries[0]["file_path"]
    q_block = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    assert not q_block.get("join_path")  # no relational joins to do
    assert errors(check_tabular_task(task)) == []


def test_instruction_and_metadata_name_every_join(built):
    entries = {e["file_path"]: e for e in read_json(built["out"] / names.QUESTION_LIST)}
    for task in _tasks(built):
        q_block = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
        path = [JoinStep.model_validate(s) for s in q_block["join_path"]]
        assert path and path[0].left == FACT and q_block["save_file_type"] == "sqlite"
        joined = {FACT}
        text = entries[task.name]["question_v1"]
        for s in path:
            assert s.left in joined and s.how == "left"  # each step hangs off a table already joined
            joined.add(s.right)
            assert f"left join `{s.right}` on `{s.left}`.`{s.left_on}` = `{s.right}`.`{s.right_on}`" in text
        # the join is needed: some IF column lives only in a dimension table
        if_columns = set(q_block["target"]) | set(q_block["not_filtered_related_features"])
        assert if_columns & {c for s in path for c in s.columns}


def test_train_v1_is_the_fact_table_and_its_dimensions_with_declared_keys(built):
    for task in _tasks(built):
        path = [JoinStep.model_validate(s) for s in
                read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]["join_path"]]
        for stem in (names.TRAIN_V1, names.TRAIN_V1_NO_ERR):
            con = sqlite3.connect(task / names.SOURCE_DIR / f"{stem}.sqlite")
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            keys = [(t, r[3], r[2], r[4]) for t in tables
                    for r in con.execute("SELECT * FROM pragma_foreign_key_list(?)", (t,))]
            con.close()
            assert tables == [FACT] + [s.right for s in path]
            assert sorted(keys) == sorted((s.left, s.left_on, s.right, s.right_on) for s in path)


def test_noise_never_touches_a_dimension_row(built):
    """Dimension rows are shared by clean rows: noise must live on the fact side only."""
    for task in _tasks(built):
        path = [JoinStep.model_validate(s) for s in
                read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]["join_path"]]
        frames = {}
        for stem in (names.TRAIN_V1, names.TRAIN_V1_NO_ERR):
            con = sqlite3.connect(task / names.SOURCE_DIR / f"{stem}.sqlite")
            frames[stem] = {t: pd.read_sql_query(f"SELECT * FROM {q(t)}", con)
                            for t in [FACT] + [s.right for s in path]}
            con.close()
        noisy, clean = frames[names.TRAIN_V1], frames[names.TRAIN_V1_NO_ERR]
        assert len(noisy[FACT]) > len(clean[FACT])
        for s in path:
            assert noisy[s.right][s.right_on].is_unique
            pd.testing.assert_frame_equal(noisy[s.right], clean[s.right], check_dtype=False)


def test_reference_rerun_reproduces_the_ground_truth(built, tmp_path):
    for task in _tasks(built):
        published = (task / names.VERIFY_DIR / names.SIMULATED_PRED).read_bytes()
        rerun = tmp_path / f"{task.name}.csv"
        run_reference(task, rerun, mode="forkserver")
        assert rerun.read_bytes() == published
        # DARE-bench's way too: the standalone script in a fresh interpreter, from all_metadata.json alone
        standalone = tmp_path / f"{task.name}_standalone.csv"
        run_reference(task, standalone, mode="subprocess")
        assert pd.read_csv(standalone).equals(pd.read_csv(task / names.VERIFY_DIR / names.SIMULATED_PRED))
        assert errors(check_tabular_task(task)) == []


# Stage-level tests of the relational form (no Prefect): split, write, read back.

_PATH = [JoinStep(left="f", right=HOSTILE_TABLE, left_on="k", right_on="key", columns=("colour", 'a "b"')),
         JoinStep(left=HOSTILE_TABLE, right="g", left_on='a "b"', right_on="id", columns=("size",))]


def _flat() -> pd.DataFrame:
    return pd.DataFrame({"y": [1, 0, 1, 1, 0], "k": [2, 1, 2, None, 3], "id": [10, 11, 12, 13, 14],
                         "colour": ["red", "blue", "red", None, "green"], 'a "b"': [5, 6, 5, None, 6],
                         "size": [0.5, 1.5, 0.5, None, 1.5]})


def test_split_then_join_gives_back_the_flat_rows():
    tables = split_relational(_flat(), _PATH)
    assert list(tables) == ["f", HOSTILE_TABLE, "g"]
    assert tables[HOSTILE_TABLE]["key"].tolist() == [1.0, 2.0, 3.0]  # one row per key, sorted
    back = join_tables(tables, _PATH)  # the fact's own `id` column survives the join onto g.id
    pd.testing.assert_frame_equal(back[list(_flat().columns)], _flat(), check_dtype=False)


def test_an_inconsistent_dimension_is_rejected():
    from pipeline.core.records import DatasetRejected

    flat = _flat()
    flat.loc[2, "colour"] = "purple"  # key 2 now has two colours
    with pytest.raises(DatasetRejected, match="maps to two different rows"):
        split_relational(flat, _PATH)


def test_relational_file_is_deterministic_and_reads_back_joined(tmp_path):
    keys = [(s.left, s.left_on, s.right, s.right_on) for s in _PATH]
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    write_relational_tables(split_relational(_flat(), _PATH), keys, a)
    write_relational_tables(split_relational(_flat(), _PATH), keys, b)
    assert a.read_bytes() == b.read_bytes()
    back = read_frame(a, "sqlite")
    pd.testing.assert_frame_equal(back[list(_flat().columns)], _flat(), check_dtype=False)


def test_rebuilding_gives_byte_identical_relational_files(built, tmp_path):
    """Same database and seed, another process path (pipeline.build.build_one without Prefect): the same bytes."""
    from finalize.layout import write_data_files
    from pipeline import steps
    from pipeline.build import BuildJob, build_one

    task = built["out"] / "sqlite_shop_order_class"
    o = build_one(f"sqlite/shop/{FACT}", "sqlite", str(built["dbs"]), BuildJob.make(SEED), tmp_path / "work",
                  tmp_path / "tasks", through="postprocess")[0]
    assert o.ok, o.reason
    write_data_files(steps.load_package(Path(o.work_dir)), tmp_path / "src")
    for stem in (names.TRAIN_V1, names.TRAIN_V1_NO_ERR, names.VAL_V1):
        published = task / names.SOURCE_DIR / f"{stem}.sqlite"
        assert (tmp_path / "src" / f"{stem}.sqlite").read_bytes() == published.read_bytes()
