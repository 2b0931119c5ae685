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

from pipeline.core import names
from pipeline.core.csv_convention import read_task_csv
from pipeline.core.sqlite import connect_read_only, quote_identifier, select_all, table_names

# The sqlite table each single-table file uses, by stem.
SQLITE_TABLE = {
    names.TRAIN_V1_NO_ERR: names.TRAIN_SET_TABLE,
    names.TRAIN_V2: names.TRAIN_SET_TABLE,
    names.VAL_V1: names.VAL_SET_TABLE,
    names.VAL_V2: names.VAL_SET_TABLE,
}


def write_sqlite_tables(path: Path, tables: dict[str, pd.DataFrame]) -> None:
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
        write_sqlite_tables(path, {table_name: df})
    else:
        raise ValueError(f"unknown file type {file_type!r}")


def write_split_tables(tables: tuple[pd.DataFrame, ...], path: Path) -> None:
    write_sqlite_tables(path, {f"{names.SPLIT_TABLE_PREFIX}{i}": t for i, t in enumerate(tables, start=1)})


def _sql_type(col: pd.Series) -> str:
    if pd.api.types.is_integer_dtype(col) or pd.api.types.is_bool_dtype(col):
        return "INTEGER"
    return "REAL" if pd.api.types.is_float_dtype(col) else "TEXT"


def _sql_value(v: object) -> object:
    if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
        return None
    return v.item() if hasattr(v, "item") else v


def write_relational_tables(tables: dict[str, pd.DataFrame], foreign_keys: list[tuple[str, str, str, str]],
                            path: Path) -> None:
    """A relational source's tables, fact table first, with declared FOREIGN KEYs
    (table, column, referenced table, referenced column), so the file documents its own
    joins to an agent (PRAGMA foreign_key_list) and to read_frame. to_sql cannot declare
    keys, hence the hand-written DDL; every name is quoted and every value a parameter."""
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    try:
        for name, df in tables.items():
            cols = [f"{quote_identifier(c)} {_sql_type(df[c])}" for c in df.columns]
            fks = [f"FOREIGN KEY ({quote_identifier(c)}) REFERENCES {quote_identifier(rt)} ({quote_identifier(rc)})"
                   for t, c, rt, rc in foreign_keys if t == name]
            con.execute(f"CREATE TABLE {quote_identifier(name)} ({', '.join(cols + fks)})")
            marks = ", ".join("?" for _ in df.columns)
            rows = [tuple(_sql_value(v) for v in row) for row in df.itertuples(index=False, name=None)]
            con.executemany(f"INSERT INTO {quote_identifier(name)} VALUES ({marks})", rows)
        con.commit()
    finally:
        con.close()


def _declared_join_path(con: sqlite3.Connection, tables: list[str]) -> list[tuple[str, str, str, str]]:
    """(left table, left column, right table, right column) in join order, from the fact table
    (the one no other table references) outwards; empty when no key is declared."""
    fks = {t: [(r[3], r[2], r[4]) for r in con.execute(
        "SELECT id, seq, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?) ORDER BY id, seq", (t,))]
        for t in tables}
    referenced = {rt for refs in fks.values() for _, rt, _ in refs}
    roots = [t for t in tables if fks[t] and t not in referenced]
    if not roots:
        return []
    steps, seen, queue = [], {roots[0]}, [roots[0]]
    while queue:
        left = queue.pop(0)
        for col, right, right_col in fks[left]:
            if right not in seen:
                seen.add(right)
                queue.append(right)
                steps.append((left, col, right, right_col))
    return steps


def read_frame(path: Path, file_type: str) -> pd.DataFrame:
    """Read a task file as an agent would; split sqlite tables are joined on row_id."""
    if file_type == "csv":
        return read_task_csv(path)
    if file_type == "parquet":
        return pd.read_parquet(path)
    if file_type == "sqlite":
        con = connect_read_only(path)
        try:
            tables = table_names(con)
            declared = _declared_join_path(con, tables)
            frames = [pd.read_sql_query(select_all(con, t), con) for t in tables]
        finally:
            con.close()
        if declared:  # a relational task's tables: LEFT JOIN along the declared keys
            from pipeline.core.records import JoinStep
            from postprocess.relational import join_tables

            steps = [JoinStep(left=lt, left_on=lc, right=rt, right_on=rc) for lt, lc, rt, rc in declared]
            return join_tables(dict(zip(tables, frames)), steps)
        if len(frames) == 1:
            return frames[0]
        joined = frames[0]
        for f in frames[1:]:
            joined = joined.merge(f, on=names.ROW_ID, how="inner")
        return joined.sort_values(names.ROW_ID).reset_index(drop=True)
    raise ValueError(f"unknown file type {file_type!r}")
