"""Content hashes: bytes for text files, canonical row content for binary tables.

Parquet and SQLite files may legitimately differ in bytes across library builds
while holding the same data, so the manifest hashes what they contain.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from pipeline.core.sqlite import connect_read_only, select_all


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def frame_digest(df: pd.DataFrame) -> str:
    """Hash of column names, dtypes and values in row order."""
    h = hashlib.sha256()
    h.update(json.dumps([str(c) for c in df.columns]).encode())
    h.update(json.dumps([str(t) for t in df.dtypes]).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()


def _sqlite_digest(path: Path) -> str:
    h = hashlib.sha256()
    con = connect_read_only(path)
    try:
        tables = con.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY name"
        ).fetchall()
        for name, sql in tables:
            h.update(f"{name}\x1f{sql}\x1e".encode())
            for row in con.execute(f"{select_all(con, name)} ORDER BY rowid"):
                h.update(repr(row).encode())
    finally:
        con.close()
    return h.hexdigest()


def content_hash(path: Path) -> str:
    """What the manifest records for one file."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return frame_digest(pd.read_parquet(path))
    if suffix == ".sqlite":
        return _sqlite_digest(path)
    return sha256_file(path)
