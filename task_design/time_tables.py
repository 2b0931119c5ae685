"""Tables with time in them, which iid regression or classification would misread.

Three structures make a table's rows something other than independent draws:

- a regular time index (one row per week, month or year, or per unit and year): the rows
  are a series to forecast, so the table goes to the time-series designer
  (regular_time_index; pipeline.steps routes it) or is skipped, and a series whose index
  the table lost (quantreg/MelTemp's frequency-365 `time`, fpp2/melsyd, Ecdat/MoneyUS, whose
  help pages call them time series) is skipped with that reason (time_table_problem); a time
  written over a year and a month or quarter column arrives here joined into one `date`
  (sourcing.split_time), so it counts as a regular index;
- a duration with a status beside it (mosaicData/HELPrct's `dayslink` with `linkstatus`,
  survival/hoel's `days` with an `outcome` that has a `censor` level, survival/pbcseq's
  `futime` with a 0/1/2 `status`): a censored survival outcome, which neither column
  predicts alone (survival_roles gives them the roles task_design.roles gives the plain
  two-level pairs, so the designers' survival rule covers them);
- repeated measures (several rows per subject over visits: pbcseq's `id` and `day`,
  survival/bladder1's `id` and `enum`): a column constant within every subject is an
  attribute of the subject copied onto each visit (bladder1's `recur`, pbcseq's end-point
  `status`), and a status column there describes a visit's interval; neither is an iid
  target (repeated_measures_exclusions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from pipeline.core.records import DatasetProfile, DatasetRecord, Rejection
from pipeline.core.ts_reference import parse_times
from sourcing.rdoc import resolve_column
from task_design.roles import (CENSOR_WORDS, DURATION_IN_NAME, DURATION_UNTIL_DOC, STATUS_IN_NAME, SUBJECT_NAME,
                               VISIT_NAME, ColumnRole)
from task_design.evidence import rule
from task_design.stated_target import declared_tabular, stated_target
from task_design.targets import MAX_STATED_CLASSES
from task_design.timeseries import (WIDE_MONTHS, NoTimeColumn, find_entities, find_time_column, infer_frequency,
                                     time_text, wide_month_problem)

# The object a help page documents is a series: "Time series of frequency 365", "Multiple time
# series of class mts", "A time series containing", "quarterly observations from 1954-01".
_SERIES_DOC = re.compile(r"\btime[- ]series\b(?![- ]cross)|\bof class \W?m?ts\b|\bfrequency \d+\b|"
                         r"\b(monthly|quarterly|weekly|annual|yearly) (observations|data|series)\b", re.I)
# Ecdat's pages open cross-sections with "A time series containing" too (RetSchool: 5,225 young men),
# and say what one row is: "observation : individuals".
_CROSS_SECTION_UNIT = re.compile(r"\bobservations?\s*:\s*(individuals|households|persons|people|students|workers|"
                                 r"families|respondents|patients|children|women|men)\b", re.I)
_FREQUENCY_WORDS = {"YS": "yearly", "QS": "quarterly", "MS": "monthly", "W": "weekly", "D": "daily", "h": "hourly"}

MAX_STATUS_LEVELS = 5
_VITAL_LEVEL = rule("survival.vital-status-levels")
MIN_ROWS_PER_SUBJECT = 1.5  # on average, for the table to be repeated measures


def regular_time_index(table: pd.DataFrame) -> tuple[str, str] | None:
    """(time column, frequency word) when the rows are a regular series or a panel of them: a time
    column the time-series designer reads, at a weekly, monthly, quarterly, yearly (...) spacing."""
    try:
        column, fmt, source, freq = find_time_column(table)
    except NoTimeColumn:
        return None
    text = time_text(table, {"time_column": column, "time_source": source, "ts_index_frequency": freq})
    rows = text.notna()
    if rows.sum() < 3:
        return None
    times = parse_times(text[rows], fmt)
    entities = find_entities(table[rows], column, times)
    frequency, _, _, _ = infer_frequency(times, table.loc[rows, list(entities)] if entities else None)
    if frequency == "irregular":
        return None
    return column, _FREQUENCY_WORDS.get(frequency, frequency)


@dataclass(frozen=True)
class CardLabel:
    """A dated table's label as its card states it: the column, the rule that read it (a registry id, or
    "source_hint"), and the time column of the rows' regular index, whose order splits them."""

    column: str
    rule_id: str
    time_column: str


def _class_like(profile: DatasetProfile, column: str) -> bool:
    col = profile.column(column)
    return col.kind == "categorical" or (col.kind == "numerical" and col.is_integer
                                         and col.n_unique <= MAX_STATED_CLASSES)


