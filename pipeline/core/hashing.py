"""Content hashes: bytes for text files, canonical row content for binary tables.

Parquet and SQLite files may legitimately differ in bytes across library builds
while holding the same data, so the manifest hashes what they contain.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
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



# A column says nothing about the data when it has fewer distinct values (a flag, a constant): unrelated
# tables share it.
MIN_DISTINCT = 5
FINGERPRINT_DIGITS = 6


def _significant(numbers: np.ndarray) -> np.ndarray:
    """Finite numbers rounded to FINGERPRINT_DIGITS significant digits, the same float for the same
    rounded value: one package stores a column as float32 (AER/MASchools' 16.600000381469727), another
    prints it to 15 digits (Ecdat/MCAS's 16.6000003814697)."""
    nonzero = numbers != 0
    exponent = np.floor(np.log10(np.abs(numbers), where=nonzero, out=np.zeros_like(numbers))) - FINGERPRINT_DIGITS + 1
    return np.where(nonzero, np.rint(numbers / 10.0 ** exponent) * 10.0 ** exponent, 0.0)


def canonical_cells(values: pd.Series) -> list[str]:
    """Cells as comparable text: finite numbers as the float of their FINGERPRINT_DIGITS significant
    digits (so `1`, `1.0`, a parquet int and a float32 copy agree), missing values as one token, other
    text stripped. Vectorised: tables have 10^6 cells."""
    numbers = (values.astype(float) if values.dtype.kind in "biuf"
               else pd.to_numeric(values, errors="coerce").astype(float)).to_numpy()
    text = values.astype("string").str.strip().fillna("")
    missing = values.isna().to_numpy() | text.isin(["", "nan", "NaN", "None", "<NA>"]).to_numpy()
    finite = np.isfinite(numbers) & ~missing
    out = text.to_numpy(dtype=object)  # an object array: a numpy str array would strip the NUL token
    out[missing] = "\x00"
    out[finite] = (_significant(numbers[finite]) + 0.0).astype(str)  # + 0.0 turns -0.0 into 0.0
    return out.tolist()


def column_fingerprint(values: pd.Series) -> tuple[str, bool]:
    """(hash of the column's sorted canonical cells, informative?): the column's values whatever its
    name, its place and the order of the rows."""
    cells = sorted(canonical_cells(values))
    digest = hashlib.sha256("\x1f".join(cells).encode("utf-8")).hexdigest()[:32]
    distinct = set(cells) - {"\x00"}
    informative = len(distinct) >= MIN_DISTINCT
    if informative:  # a row index 0..n-1 or 1..n: every table of that length has it
        try:
            nums = sorted(float(c) for c in cells if c != "\x00")
            steps = np.diff(nums)
            if len(steps) and np.allclose(steps, 1.0) and nums[0] in (0.0, 1.0):
                informative = False
        except ValueError:
            pass
    return digest, informative


def column_fingerprints(df: pd.DataFrame) -> dict:
    """What a table holds whatever its layout: its row count and the column_fingerprint of every
    column, sorted. The corpus ships the same data under two refs with other column names
    (AER/Electricity1970's `output` is Ecdat/Electricity's `q`), in another order, or with one extra
    column (Ecdat/MCAS's upper-case `municipa`)."""
    return {"rows": len(df), "columns": sorted(list(column_fingerprint(df[c])) for c in df.columns)}
