"""A SQLite file someone else wrote cannot blow up or stall a read: a VIRTUAL generated column (an 8 KB
file that `SELECT *` expands to gigabytes, hidden from `PRAGMA table_info`) is refused wherever daregen
reads SQLite, and the `sqlite:` source follows `local:`'s rules: a linked database, a FIFO database or
sidecar and a file or join beyond the configured limits are each a rejection with its one-line reason,
without blocking."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest

from finalize.reference_solution import read_table
from pipeline import steps
from pipeline.core.hashing import content_hash
from pipeline.core.safe_io import InputLimits, UnsafeInput, check_table_file
from pipeline.core.sqlite import connect_read_only
from sourcing.sqlite_source import SQLiteSource
from tests.factories import FACT, build_patients_db, build_shop_db

# 10^8 characters computed per row on every read; the file itself stays a few KB. Added after the rows
# (ALTER TABLE takes a VIRTUAL column), since an INSERT computes it too.
BOMB = "ALTER TABLE t ADD COLUMN g TEXT GENERATED ALWAYS AS (printf('%.*c', 100000000, 'x')) VIRTUAL"


def _bomb(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (row_id INTEGER, x REAL)")
    con.executemany("INSERT INTO t (row_id, x) VALUES (?, ?)", [(i, i / 3) for i in range(50)])
    con.execute(BOMB)
    con.commit()
    con.close()
    assert path.stat().st_size < 16 << 10
    return path


@pytest.fixture(autouse=True)
def never_blocks():
    """A read that blocks (a FIFO) fails the test after 20 s instead of hanging it."""
    def expire(*_):
        raise TimeoutError("blocked")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _rejection(folder: Path, ref: str, limits: InputLimits | None = None) -> str:
    """The source step's reason for `ref` (the step a build runs, with the build's limits)."""
    outcome = steps.start(ref, str(folder.parent / "work"))
    outcome = steps.source_step(outcome, "sqlite", str(folder), limits.model_dump_json() if limits else "")
    assert not outcome.ok and outcome.stage == "source"
    return outcome.reason


def test_a_generated_column_is_refused_by_every_reader(tmp_path: Path) -> None:
    db = _bomb(tmp_path / "task" / "train.sqlite")
    refusal = "table 't' has a generated column 'g', which is refused"
    with pytest.raises(sqlite3.DatabaseError, match=refusal):
        connect_read_only(db)
    with pytest.raises(sqlite3.DatabaseError, match=refusal):
        read_table(db)  # the reference solution's reader
    with pytest.raises(sqlite3.DatabaseError, match=refusal):
        content_hash(db)  # the manifest's
    with pytest.raises(UnsafeInput, match=refusal):
        check_table_file(db, db.parent, "sqlite")  # verify's and score's check before reading
    assert _rejection(db.parent, "sqlite/train/t") == f"cannot load: train.sqlite is not a readable sqlite file: {refusal}"


def test_a_linked_database_is_refused(tmp_path: Path) -> None:
    secret = build_patients_db(tmp_path / "elsewhere" / "cookies.db")
    folder = tmp_path / "dbs"
    folder.mkdir()
    (folder / "cookies.db").symlink_to(secret)
    assert "sqlite/cookies" in SQLiteSource(folder).candidates()
    assert _rejection(folder, "sqlite/cookies") == "cannot load: cookies.db is a symbolic link, which is refused"


def test_a_fifo_database_and_a_fifo_sidecar_are_refused_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / "dbs"
    build_patients_db(folder / "patients.db")
    os.mkfifo(folder / "patients.json")
    os.mkfifo(folder / "pipe.db")
    assert _rejection(folder, "sqlite/patients/patients") == "cannot load: patients.json is not a regular file"
    assert _rejection(folder, "sqlite/pipe") == "cannot load: pipe.db is not a regular file"


def test_files_tables_and_joins_beyond_the_limits_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "dbs"
    shop = build_shop_db(folder / "shop.db")
    size = shop.stat().st_size
    assert _rejection(folder, f"sqlite/shop/{FACT}", InputLimits(max_file_bytes=1000)) == \
        f"cannot load: shop.db is {size} bytes, over the 1000-byte limit (max_file_bytes)"
    assert "over the limit of 100 (max_rows)" in _rejection(folder, f"sqlite/shop/{FACT}", InputLimits(max_rows=100))
    joined = len(SQLiteSource(folder).load_table(f"sqlite/shop/{FACT}").columns)
    widest = max(len(c) for c in SQLiteSource(folder)._schema(shop).columns.values())
    limits = InputLimits(max_columns=widest)  # every table fits; the joined one does not
    assert _rejection(folder, f"sqlite/shop/{FACT}", limits) == \
        f"cannot load: shop.db:{FACT} joined has {joined} columns, over the limit of {widest} (max_columns)"