def card_label(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame) -> CardLabel | None:
    """The label a dated table's card states, when that makes the table a tabular task rather than a series
    (issue 47, item 6): the card states a class label (a Hugging Face col_mapping, a label sentence, a Task
    section, any `stated.*` statement, or the source's hint), or it declares a tabular task category and
    states its target (`declared.task-tabular`). The Seattle weather card says "The `weather` column is the
    label": a forecast of `wind` answers a question it never asked. None for a table with no time in it, or
    whose rows are no regular series, or whose card states no label or a quantity to forecast."""
    names = profile.names
    classes = {c.name: c.n_unique for c in profile.columns if _class_like(profile, c.name)}
    stated = stated_target(record, names, classes)
    hinted = resolve_column(record.target_hint, names) if record.target_hint else None
    column, rule_id = (stated.column, stated.rule_id) if stated is not None else (hinted, "source_hint")
    if column is None:
        return None
    tabular = declared_tabular(record)
    if not (_class_like(profile, column) or tabular is not None):
        return None
    index = regular_time_index(table)
    return None if index is None else CardLabel(column, rule_id, index[0])


def time_table_problem(record: DatasetRecord, table: pd.DataFrame) -> Rejection | None:
    """Why the table's rows are a time series, not iid rows, or None."""
    if (wide := wide_month_problem(table)) is not None:
        return Rejection(WIDE_MONTHS, wide)
    if (index := regular_time_index(table)) is not None:
        return Rejection("ts_unforecastable_index", f"a {index[1]} time series indexed by {index[0]!r}: its rows are "
                                                    f"not independent, and the time-series designer could not set a "
                                                    f"forecast")
    about = f"{record.about_file} {record.description.split(chr(10))[0]}"
    if (m := _SERIES_DOC.search(about)) is not None and not _CROSS_SECTION_UNIT.search(record.description):
        return Rejection("ts_no_time_index", f"a time series (its documentation says {m.group(0)!r}) whose time index "
                                             f"the table lacks or the time-series designer cannot read: its rows are "
                                             f"not independent")
    return None


# ------------------------------------------------------------------ survival


def _name_root(pattern: re.Pattern, name: str) -> str | None:
    m = pattern.match(name)
    return None if m is None else (m.group("a") + m.group("b")).strip("._").lower()


# How a column reads as a censoring status, strongest first: its own entry documents censoring, one of its
# levels is a censored one, or it is a two-level column named as a status (the weakest: it pairs with a
# duration by name only, never as the lone status beside a lone duration).
StatusKind = Literal["documented_censoring", "censored_level", "vital_status", "two_level_status",
                     "beside_censored_duration"]


@dataclass(frozen=True)
class StatusEvidence:
    """Why a column is a censoring status: its kind, which decides how it pairs, and the words a user reads."""

    kind: StatusKind
    text: str


def _status_evidence(col: str, s: pd.Series, record: DatasetRecord) -> StatusEvidence | None:
    levels = s.dropna().unique()
    if not 2 <= len(levels) <= MAX_STATUS_LEVELS:
        return None
    doc = record.column_descriptions.get(col, "")
    if CENSOR_WORDS.search(doc):
        return StatusEvidence("documented_censoring",
                              f"documented as censoring ({CENSOR_WORDS.search(doc).group(0)!r})")
    if any(CENSOR_WORDS.fullmatch(str(v).strip()) for v in levels):
        return StatusEvidence("censored_level", "a status with a censored level")
    if len(levels) == 2 and all(_VITAL_LEVEL.fires(str(v)) for v in levels):
        return StatusEvidence("vital_status", f"a vital status ({_VITAL_LEVEL.id}: {sorted(map(str, levels))})")
    if STATUS_IN_NAME.match(col) and len(levels) == 2:
        return StatusEvidence("two_level_status", f"a two-level status {col!r}")
    return None


