"""design() either returns a valid TaskSpec whose features are usable, leak-free and inside their
expected ranges, or rejects the dataset with a one-line reason; the same seed always gives the same spec."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.if_workflow import filter_by_expected_ranges
from pipeline.core.jsonio import dumps
from pipeline.core.records import MODELS_BY_PROBLEM, DatasetRejected, TaskSpec
from pipeline.core.seeding import rng_for
from task_design.config import DesignConfig
from task_design.heuristic import IMPUTERS, design, spec_from_choices
from task_design.profile import profile_table
from tests.factories import UNIT_CONFIG, build_record, build_spec, build_table, reading

SEEDS = range(4)


def _features(spec: TaskSpec) -> set[str]:
    return set(spec.related_features) | set(spec.not_filtered_related_features) | set(spec.selected_features)


def _assert_well_formed(spec: TaskSpec, table: pd.DataFrame) -> None:
    """The invariants every designed spec must hold against its table."""
    target = spec.target[0]
    assert target in table.columns and target in spec.target_candidates
    assert target not in _features(spec)
    assert set(spec.selected_features) <= set(spec.not_filtered_related_features) <= set(spec.related_features)
    assert set(spec.expected_ranges) == set(spec.not_filtered_related_features)
    assert spec.model_type in MODELS_BY_PROBLEM[spec.problem_type]
    assert spec.imputer_type in IMPUTERS
    assert list(spec.numerical_features) + list(spec.categorical_features) == [
        f for f in spec.selected_features if f in spec.numerical_features
    ] + [f for f in spec.selected_features if f in spec.categorical_features]
    assert set(spec.column_type_inference) == set(table.columns)
    for f in spec.numerical_features:
        assert pd.api.types.is_numeric_dtype(table[f])
    for f in spec.categorical_features:
        assert not pd.api.types.is_numeric_dtype(table[f])
    assert not _features(spec) & set(spec.excluded_features)
    assert not _features(spec) & set(spec.v2_dropped_columns)
    dumps(spec.model_dump(mode="json"))  # all_metadata.json must be writable


# ---------------------------------------------------------------- happy path


@pytest.mark.parametrize("seed", SEEDS)
def test_spec_is_well_formed(seed: int) -> None:
    table = build_table()
    _assert_well_formed(build_spec(table, seed=seed), table)


@pytest.mark.parametrize("seed", SEEDS)
def test_expected_ranges_cover_every_value_of_the_feature(seed: int) -> None:
    extremes = lambda n: np.r_[-1e-300, 5e-324, np.linspace(0.1, 1e30, n - 2)]  # noqa: E731
    table = build_table(sparse=lambda n: np.where(np.arange(n) % 3 == 0, np.nan, extremes(n)))
    spec = build_spec(table, seed=seed)
    for f, allowed in spec.expected_ranges.items():
        values = table[f].dropna()
        if spec.column_type_inference[f] == "numerical":
            assert allowed[0] == values.min() and allowed[1] == values.max()
        else:
            assert set(values) <= set(allowed)
    # so the IF filter keeps every clean row
    kept = filter_by_expected_ranges(table, spec.expected_ranges, spec.column_type_inference)
    assert len(kept) == len(table)


def test_model_types_come_from_the_dare_lists_for_both_problem_types() -> None:
    # The target's type follows from the best-ranked outcome (the label, or a numeric `price` last).
    table = build_table()
    priced = build_table(label=None, price=lambda n: np.arange(n) * 1.5 + np.random.default_rng(1).normal(size=n))
    specs = [build_spec(t, seed=seed) for seed in range(3) for t in (table, priced)]
    seen = {spec.problem_type for spec in specs}
    assert seen == {"classification", "regression"}
    for spec in specs:
        assert spec.model_type in MODELS_BY_PROBLEM[spec.problem_type]


def test_target_hint_is_used_when_it_qualifies() -> None:
    table = build_table(x=None, visits=None)  # label and colour are the only (class) target candidates
    for seed in SEEDS:
        assert build_spec(table, seed=seed, target_hint="label").target == ("label",)


# ---------------------------------------------------------------- determinism


def test_same_seed_gives_an_identical_spec() -> None:
    table = build_table()
    assert build_spec(table, seed=11).model_dump() == build_spec(table, seed=11).model_dump()


def test_a_spec_does_not_depend_on_other_datasets_designed_before_it() -> None:
    table_a, table_b = build_table(seed=1), build_table(seed=2, n=150)
    alone = build_spec(table_a, ref="local/a", seed=5)
    build_spec(table_b, ref="local/b", seed=5)
    after_b = build_spec(table_a, ref="local/a", seed=5)
    assert after_b.model_dump() == alone.model_dump()


def test_design_does_not_mutate_its_inputs() -> None:
    table = build_table()
    before = table.copy(deep=True)
    build_spec(table, seed=3)
    pd.testing.assert_frame_equal(table, before)


# ---------------------------------------------------------------- adversarial: rejections


@pytest.mark.parametrize("n", [1, 29])
def test_too_few_rows_is_rejected(n: int) -> None:
    table = build_table().head(n)
    with pytest.raises(DatasetRejected, match="too few rows"):
        build_spec(table)


def test_too_few_rows_with_a_known_target_is_rejected() -> None:
    table = build_table(n=60, x=None, visits=None, sparse=None,
                        label=lambda n: ["yes", "no"] * 10 + [None] * (n - 20))
    with pytest.raises(DatasetRejected) as info:
        build_spec(table)
    assert "target" in info.value.reason or "rows" in info.value.reason


def test_single_class_only_target_is_rejected_as_degenerate() -> None:
    n = 200
    table = build_table(n=n, x=None, visits=None, colour=None, sparse=None, label=["active"] * n,
                        almost_zero=lambda n: np.r_[np.zeros(n - 5), np.arange(1.5, 6.5)])
    with pytest.raises(DatasetRejected) as info:
        build_spec(table)
    assert "degenerate" in info.value.reason and "target" in info.value.reason


def test_single_class_column_with_no_other_target_is_rejected_with_a_target_reason() -> None:
    n = 200
    rng = np.random.default_rng(4)
    table = build_table(n=n, x=None, visits=None, colour=None, sparse=None, label=["active"] * n,
                        # neither can be a target: too few distinct floats, too many classes
                        dose=lambda n: rng.choice([0.5, 1.5, 2.5, 3.5, 4.5], size=n),
                        site=lambda n: [f"site {i % 25}" for i in range(n)])
    with pytest.raises(DatasetRejected) as info:
        build_spec(table)
    assert "target" in info.value.reason


def test_no_usable_feature_is_rejected() -> None:
    n = 200
    table = build_table(n=n, x=None, visits=None, colour=None, sparse=None, label=None,
                        serial=lambda n: np.arange(1, n + 1), empty=[None] * n)
    with pytest.raises(DatasetRejected, match="usable features"):
        build_spec(table)


# ---------------------------------------------------------------- adversarial: exclusions


@pytest.mark.parametrize("seed", SEEDS)
def test_all_missing_column_is_never_a_feature(seed: int) -> None:
    table = build_table(nothing=lambda n: [None] * n, no_numbers=lambda n: [np.nan] * n)
    spec = build_spec(table, seed=seed)
    for col in ("nothing", "no_numbers"):
        assert col not in _features(spec) and spec.target != (col,)
        assert "missing" in spec.excluded_features[col]


def test_mostly_missing_column_is_never_a_feature() -> None:
    table = build_table(holes=lambda n: np.where(np.arange(n) % 10 < 7, np.nan, np.arange(n, dtype=float)))
    for seed in range(2):
        spec = build_spec(table, seed=seed)
        assert "holes" not in _features(spec)
        assert "missing" in spec.excluded_features["holes"]


@pytest.mark.parametrize("seed", SEEDS)
def test_single_class_column_is_never_the_target(seed: int) -> None:
    table = build_table(status=lambda n: ["active"] * n,
                        nearly=lambda n: ["a"] * (n - 4) + ["b"] * 4)
    spec = build_spec(table, seed=seed)
    assert spec.target[0] not in ("status", "nearly")
    assert "status" not in spec.target_candidates and "nearly" not in spec.target_candidates
    assert "status" in spec.excluded_features


def test_ten_thousand_level_categorical_is_excluded_for_its_categories() -> None:
    n = 20_000
    table = build_table(n=n, visits=None, sparse=None, city=lambda n: [f"city {i % 10_000}" for i in range(n)])
    for seed in range(2):
        spec = build_spec(table, seed=seed)
        assert "city" not in _features(spec) and spec.target != ("city",)
        assert "categories" in spec.excluded_features["city"]
        assert "10000" in spec.excluded_features["city"]


def test_unique_strings_are_excluded_as_ids() -> None:
    table = build_table(name=lambda n: [f"person {i}" for i in range(n)])
    spec = build_spec(table)
    assert "name" not in _features(spec) and "id" in spec.excluded_features["name"]


# ---------------------------------------------------------------- adversarial: leaks


def _wage_table(n: int = 200) -> pd.DataFrame:
    """Regression only: `wage`, an exact copy and its log; `site` has too many levels to be a class target."""
    rng = np.random.default_rng(7)
    wage = np.round(np.exp(rng.normal(3, 0.5, size=n)), 2)
    return build_table(n=n, visits=None, colour=None, label=None,
                       site=[f"site {i % 25}" for i in range(n)],
                       wage=wage, wage_copy=wage.copy(), lwage=np.log(wage))


def test_copy_and_log_of_the_target_are_dropped_as_leaks() -> None:
    table = _wage_table()
    spec = build_spec(table, target_hint="wage")
    assert spec.target == ("wage",) and spec.problem_type == "regression"
    assert set(spec.v2_dropped_columns) == {"wage_copy", "lwage"}
    for leak in ("wage_copy", "lwage"):
        assert leak not in _features(spec)
        assert "leak" in spec.excluded_features[leak]
    _assert_well_formed(spec, table)


@pytest.mark.parametrize("seed", SEEDS)
def test_whichever_of_a_leaking_trio_is_the_target_the_others_are_dropped(seed: int) -> None:
    trio = {"wage", "wage_copy", "lwage"}
    spec = build_spec(_wage_table(), seed=seed)
    target = spec.target[0]
    if target in trio:
        assert set(spec.v2_dropped_columns) == trio - {target}
    else:
        assert not trio & set(spec.v2_dropped_columns)


def test_relabelled_copy_of_a_class_target_is_dropped_as_a_leak() -> None:
    rng = np.random.default_rng(8)
    n = 200
    table = build_table(n=n, x=None, visits=None, sparse=None,
                        colour=lambda n: rng.choice(["red", "green", "blue"], size=n),
                        label=lambda n: rng.choice(["yes", "no"], size=n),
                        score=lambda n: rng.normal(size=n))
    table["label_code"] = table["label"].map({"yes": "Y", "no": "N"})
    table["label_flag"] = (table["label"] == "yes").astype("int64")
    hits = 0
    for seed in range(4):
        spec = build_spec(table, seed=seed)
        group = {"label", "label_code", "label_flag"}
        if spec.target[0] in group:
            hits += 1
            assert set(spec.v2_dropped_columns) == group - {spec.target[0]}
            assert not group & _features(spec)
    assert hits, "no seed chose the label as target"


# ---------------------------------------------------------------- adversarial: bad values


def _design_or_reject(table: pd.DataFrame, seed: int) -> TaskSpec | None:
    try:
        return build_spec(table, seed=seed)
    except DatasetRejected as exc:
        assert exc.reason and "\n" not in exc.reason
        return None


def test_infinite_values_give_a_writable_spec_or_a_clear_rejection() -> None:
    table = build_table(skew=lambda n: np.where(np.arange(n) == 3, -np.inf, np.linspace(0, 1, n)))
    for seed in SEEDS:
        spec = _design_or_reject(table, seed)
        if spec is not None:
            _assert_well_formed(spec, table)
            target = table[spec.target[0]]
            if pd.api.types.is_numeric_dtype(target):
                assert np.isfinite(target.dropna()).all(), "an infinite target cannot be fitted"


def test_values_beyond_float32_give_a_spec_or_a_clear_rejection() -> None:
    table = build_table(huge=lambda n: np.linspace(-1e300, 1e300, n))
    for seed in range(3):
        spec = _design_or_reject(table, seed)
        if spec is not None:
            _assert_well_formed(spec, table)


def test_rejection_reasons_are_one_line() -> None:
    cases = [build_table().head(1), build_table(n=100, x=None, visits=None, colour=None, sparse=None, label=None,
                                                serial=lambda n: np.arange(1, n + 1))]
    for table in cases:
        with pytest.raises(DatasetRejected) as info:
            design(build_record(), profile_table(table), table, rng_for(0, "local/x", "design"), DesignConfig())
        assert info.value.reason and "\n" not in info.value.reason


# ---------------------------------------------------------------- targets chosen by evidence


def _two_outcome_table(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    x = rng.normal(size=n)
    return build_table(n=n, price=lambda n: 50 + 10 * x + rng.normal(size=n))


def test_design_pair_gives_a_class_and_a_different_reg_task_with_their_own_seeds() -> None:
    from task_design.heuristic import design_pair

    table = _two_outcome_table()
    record = build_record(column_descriptions={"label": "The outcome: did the customer buy.",
                                               "price": "Sale price, the response of the second study."})
    rngs = {k: rng_for(0, record.ref, f"design-{k}") for k in ("classification", "regression")}
    specs = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, DesignConfig())
    assert {s.problem_type for s in specs} == {"classification", "regression"}
    assert {s.task_dir.rsplit("_", 1)[1] for s in specs} == {"class", "reg"}
    assert len({s.target[0] for s in specs}) == 2
    again = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"),
                        {k: rng_for(0, record.ref, f"design-{k}") for k in rngs}, DesignConfig())
    assert [s.model_dump() for s in again] == [s.model_dump() for s in specs]
    # The first task is design()'s, byte for byte: a pair adds a task and moves none.
    alone = design(record, profile_table(table), table, rng_for(0, record.ref, "design"), DesignConfig())
    assert specs[0].model_dump_json() == alone.model_dump_json()


def test_an_id_year_or_coordinate_is_never_the_target_even_when_it_is_the_only_numeric_column() -> None:
    n = 200
    rng = np.random.default_rng(6)
    table = build_table(n=n, label=None, visits=None, x=None, sparse=None, colour=None,
                        person_id=lambda n: rng.permutation(n) + 1000, YEAR=lambda n: 1990 + np.arange(n) % 20,
                        longitude=lambda n: rng.uniform(-80, -70, n), latitude=lambda n: rng.uniform(30, 40, n),
                        grade=lambda n: rng.choice(["a", "b", "c"], n))
    spec = build_spec(table)
    assert spec.target == ("grade",)
    assert spec.excluded_targets["person_id"].startswith(("identifier", "row index"))
    assert spec.excluded_targets["YEAR"].startswith("calendar")
    assert spec.excluded_targets["longitude"].startswith("coordinate")
    assert "person_id" not in spec.related_features  # keys are no features either


def test_the_source_hint_decides_and_is_recorded_as_evidence() -> None:
    table = _two_outcome_table()
    spec = build_spec(table, target_hint="price")
    assert spec.target == ("price",) and spec.target_evidence.startswith("source hint")


def test_the_documented_formula_response_beats_the_fallback() -> None:
    table = _two_outcome_table()
    spec = build_spec(table, documented_outcomes={"x": reading("fitted_model", "model response in lm(x ~ …) in Examples")})
    assert spec.target == ("x",) and "lm(x ~" in spec.target_evidence


def test_a_documented_target_that_leaks_is_not_replaced_by_an_undocumented_column() -> None:
    # The documented `label` is only the sign of `z`: once the leak is removed no feature is left.
    # `z` is documented as nothing, so it may not stand in: the dataset is skipped with the reason.
    z = np.random.default_rng(8).normal(size=200)
    table = build_table(n=200, x=None, visits=None, colour=None, sparse=None, z=z, label=np.where(z > 0, "yes", "no"))
    with pytest.raises(DatasetRejected, match=r"^documented outcome 'label' \(model_formula\) not usable: .*leaks"):
        build_spec(table, documented_outcomes={"label": reading("fitted_model", "model response in glm(label ~ z)")})


def test_the_next_documented_target_is_tried_when_the_first_leaks() -> None:
    # Two documented responses: the first leaks, the second is taken, and the attempt is recorded.
    rng = np.random.default_rng(8)
    z = rng.normal(size=200)
    table = build_table(n=200, x=None, visits=None, colour=None, sparse=None, z=z, label=np.where(z > 0, "yes", "no"),
                        w=np.sign(z) * rng.uniform(1, 2, size=200),  # gives the sign away, not the size
                        v=rng.normal(size=200))  # a second predictor: one alone sets no modelling question
    spec = build_spec(table, documented_outcomes={"label": reading("fitted_model", "model response in glm(label ~ z)"),
                                                  "z": reading("fitted_model", "model response in lm(z ~ label)")})
    assert spec.target == ("z",) and spec.target_evidence_kind == "model_formula"
    assert len(spec.design_attempts) == 1 and spec.design_attempts[0].startswith("documented outcome 'label'")
    assert "leaks" in spec.design_attempts[0] and spec.excluded_targets["label"].startswith("tried:")
    # `label` is z > 0: a function of the target, so no feature of `z` either.
    assert "w" in spec.related_features and "label" not in spec.related_features
    assert "encodes the target" in spec.excluded_features["label"]


def _unlearnable_outcome_table(n: int = 300) -> pd.DataFrame:
    """`earn78`, noise, beside `earn75`, which the features predict well: the covariate nsw fell through to."""
    rng = np.random.default_rng(12)
    x = rng.normal(size=n)
    return build_table(n=n, label=None, colour=None, sparse=None, x=x, earnings=rng.normal(size=n) * 100 + 1000,
                       income=lambda n: 3 * x + rng.normal(scale=0.1, size=n))


def test_a_failed_documented_outcome_is_never_replaced_by_an_undocumented_one() -> None:
    table = _unlearnable_outcome_table()
    docs = {"earnings": "real earnings, the response", "income": "family income, thousands"}
    with pytest.raises(DatasetRejected, match=r"^documented outcome 'earnings' \(documented_response\) not learnable"):
        build_spec(table, config=DesignConfig(), column_descriptions=docs,
                   documented_outcomes={"earnings": reading("format_entry", "documented as 'response' in Format")})


def test_a_failed_top_ranked_fallback_ends_the_search() -> None:
    # No documentation: `earnings` reads as the outcome and fails; `income`, which also reads as one
    # and is learnable, is not tried: a weaker reading after a failed stronger one is a guess.
    table = _unlearnable_outcome_table()
    docs = {"earnings": "real earnings of the worker in the study year", "income": "family income, thousands"}
    with pytest.raises(DatasetRejected, match=r"^top-ranked outcome 'earnings' \(outcome_description\) not learnable"):
        build_spec(table, config=DesignConfig(), column_descriptions=docs)


def test_a_dataset_with_no_evidenced_target_is_skipped_with_the_reason() -> None:
    table = build_table()
    with pytest.raises(DatasetRejected, match="no target with evidence"):
        build_spec(table.rename(columns={"label": "bought"}), column_descriptions={})
    # Undescribed, a conventionally named outcome still reads as one, by its name alone.
    assert build_spec(table, column_descriptions={}).target_evidence_kind == "outcome_name"
    # A documented outcome that cannot be a target (too many classes) leaves no room for a guess either.
    table = build_table(site=[f"site {i % 40}" for i in range(200)])
    with pytest.raises(DatasetRejected, match="^documented outcome 'site' cannot be a target"):
        build_spec(table, documented_outcomes={"site": reading("fitted_model", "model response in lm(site ~ x)")})


def test_a_second_task_needs_its_own_evidence() -> None:
    from task_design.heuristic import design_pair

    table = _two_outcome_table()
    record = build_record(column_descriptions={"label": "The outcome: did the customer buy."})
    rngs = {k: rng_for(0, record.ref, f"design-{k}") for k in ("classification", "regression")}
    specs = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, UNIT_CONFIG)
    # `price` reads as an outcome by its name only with a description of its own; it has none here.
    assert [s.target for s in specs] == [("label",)]
    record = build_record(column_descriptions={"label": "The outcome: did the customer buy.",
                                               "price": "Sale price of the item."},
                          documented_outcomes={"label": reading("fitted_model", "model response in glm(label ~ .) in Examples")})
    specs = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, UNIT_CONFIG)
    # The documentation names the study's outcome: an undocumented column beside it is not a second
    # question, whatever its own words (azprocedure's `admit` beside `los`).
    assert [s.target for s in specs] == [("label",)]
    record = build_record(column_descriptions={"label": "The outcome: did the customer buy.",
                                               "price": "Sale price of the item."},
                          documented_outcomes={"label": reading("fitted_model", "model response in glm(label ~ .) in Examples"),
                                               "price": reading("fitted_model", "model response in lm(price ~ .) in Examples")})
    specs = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, UNIT_CONFIG)
    assert [s.target for s in specs] == [("label",), ("price",)]
    assert [s.target_evidence_kind for s in specs] == ["model_formula", "model_formula"]


def test_a_dataset_below_the_mm_validation_floor_is_rejected_with_that_reason() -> None:
    with pytest.raises(DatasetRejected, match="below the size floor"):
        build_spec(build_table(n=120))
    spec = build_spec(build_table(n=200))
    n_val = 200 - int(np.floor(spec.train_test_ratio * 200))
    assert n_val >= 40 and spec.size_floors == {"min_mm_val_rows": 40}


def test_a_contingency_table_is_rejected() -> None:
    cells = pd.MultiIndex.from_product([[f"c{i}" for i in range(20)], ["m", "f"], ["no", "yes"], list("abc")])
    table = build_table(n=len(cells), x=None, visits=None, sparse=None, colour=cells.get_level_values(0),
                        sex=cells.get_level_values(1), label=cells.get_level_values(2),
                        age=cells.get_level_values(3), Freq=lambda n: np.arange(n) % 17 + 1)
    with pytest.raises(DatasetRejected, match="contingency table"):
        build_spec(table)


def test_a_survival_study_with_no_documented_outcome_is_rejected_not_guessed() -> None:
    rng = np.random.default_rng(9)
    table = build_table(n=200, label=None, time=lambda n: rng.integers(1, 900, n), status=lambda n: rng.integers(0, 2, n))
    with pytest.raises(DatasetRejected, match="survival study"):
        build_spec(table)


def _selections(docs: dict[str, str]) -> list[list[str]]:
    """The selected features of `x`, `visits`, `colour` and `sparse` for seeds 0-11 with `docs` as the column
    descriptions, each checked against the same spec without them: the same seeded draws, so every other
    choice and the number selected stay."""
    table, features, out = build_table(), ["x", "visits", "colour", "sparse"], []
    for seed in range(12):
        specs = [spec_from_choices(build_record(column_descriptions=d), profile_table(table), "classification",
                                   "label", ["label"], features, {}, (), np.random.default_rng(seed), UNIT_CONFIG)
                 for d in ({}, docs)]
        plain, spec = (s.model_dump(exclude={"selected_features", "numerical_features", "categorical_features"})
                       for s in specs)
        assert plain == spec and len(specs[0].selected_features) == len(specs[1].selected_features)
        out.append(list(specs[1].selected_features))
    return out


def test_selected_features_prefer_documented_ones_and_keep_every_other_choice():
    """Undocumented features are selected only to make up the count: a question refers to a feature by
    what metadata.txt says of it."""
    docs = {"visits": "Number of visits to the clinic.", "colour": "Colour of the item.", "sparse": "sparse"}
    selections = _selections(docs)
    for selected in selections:
        # `sparse`'s "description" only repeats its name: it is not documented
        documented = [f for f in selected if f in ("visits", "colour")]
        assert len(documented) == min(2, len(selected)), selected
    assert len({len(s) for s in selections}) > 1  # documented features only, and some made up with others


def test_selected_features_prefer_ones_named_by_meaning_over_descriptions_that_use_the_name():
    """A description that singles its column out without the column's name lets question_v1 refer to the
    feature as DARE-bench does; one that uses the name ("Number of visits" for `visits`) leaves the name in
    the text, so it comes after, before the undocumented ones."""
    docs = {"x": "Weight of the parcel in grams.", "visits": "Number of visits to the clinic.",
            "colour": "Hue of the item as printed on the label."}
    selections = _selections(docs)
    for selected in map(set, selections):
        k = len(selected)
        assert len(selected & {"x", "colour"}) == min(2, k), selected
        assert ("visits" in selected) == (k > 2) and ("sparse" in selected) == (k > 3), selected
    assert {len(s) for s in selections} >= {2, 3}


def test_beside_the_study_subject_a_second_task_needs_the_documentations_word() -> None:
    # Ecdat/Somerville, "Visits to Lake Somerville": the visits are what it studies; `quality`, "quality ranking
    # score for lake Somerville", read as an outcome by its own words, is a covariate beside them (read X blind).
    from task_design.heuristic import design_pair

    table = _two_outcome_table()
    docs = {"label": "customer purchase decision", "price": "yield of the item in kg"}
    rngs = {k: rng_for(0, "x", f"design-{k}") for k in ("classification", "regression")}
    record = build_record(title="Customer purchase decisions", column_descriptions=docs)
    specs = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, UNIT_CONFIG)
    assert [(s.target, s.target_evidence_kind) for s in specs] == [(("label",), "study_subject")]
    documented = build_record(title="Customer purchase decisions", column_descriptions=docs,
                              documented_outcomes={"price": reading("fitted_model", "model response in lm(price ~ .) in Examples")})
    specs = design_pair(documented, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, UNIT_CONFIG)
    assert ("price",) in [s.target for s in specs]


def test_a_rare_integer_class_is_quoted_as_a_number_not_a_numpy_repr() -> None:
    # Issue 49: reasons read "class np.int64(5) has 2 rows": numpy 2 reprs a label read from a frame with its type.
    from task_design.heuristic import class_target_problem

    table = pd.DataFrame({"grade": [1] * 40 + [2] * 40 + [5] * 2, "x": range(82)})
    why = class_target_problem(profile_table(table).column("grade"), table, DesignConfig())
    assert why is not None and why.startswith("class 5 has 2 rows") and "np." not in why
