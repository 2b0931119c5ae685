"""The time-series reference: timestamps as text, resampling and the CF ground truth.

It is self-contained (datetime, pandas) so it can be read next to question_v2 and
rerun: `ground_truth_v2` is what the CF instruction asks for, executed on the
held-out future rows (val_v1 joined with ground_truth_v1 on row_id):

- not resampled: the target at each identifier key of val_v2;
- resampled: per entity, the raw rows binned to `resample_rule` with
  `resample_aggregation` (each bin labelled with its last day and written back in
  `time_format`), empty bins filled backward then forward (`bfill_ffill`), then
  looked up at each key of val_v2.

`time_format` is a pattern that both `datetime.strptime` and `pandas.to_datetime(format=...)`
read (check_standard_format proves it on the data at build time), so an agent can parse the
timestamps with the format it is given. Our writers write a `%z` offset as `+HH:MM` (ISO 8601;
strftime would drop the colon, and both parsers read either form with `%z`), so
`2020-08-20 00:00:00-04:00` round-trips exactly. Quarterly data is written as DARE-bench writes
such periods, the first day of the quarter (`%Y-%m-%d`); `%q` (a quarter digit, as R and tsibble
write `1998 Q1`) and `%:z` (Python 3.12's colon offset) are only *read*: a source's quarter labels
are detected with `%q`, and trees written before this rule still parse.
"""

from __future__ import annotations

import functools

import pandas as pd

# ---- self-contained time keys: begin (copied verbatim into the DSAgentBench evaluator) ----
import re
from datetime import datetime, timezone

COLON_OFFSET = "%:z"  # read only: Python 3.12's spelling of `%z` (older trees wrote it)
QUARTER = "%q"  # read only: the quarter digit 1-4 (not strftime's; only with %Y, as in `1998 Q1`)


def parse_time(text: str, fmt: str) -> datetime:
    """`text` read with a task's `time_format`; ValueError when it does not match."""
    if QUARTER in fmt:
        # strptime has no quarter: read the digit, then parse the rest with the quarter's first month.
        pattern = re.escape(fmt).replace(re.escape(QUARTER), "(?P<q>[1-4])").replace(re.escape("%Y"), "(?P<y>\\d{4})")
        m = re.fullmatch(pattern, str(text))
        if m is None:
            raise ValueError(f"{text!r} does not match {fmt!r}")
        return datetime(int(m["y"]), 3 * (int(m["q"]) - 1) + 1, 1)
    # strptime's %z accepts "+HH:MM" since Python 3.7.
    return datetime.strptime(str(text), fmt.replace(COLON_OFFSET, "%z"))


def time_keys(values, fmt: str) -> list[str]:
    """The one rule both scorers (`daregen score` and the DSAgentBench evaluator) read a forecast's
    time column by: each value, surrounding blanks stripped, must parse with the task's `time_format`
    (what the CF question names), and becomes one canonical text per instant (UTC when the pattern
    carries an offset, so `-04:00` and `+00:00` spellings of one instant match). Any other spelling,
    `1990-03-01` where the format is `%Y-%m` included, is a ValueError naming the first such value."""
    out = []
    for value in values:
        t = parse_time(str(value).strip(), fmt)
        out.append((t.astimezone(timezone.utc) if t.tzinfo is not None else t).isoformat())
    return out
# ---- self-contained time keys: end ----


TIME_KEYS_BEGIN = "# ---- self-contained time keys: begin"
TIME_KEYS_END = "# ---- self-contained time keys: end ----"


def time_keys_source() -> str:
    """The text of the self-contained time-keys block (markers excluded), for the evaluator that cannot
    import daregen: it reads a forecast's times exactly as `daregen score` does. (The import is here, not at
    the top: this module is itself embedded in the CF oracle, which has no daregen.)"""
    from pipeline.core.metrics import marked_block

    return marked_block(__file__, TIME_KEYS_BEGIN, TIME_KEYS_END)


OFFSET = "%z"  # written as +HH:MM by format_time
QUARTER_START = "%Y-%m-%d"  # how a quarter is written: its first day, as DARE-bench writes periods
# The rule as all_metadata.json records it (DARE-bench's '1M') -> pandas' alias today, which is what
# the CF instruction tells the agent (pandas 3 rejects '1M', '1Q' and '1Y'; check_resample_alias
# proves the alias against the locked pandas at build time).
# Period-end aliases: a bin is labelled with its last day, as in DARE-bench's example.
RESAMPLE_ALIASES = {"1M": "ME", "1Q": "QE", "1Y": "YE"}
RULE_WORDS = {"1M": "calendar month", "1Q": "calendar quarter", "1Y": "calendar year"}


