"""Make any source table safe to write as csv, parquet and sqlite and read back the same.

Each rule exists because a round trip through one of the three formats would
otherwise change the data an agent sees, and with it the ground truth:
- column names become unique, non-empty strings, case-insensitively (sqlite
  treats `LP4` and `lp4` as one column; polars rejects duplicates);
- a line break or tab inside a column name becomes a space (a header cell wrapped over two
  lines), and a name holding any other control character (NUL, ESC, DEL, ...) rejects the
  dataset: names reach instructions, metadata and generated scripts, where such a character
  could forge a line or move a terminal's cursor (scripts take names only as literals anyway);
- a source column named `row_id` is renamed, since `row_id` is ours;
- booleans become 0/1 integers (read_csv turns "True" back into bool, sqlite has no bool);
- pandas categoricals and mixed objects become plain strings;
- the empty string becomes missing: in a task CSV it is the one spelling of missing
  (DARE-bench's convention, pipeline.core.csv_convention), so it cannot survive as text;
- a string that pandas' defaults would read as missing ("NA", "None", "null", ...) stays a
  string, because the tasks' CSVs are read with only "" as missing, so a category level
  `None` survives the round trip. The table handed here already says what is missing where
  the source format can say it (R's NA_character_, parquet or SQLite NULL, a CSV source read
  with pandas' defaults, since a plain CSV cannot tell the string `NA` from a missing value).
  The one exception: in a column whose other values are all numbers, such a spelling is that
  column's missing marker (a numeric column exported as text), and becomes missing;
- string columns whose every value is a number become numbers (read_csv would do it anyway);
- strings that spell a logical ("True"/"false"/...) become 0/1 (read_csv would make bools);
- carriage returns in strings become `\n` (csv written with `\n` line ends does not
  quote a bare `\r`, and readers then split the row);
- surrounding whitespace is stripped from strings (csv readers disagree on it);
- infinite numbers become missing (no range, imputer or JSON file can hold them).
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from pipeline.core.names import CSV_NA_STRINGS, ROW_ID
from pipeline.core.records import DatasetRejected
from pipeline.core.text import printable

# Line and paragraph breaks and tabs: a wrapped header cell, read as the space it stands for.
_BREAKS = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")


def control_free_name(name: str, what: str = "column") -> str:
    """`name` with its breaks as spaces; DatasetRejected (one line, the name escaped) when another
    control character is left."""
    spaced = _BREAKS.sub(" ", name)
    if any(unicodedata.category(ch) == "Cc" for ch in spaced):
        raise DatasetRejected(f"{what} name '{printable(name)}' holds a control character", "control_character_name")
    return spaced


def unique_column_names(names: list[object]) -> list[str]:
    """Stringify, strip and de-duplicate: `a, a, ''` -> `a, a_2, column_3`."""
    out: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(names, start=1):
        missing = raw is None or (isinstance(raw, float) and raw != raw)
        name = "" if missing else control_free_name(str(raw)).strip()
        if not name:
            name = f"column_{i}"
        if name.casefold() == ROW_ID:
            name = f"{name}_original"
        base, k = name, 2
        while name.casefold() in seen:
            name = f"{base}_{k}"
            k += 1
        seen.add(name.casefold())
        out.append(name)
    return out


_LOGICAL = {"true": 1, "false": 0}


def _clean_strings(col: pd.Series) -> pd.Series:
    def clean(v: object) -> object:
        if v is None or (isinstance(v, float) and v != v):
            return None
        s = str(v).replace("\r\n", "\n").replace("\r", "\n").strip()
        return s or None

    values = [clean(v) for v in col.tolist()]
    markers = [v is not None and v in CSV_NA_STRINGS for v in values]
    others = [v for v, m in zip(values, markers) if v is not None and not m]
    if any(markers) and others and pd.to_numeric(pd.Series(others), errors="coerce").notna().all():
        values = [None if m else v for v, m in zip(values, markers)]
    as_str = pd.Series(values, index=col.index, dtype="object")
    present = {v for v in values if v is not None}
    if present and {v.lower() for v in present} <= set(_LOGICAL):
        return _tidy_numeric(as_str.map(lambda v: None if v is None else _LOGICAL[v.lower()]).astype("float64"))
    numeric = pd.to_numeric(as_str, errors="coerce")
    if as_str.notna().any() and numeric.notna().sum() == as_str.notna().sum():
        return _tidy_numeric(numeric)
    return as_str.astype("str").where(as_str.notna(), None).astype("object")


def _tidy_numeric(col: pd.Series) -> pd.Series:
    """Integers stay int64 when complete; otherwise float64 (NaN for missing, inf too)."""
    if ptypes.is_integer_dtype(col) and not col.isna().any():
        return col.astype("int64")
    as_float = col.astype("float64").replace([np.inf, -np.inf], np.nan)
    non_missing = as_float.dropna()
    if not as_float.isna().any() and len(non_missing) and (non_missing == non_missing.round()).all() \
            and non_missing.abs().max() < 2**53:
        return as_float.astype("int64")
    return as_float


def normalize_table(df: pd.DataFrame) -> pd.DataFrame:
    """Return a new frame with the rules above applied; the input is not modified."""
    columns = unique_column_names(list(df.columns))
    out = {}
    for name, (_, col) in zip(columns, df.items()):
        col = col.reset_index(drop=True)
        if ptypes.is_bool_dtype(col):
            # pandas' nullable "boolean" may hold NA, which int64 cannot
            out[name] = _tidy_numeric(col.astype("float64"))
        elif ptypes.is_datetime64_any_dtype(col) or isinstance(col.dtype, pd.PeriodDtype):
            out[name] = col.astype("str").where(col.notna(), None).astype("object")
        elif ptypes.is_numeric_dtype(col) and not ptypes.is_complex_dtype(col):
            out[name] = _tidy_numeric(pd.to_numeric(col, errors="coerce"))
        else:
            # object columns holding Python bools are logical vectors with missing values
            non_missing = col.dropna()
            if len(non_missing) and all(isinstance(v, bool) for v in non_missing.tolist()):
                out[name] = _tidy_numeric(col.map(lambda v: None if v is None or v != v else int(v)).astype("float64"))
            else:
                out[name] = _clean_strings(col)
    return pd.DataFrame(out, columns=columns)
