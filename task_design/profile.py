"""Profile a table: one pass of column statistics and a type per column.

Polars computes the statistics in a single vectorised pass, which keeps
profiling cheap on long and wide tables (see bench/bench_profile.py).
Kinds:
- constant: fewer than two distinct non-missing values (all-missing included);
- id: an integer or string column whose values are (almost) all distinct,
  like a row number or a name; it identifies rows rather than describing them;
- datetime: strings that all parse as ISO-like dates;
- text: long free-text strings;
- categorical: other strings;
- numerical: other numbers.
"""

from __future__ import annotations

import re

import pandas as pd
import polars as pl
import pyarrow as pa

from pipeline.core.records import ColumnProfile, DatasetProfile

# A string column with at most this many levels records its category set.
MAX_RECORDED_CATEGORIES = 200
ID_UNIQUE_SHARE = 0.95  # distinct share above which an integer/string column is id-like
TEXT_MEAN_LENGTH = 40  # mean characters above which a varied string column is free text
DATETIME_PARSE_SHARE = 1.0
# Names that say "this identifies a row" (R's rownames, obs, id, case_no, ...).
_ID_NAME = re.compile(r"(^|[^a-z])(id|ids|rownames|index|obs|case|row|serial|no|number|key)([^a-z]|$)", re.I)


def _to_polars(df: pd.DataFrame) -> pl.DataFrame:
    # Object columns hold str or None after sourcing.normalize; cast explicitly so
    # polars never guesses a type from the first rows.
    data = {}
    for name, col in df.items():
        if pd.api.types.is_numeric_dtype(col):
            data[name] = pl.Series(name, col.to_numpy(), nan_to_null=True)
        else:
            try:  # Arrow converts str/None/NaN columns in C; mixed objects take the slow path
                data[name] = pl.Series(name, pa.array(col, type=pa.string(), from_pandas=True))
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                data[name] = pl.Series(name, [None if v is None or v != v else str(v) for v in col.tolist()],
                                       dtype=pl.Utf8)
    return pl.DataFrame(data)


def _looks_like_datetime(values: pl.Series) -> bool:
    sample = values.drop_nulls().head(500)
    if sample.len() == 0:
        return False
    # Require a date-shaped string so that plain words or numbers never qualify.
    shaped = sample.str.contains(r"^\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?([+-]\d{2}:?\d{2}|Z)?$")
    if shaped.mean() < DATETIME_PARSE_SHARE:
        return False
    parsed = sample.str.to_datetime(strict=False, time_zone="UTC") if sample.str.contains("[+-]\\d{2}:?\\d{2}$|Z$").any() \
        else sample.str.to_datetime(strict=False)
    return parsed.null_count() == 0


def profile_table(df: pd.DataFrame) -> DatasetProfile:
    """Pure: DataFrame in, DatasetProfile out."""
    frame = _to_polars(df)
    n = frame.height
    if frame.width == 0:
        return DatasetProfile(n_rows=n, columns=())
    schema = frame.schema  # built once: polars rebuilds it on every attribute access
    numeric = {c for c, t in schema.items() if t.is_numeric()}
    exprs = []
    for c in frame.columns:
        col = pl.col(c)
        # The most frequent value's count: run lengths of the sorted values for floats
        # (mostly distinct, where hashing is slow), hashed counts for everything else.
        top = (col.drop_nulls().sort().rle().struct.field("len").max() if schema[c].is_float()
               else col.drop_nulls().value_counts(name=f"{c}\x00n").struct.field(f"{c}\x00n").max())
        exprs += [col.null_count().alias(f"{c}\x00nmiss"), col.n_unique().alias(f"{c}\x00nuniq_with_null"),
                  top.alias(f"{c}\x00top")]
        if c in numeric:
            # min/max keep the column's dtype: a cast to Float64 would round int64 above 2**53
            exprs += [col.min().alias(f"{c}\x00min"), col.max().alias(f"{c}\x00max"),
                      col.mean().alias(f"{c}\x00mean"), col.std().alias(f"{c}\x00std")]
            if schema[c].is_float():
                exprs += [(col.drop_nulls() % 1 == 0).all().alias(f"{c}\x00whole")]
        else:
            exprs += [col.str.len_chars().mean().alias(f"{c}\x00len")]
    stats = frame.select(exprs).row(0, named=True) if n else {}
    columns = []
    for c in frame.columns:
        s = frame.get_column(c)
        n_missing = int(stats.get(f"{c}\x00nmiss", 0) or 0)
        n_unique = int(stats.get(f"{c}\x00nuniq_with_null", 0) or 0) - (1 if n_missing else 0)
        non_missing = n - n_missing
        top_share = 0.0
        if non_missing:
            top_share = float(stats[f"{c}\x00top"]) / non_missing
        fields: dict = dict(name=c, dtype=str(df[c].dtype), n_missing=n_missing, n_unique=n_unique, top_share=top_share)
        distinct_share = n_unique / non_missing if non_missing else 0.0
        if c in numeric:
            # Whole numbers with a missing value arrive as floats (an R integer column with NA read by pandas):
            # a 0/1 outcome with three NAs is still a 0/1 outcome. A float column with no missing value keeps
            # its dtype's word: its author wrote it as a measurement.
            is_int = s.dtype.is_integer() or bool(n_missing and stats.get(f"{c}\x00whole"))
            lo, hi = stats.get(f"{c}\x00min"), stats.get(f"{c}\x00max")
            if lo is not None:
                lo, hi = (int(lo), int(hi)) if is_int else (float(lo), float(hi))
            fields.update(is_integer=is_int, min=lo, max=hi, mean=stats.get(f"{c}\x00mean"),
                          std=stats.get(f"{c}\x00std"))
            if n_unique < 2:
                kind = "constant"
            elif is_int and n_unique >= 20 and distinct_share >= ID_UNIQUE_SHARE and (
                _is_sequence_like(s) or _ID_NAME.search(c)
            ):
                kind = "id"
            else:
                kind = "numerical"
        else:
            if n_unique < 2:
                kind = "constant"
            elif _looks_like_datetime(s):
                kind = "datetime"
            elif distinct_share >= ID_UNIQUE_SHARE and n_unique >= 20:
                kind = "text" if (stats.get(f"{c}\x00len") or 0) >= TEXT_MEAN_LENGTH else "id"
            elif (stats.get(f"{c}\x00len") or 0) >= TEXT_MEAN_LENGTH and distinct_share > 0.5:
                kind = "text"
            else:
                kind = "categorical"
            if n_unique <= MAX_RECORDED_CATEGORIES:
                fields["categories"] = tuple(sorted(s.drop_nulls().unique().to_list()))
        columns.append(ColumnProfile(kind=kind, **fields))
    return DatasetProfile(n_rows=n, columns=tuple(columns))


def _is_sequence_like(s: pl.Series) -> bool:
    """Integers that are (nearly) a permutation of a contiguous range, e.g. 1..n or 1001..1500."""
    v = s.drop_nulls()
    span = int(v.max()) - int(v.min()) + 1
    return span <= 1.1 * v.n_unique()
