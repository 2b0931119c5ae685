"""A target with nothing to learn is caught at design time and replaced by the next-ranked one,
so the dataset still yields a task instead of failing the MM check at finalize."""

from __future__ import annotations

import numpy as np

from pipeline.core.seeding import rng_for
from task_design.config import DesignConfig
from task_design.heuristic import design
from task_design.learnable import learnability_problem
from task_design.profile import profile_table
from tests.factories import build_record, build_table


def _table(n: int = 300):
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    return build_table(n=n, x=x, noise_score=rng.normal(size=n), price=20 + 5 * x + rng.normal(scale=0.5, size=n))


def test_a_pure_noise_target_has_nothing_to_learn_and_a_signal_has() -> None:
    table, config = _table(), DesignConfig()
    features = [c for c in table.columns if c not in ("noise_score", "price")]
    why = learnability_problem("noise_score", features, table, "regression", config)
    assert why is not None and why.startswith("nothing to learn")
    assert learnability_problem("price", features + ["noise_score"], table, "regression", config) is None
    assert learnability_problem("label", features, table, "classification", config) is None


def test_the_next_target_replaces_a_documented_one_with_nothing_to_learn() -> None:
    table = _table()
    record = build_record(documented_outcomes={"noise_score": "model response in lm(noise_score ~ .) in Examples"})
    spec = design(record, profile_table(table), table, rng_for(0, record.ref, "design"), DesignConfig())
    assert spec.target != ("noise_score",)
    assert spec.design_attempts[0].startswith("noise_score") and "nothing to learn" in spec.design_attempts[0]