def survival_roles(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
                   roles: dict[str, ColumnRole]) -> dict[str, ColumnRole]:
    """Censored (duration, status) pairs that task_design.roles leaves as outcomes: a status named
    after its duration (`linkstatus` and `dayslink`), one documented or levelled as censoring
    (pbcseq's 0/1/2 `status`, hoel's `outcome` with a `censor` level), or a lone status beside a
    lone documented duration. A status documented as censoring is one even without its duration
    (bladder1's interval `status`)."""
    open_cols = [c.name for c in profile.columns if roles[c.name].role == "outcome"]
    status = {c: why for c in open_cols if (why := _status_evidence(c, table[c], record))}
    durations = [c for c in open_cols if c not in status and profile.column(c).kind == "numerical"
                 and profile.column(c).n_unique > 5 and bool((table[c].dropna() >= 0).all())
                 and (DURATION_IN_NAME.match(c) or DURATION_UNTIL_DOC.search(record.column_descriptions.get(c, "")))]
    # MASS/Melanoma's `status` (1 died of melanoma, 2 alive, 3 died of other causes) says nothing of
    # censoring, but its `time` is "survival time in days, possibly censored": a status-named column
    # beside a duration documented as censored is that duration's status.
    if any(CENSOR_WORDS.search(record.column_descriptions.get(d, "")) for d in durations):
        status.update({c: StatusEvidence("beside_censored_duration", "beside a duration documented as censored")
                       for c in open_cols
                       if c not in status and c not in durations and STATUS_IN_NAME.match(c)
                       and 2 <= table[c].nunique() <= MAX_STATUS_LEVELS})
    out: dict[str, ColumnRole] = {}
    for s_name, why in status.items():
        root = _name_root(STATUS_IN_NAME, s_name)
        # `status` pairs with `futime` (both roots empty) before a visit's `day`.
        match = sorted((d for d in durations if d not in out and root is not None and _name_root(DURATION_IN_NAME, d) == root),
                       key=lambda d: bool(VISIT_NAME.match(d)))
        if not match and len(status) == 1 and len(durations) == 1 and why.kind not in ("two_level_status",
                                                                                        "vital_status"):
            match = durations
        named = [d for d in durations if d not in out and DURATION_IN_NAME.match(d)]
        if not match and why.kind == "vital_status" and len(named) == 1:
            # A vital status pairs with the one time named as a duration beside it, whatever other statuses the
            # table has (SEER's `Survival Months` beside `Status`, `Estrogen Status`, `Progesterone Status`);
            # never with an age read as a duration by its entry (mosaicData/Whickham's `age`, "age (in years)
            # at the time of the first survey", beside `outcome`, Alive or Dead 20 years later).
            match = named
        if match:
            d = match[0]
            out[s_name] = ColumnRole("censoring_status", f"the censoring status of the duration {d!r} ({why.text})", d)
            out[d] = ColumnRole("censored_duration", f"a duration censored by the status {s_name!r}", s_name)
        elif why.kind == "documented_censoring":
            out[s_name] = ColumnRole("censoring_status", f"a censoring status ({why.text})")
    return out


# ------------------------------------------------------------------ repeated measures


def repeated_measures(profile: DatasetProfile, table: pd.DataFrame, roles: dict[str, ColumnRole]
                      ) -> tuple[str, str] | None:
    """(subject column, visit column) when several rows per subject follow it over visits."""
    n = len(table)
    visits = [c.name for c in profile.columns if VISIT_NAME.match(c.name) and c.kind == "numerical"]
    for col in profile.columns:
        if roles[col.name].role != "identifier" or col.n_missing or not SUBJECT_NAME.search(col.name):
            continue
        if not 2 <= col.n_unique <= n / MIN_ROWS_PER_SUBJECT:
            continue
        for v in visits:
            if v != col.name and table.groupby(col.name, sort=False)[v].nunique().max() > 1:
                return col.name, v
    return None


def repeated_measures_exclusions(profile: DatasetProfile, table: pd.DataFrame, roles: dict[str, ColumnRole]
                                 ) -> dict[str, str]:
    """Columns of a repeated-measures table that are no iid target: {column: why}."""
    found = repeated_measures(profile, table, roles)
    if found is None:
        return {}
    subject, visit = found
    groups = table.groupby(subject, sort=False)
    rows = len(table) / table[subject].nunique()
    out: dict[str, str] = {}
    for col in profile.columns:
        c = col.name
        if c == subject or roles[c].role != "outcome":
            continue
        if VISIT_NAME.match(c) and col.kind == "numerical":
            out[c] = f"places a visit of repeated measures ({subject!r} over {visit!r}) in time, not an outcome"
        elif bool((groups[c].nunique(dropna=True) <= 1).all()):
            out[c] = (f"an attribute of the subject {subject!r}, the same on each of its visits ({rows:.1f} rows "
                      f"per subject, ordered by {visit!r}): rows split at random would share it")
        elif STATUS_IN_NAME.match(c) and col.n_unique <= MAX_STATUS_LEVELS:
            out[c] = f"a visit-level status of repeated measures ({subject!r} over {visit!r}), not an iid outcome"
    return out
