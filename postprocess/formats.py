"""Write and read the three task file formats exactly as the DARE layout has them.

- csv: one table, no index, `\n` line ends;
- parquet: one table, no index;
- sqlite: named tables (`train_set`, `val_set`, or `table_1..k` for the split
  IF training data), written with pandas' to_sql like the published tasks.
Writers are handed their paths; they are the only code here that touches disk.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

from pipeline import names

# The sqlite table each single-table file uses, by stem.
SQLITE_TABLE = {
    names.TRAIN_V1_NO_ERR: names.TRAIN_SET_TABLE,
    names.TRAIN_V2: names.TRAIN_SET_TABLE,
    names.VAL_V1: names.VAL_SET_TABLE,
    names.VAL_V2: names.VAL_SET_TABLE,
}


def _write_sqlite(path: Path, tables: dict[str, pd.DataFrame]) -> None:
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    try:
        for table_name, df in tables.items():
            df.to_sql(table_name, con, index=False)
        con.commit()
    finally:
        con.close()


def write_frame(df: pd.DataFrame, path: Path, file_type: str, table_name: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if file_type == "csv":
        df.to_csv(path, index=False, lineterminator="\n")
    elif file_type == "parquet":
        df.to_parquet(path, index=False)
    elif file_type == "sqlite":
        if not table_name:
            raise ValueError("sqlite needs a table name")
        _write_sqlite(path, {table_name: df})
    else:
        raise ValueError(f"unknown file type {file_type!r}")


def write_split_tables(tables: tuple[pd.DataFrame, ...], path: Path) -> None:
    _write_sqlite(path, {f"{names.SPLIT_TABLE_PREFIX}{i}": t for i, t in enumerate(tables, start=1)})


def read_frame(path: Path, file_type: str) -> pd.DataFrame:
    """Read a task file as an agent would; split sqlite tables are joined on row_id."""
    if file_type == "csv":
        return pd.read_csv(path)
    if file_type == "parquet":
        return pd.read_parquet(path)
    if file_type == "sqlite":
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
            frames = [pd.read_sql_query(f'SELECT * FROM "{t}"', con) for t in tables]
        finally:
            con.close()
        if len(frames) == 1:
            return frames[0]
        joined = frames[0]
        for f in frames[1:]:
            joined = joined.merge(f, on=names.ROW_ID, how="inner")
        return joined.sort_values(names.ROW_ID).reset_index(drop=True)
    raise ValueError(f"unknown file type {file_type!r}")
