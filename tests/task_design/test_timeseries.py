"""The time-series designer finds a time column, entities, frequency and a numeric target, or says why not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.ts_reference import check_standard_format, parse_time, parse_times, round_trips
from pipeline.core.records import DatasetRejected, TimeSeriesSpec
from pipeline.core.seeding import rng_for
from sourcing.builtin import TS_EVERY, stratified_order
from sourcing.normalize import normalize_table
from task_design.profile import profile_table
from task_design.timeseries import NoTimeColumn, design_ts, infer_frequency, time_text, ts_index_text
from tests.factories import build_record


def _design(table: pd.DataFrame, seed: int = 0, **record) -> TimeSeriesSpec:
    table = normalize_table(table)
    rec = build_record(kind_hint="time_series", **record)
    return design_ts(rec, profile_table(table), table, rng_for(seed, rec.ref, "design"))


def _monthly(n: int = 48, **extra) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    dates = pd.date_range("2001-01-01", periods=n, freq="MS").strftime("%Y-%m-%d")
    return pd.DataFrame({"date": dates, "sales": 100 + np.arange(n) + rng.normal(0, 5, n), **extra})


def test_monthly_text_dates():
    spec = _design(_monthly())
    assert (spec.time_column, spec.time_format, spec.time_source) == ("date", "%Y-%m-%d", "text")
    assert spec.frequency == "MS" and spec.season_length == 12 and spec.target == ("sales",)
    assert spec.task_dir.endswith("_ts") and spec.entity_columns == ()


def test_r_ts_index_becomes_year_month_text():
    time = 1949 + np.arange(30) / 12
    table = pd.DataFrame({"time": time, "value": np.arange(30) * 1.5 + np.sin(np.arange(30))})
    spec = _design(table)
    assert (spec.time_source, spec.ts_index_frequency, spec.time_format) == ("ts_index", 12, "%Y-%m")
    assert ts_index_text(table["time"], 12).tolist()[:3] == ["1949-01", "1949-02", "1949-03"]
    quarters = ts_index_text(pd.Series(1960 + np.arange(5) / 4), 4).tolist()
    assert quarters == ["1960-01", "1960-04", "1960-07", "1960-10", "1961-01"]


def test_integer_years_and_panel_entities():
    years = np.tile(np.arange(1950, 1975), 3)
    firms = np.repeat(["a", "b", "c"], 25)
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"firm": firms, "year": years, "inv": rng.normal(10, 3, 75), "cap": rng.normal(5, 1, 75)})
    spec = _design(table, target_hint="inv")
    assert (spec.time_column, spec.time_format, spec.entity_columns) == ("year", "%Y", ("firm",))
    assert spec.frequency == "YS" and spec.identifiers == ("year", "firm")
    assert spec.selected_features == ("cap",) and spec.model_type == "SARIMAX"


def test_year_quarter_strings():
    quarters = [f"{1990 + i // 4} Q{i % 4 + 1}" for i in range(40)]
    table = pd.DataFrame({"Date": quarters, "Takings": np.linspace(1, 9, 40) ** 2})
    spec = _design(table)
    # written as DARE-bench writes periods (the quarter's first day), in a format strptime and pandas read
    assert (spec.time_format, spec.time_source, spec.frequency) == ("%Y-%m-%d", "quarter", "QS")
    text = time_text(table, spec.model_dump())
    assert text.tolist()[:5] == ["1990-01-01", "1990-04-01", "1990-07-01", "1990-10-01", "1991-01-01"]
    assert check_standard_format(text, spec.time_format) is None
    assert check_standard_format(pd.Series(quarters), "%Y Q%q") is not None  # what we used to write
    assert parse_time("1998 Q3", "%Y Q%q").month == 7  # a source's quarter labels are still read


def test_dst_shifted_offsets_round_trip_and_order():
    # New York, around the 2020-11-01 switch: -04:00 then -05:00, written as the source wrote them.
    texts = pd.Series([f"2020-10-{d:02d} 00:00:00-04:00" for d in range(14, 32)] +
                      [f"2020-11-{d:02d} 00:00:00-05:00" for d in range(1, 15)])
    fmt = "%Y-%m-%d %H:%M:%S%z"  # written +HH:MM; strptime and pandas read it with %z
    assert all(round_trips(t, fmt) for t in texts) and check_standard_format(texts, fmt) is None
    assert not round_trips("2020-10-14 00:00:00-0400", fmt)  # the colon is part of the format
    parsed = parse_times(texts, fmt)
    assert parsed.is_monotonic_increasing and str(parsed.dt.tz) == "UTC"
    spec = _design(pd.DataFrame({"stamp": texts, "load": np.sin(np.arange(len(texts))) + 3}))
    assert spec.time_format == fmt and spec.frequency == "D"
    assert not spec.is_resampled  # no calendar grid across offsets


def test_duplicate_timestamps_make_an_event_series_that_is_resampled():
    rng = np.random.default_rng(3)
    days = np.sort(rng.choice(pd.date_range("2010-01-01", periods=900, freq="D"), 300))
    table = pd.DataFrame({"when": pd.Series(days).dt.strftime("%Y-%m-%d"), "count_cases": rng.integers(0, 9, 300)})
    times = parse_times(table["when"], "%Y-%m-%d")
    freq, _, _, duplicated = infer_frequency(times, None)
    assert freq == "irregular"
    spec = _design(table)
    assert spec.is_resampled and spec.resample_rule == "1M"
    assert spec.resample_aggregation == "sum"  # a count: bins add up


def test_levels_are_averaged_when_resampled():
    rng = np.random.default_rng(4)
    days = np.sort(rng.choice(pd.date_range("2010-01-01", periods=900, freq="D"), 300, replace=False))
    table = pd.DataFrame({"date": pd.Series(days).dt.strftime("%Y-%m-%d"), "temperature": rng.normal(20, 5, 300)})
    spec = _design(table)
    assert spec.is_resampled and spec.resample_aggregation == "mean"


def test_non_numeric_target_is_rejected_with_a_reason():
    table = _monthly(status=["up", "down"] * 24)
    with pytest.raises(DatasetRejected, match="target 'status' is not numeric"):
        _design(table, target_hint="status")
    words = pd.DataFrame({"date": _monthly()["date"], "mood": ["good", "bad", "fine"] * 16})
    with pytest.raises(DatasetRejected, match="no numeric target"):
        _design(words)


def test_no_time_axis_is_told_apart():
    with pytest.raises(NoTimeColumn, match="no usable time column"):
        _design(pd.DataFrame({"a": np.arange(40.0), "b": ["x", "y"] * 20}))


def test_too_short_is_rejected():
    with pytest.raises(DatasetRejected, match="too short"):
        _design(_monthly(10))


def test_design_is_deterministic():
    table = _monthly(72, a=np.arange(72.0), b=np.arange(72.0) ** 0.5)
    assert _design(table, seed=5) == _design(table, seed=5)


def test_spec_validation():
    spec = _design(_monthly())
    with pytest.raises(ValueError, match="identifier"):
        TimeSeriesSpec(**{**spec.model_dump(), "target": ("date",)})
    with pytest.raises(ValueError, match="is_resampled"):
        TimeSeriesSpec(**{**spec.model_dump(), "is_resampled": True})


def test_stratified_order_interleaves_series_at_a_fixed_ratio():
    refs = [f"r/{i}" for i in range(60)]
    is_ts = lambda r: int(r.split("/")[1]) % 5 == 0  # noqa: E731  (12 series among 60)
    order = stratified_order(refs, is_ts)
    assert sorted(order) == sorted(refs)
    head = order[: 3 * TS_EVERY]
    assert [is_ts(r) for r in head] == [i % TS_EVERY == TS_EVERY - 1 for i in range(len(head))]
    # Adding a dataset of one kind never reorders the other kind's refs among themselves.
    grown = stratified_order(refs + ["r/1000"], is_ts)  # a new series
    assert [r for r in grown if not is_ts(r)] == [r for r in order if not is_ts(r)]
    assert [r for r in grown if is_ts(r) and r != "r/1000"] == [r for r in order if is_ts(r)]


def test_a_panel_ts_index_beats_the_year_column_beside_it_and_calendar_parts_are_not_targets():
    # txhousing: city x monthly `date` (fractional years), with `year` and `month` spelled out too.
    months = np.arange(36)
    rows = [{"city": city, "year": 2000 + m // 12, "month": m % 12 + 1, "date": 2000 + m / 12,
             "sales": 100 + 10 * k + np.sin(m)} for k, city in enumerate(("a", "b")) for m in months]
    spec = _design(pd.DataFrame(rows))
    assert (spec.time_column, spec.time_source, spec.entity_columns) == ("date", "ts_index", ("city",))
    assert spec.target == ("sales",) and not {"year", "month"} & set(spec.selected_features)