def _offset_text(dt: datetime) -> str:
    off = dt.utcoffset()
    if off is None:
        raise ValueError(f"{dt} has no timezone offset for %:z")
    minutes = int(off.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def format_time(dt: datetime, fmt: str) -> str:
    if QUARTER in fmt:
        return dt.strftime(fmt.replace(QUARTER, str((dt.month - 1) // 3 + 1)))
    fmt = fmt.replace(COLON_OFFSET, OFFSET)
    if OFFSET in fmt:
        head, *rest = fmt.split(OFFSET)
        return _offset_text(dt).join(dt.strftime(part) for part in [head, *rest])
    return dt.strftime(fmt)


def round_trips(text: str, fmt: str) -> bool:
    try:
        return _round_trips(text, fmt)
    except TypeError:  # an unhashable value: not a time text, and no cache entry either
        return False


# Memoised: a pure function of its two arguments, asked again for every repeated value of a panel's time
# column and for the same column by each of the designers' time checks (a build asks it millions of times).
@functools.lru_cache(maxsize=1 << 17)
def _round_trips(text: str, fmt: str) -> bool:
    try:
        return format_time(parse_time(text, fmt), fmt) == str(text)
    except (ValueError, TypeError):
        return False


def check_resample_alias(rule: str) -> str | None:
    """Why the pandas alias the instruction gives for `rule` is not usable with the installed pandas, or None."""
    alias = RESAMPLE_ALIASES.get(rule)
    if alias is None:
        return f"resample_rule {rule!r} has no pandas alias (known: {sorted(RESAMPLE_ALIASES)})"
    try:
        pd.Series([1.0, 2.0], index=pd.to_datetime(["2000-01-01", "2000-02-01"])).resample(alias).mean()
    except (ValueError, TypeError) as exc:
        return f"pandas {pd.__version__} rejects the resample alias {alias!r}: {str(exc).splitlines()[0]}"
    return None


def check_standard_format(texts: pd.Series, fmt: str) -> str | None:
    """Why `fmt` is not a format an agent can use on `texts`, or None: every value must parse with
    `datetime.strptime(text, fmt)` and `pandas.to_datetime(texts, format=fmt)` (the locked
    versions), to the same instants."""
    values = texts.dropna().astype(str)
    if not len(values):
        return None
    try:
        ours = [datetime.strptime(t, fmt) for t in values]
    except ValueError as exc:
        return f"time_format {fmt!r} does not parse with datetime.strptime: {exc}"
    aware = any(v.tzinfo is not None for v in ours)
    try:
        theirs = pd.to_datetime(values, format=fmt, utc=aware)
    except (ValueError, TypeError) as exc:
        return f"time_format {fmt!r} does not parse with pandas.to_datetime: {str(exc).splitlines()[0]}"
    if list(pd.to_datetime(ours, utc=aware)) != list(theirs):
        return f"time_format {fmt!r} gives different times under datetime.strptime and pandas.to_datetime"
    return None


def parse_times(texts: pd.Series, fmt: str) -> pd.Series:
    """Timestamps of `texts` (UTC when the pattern carries an offset, so DST shifts still order)."""
    texts = texts.astype(str)
    # Each distinct text parsed once (in order of first appearance, so a bad one fails as before).
    parsed = {t: parse_time(t, fmt) for t in dict.fromkeys(texts)}
    values = [parsed[t] for t in texts]
    aware = any(v.tzinfo is not None for v in values)
    return pd.Series(pd.to_datetime(values, utc=aware), index=texts.index)


def joined_keys(frame: pd.DataFrame) -> pd.Series:
    """One text key per row: the columns' values as text joined by \\x1f (a series' entity key). Column by
    column, not row by row: `agg("\\x1f".join, axis=1)` spent over a minute on a few thousand rows tried
    as a hundred candidate keys (AER/PSID7682)."""
    text = frame.astype(str)
    keys = text.iloc[:, 0]
    for c in range(1, text.shape[1]):
        keys = keys + "\x1f" + text.iloc[:, c]
    return keys


def format_times(times: pd.Series | pd.DatetimeIndex, fmt: str) -> list[str]:
    return [format_time(pd.Timestamp(t).to_pydatetime(), fmt) for t in times]


def resample_entity(times: pd.Series, values: pd.Series, rule: str, aggregation: str) -> pd.Series:
    """One entity's raw (time, value) rows on the fixed grid, gaps filled backward then forward."""
    series = pd.Series(values.astype(float).to_numpy(), index=pd.DatetimeIndex(times.to_numpy())).sort_index()
    binned = series.resample(RESAMPLE_ALIASES[rule])
    # min_count=1: an empty bin is a gap to fill, not a sum of 0.
    grid = binned.sum(min_count=1) if aggregation == "sum" else binned.mean()
    return grid.bfill().ffill()


def resampled_frame(rows: pd.DataFrame, identifiers: list[str], target: str, time_column: str, time_format: str,
                    rule: str, aggregation: str) -> pd.DataFrame:
    """identifiers + target on the grid, per entity (entities as text, in sorted order)."""
    entities = [c for c in identifiers if c != time_column]
    rows = rows.assign(**{c: rows[c].astype(str) for c in entities})
    parts = []
    groups = rows.groupby(entities, sort=True) if entities else [((), rows)]
    for key, part in groups:
        grid = resample_entity(parse_times(part[time_column], time_format), part[target], rule, aggregation)
        out = pd.DataFrame({time_column: format_times(grid.index, time_format), target: grid.to_numpy()})
        key = key if isinstance(key, tuple) else (key,)
        for col, value in zip(entities, key):
            out[col] = value
        parts.append(out[identifiers + [target]])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=identifiers + [target])


def ground_truth_v2(question: dict, future: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """The CF ground truth: `keys` (val_v2, in its order) plus the target, from the future rows."""
    target = question["target"][0]
    identifiers = list(keys.columns)
    time_column = question["time_column"]
    as_text = {c: future[c].astype(str) for c in identifiers}
    future = future.assign(**as_text).dropna(subset=[target])
    if question.get("is_resampled"):
        grid = resampled_frame(future, identifiers, target, time_column, question["time_format"],
                               question["resample_rule"], question["resample_aggregation"])
    else:
        grid = future[identifiers + [target]]
    keys_text = keys.assign(**{c: keys[c].astype(str) for c in identifiers})
    out = keys_text.merge(grid, on=identifiers, how="left", validate="one_to_one")
    if out[target].isna().any():
        missing = out.loc[out[target].isna(), identifiers].head(3).to_dict("records")
        raise ValueError(f"val_v2 keys without a ground-truth value, e.g. {missing}")
    return out
