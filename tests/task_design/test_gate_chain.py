"""One gate chain for every designer: a target the LLM designer proposes (over the real litellm client, against
tests/fake_openai.py on 127.0.0.1) is refused by the same gate, with the same rejection code, as the heuristic's
own candidate: a target computed from its features, a censored duration, a column with nothing to learn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.records import DatasetRecord, DatasetRejected
from pipeline.core.seeding import rng_for
from task_design import heuristic, llm
from task_design.config import DesignConfig
from task_design.llm_schema import LLMSettings, LLMUsage
from task_design.profile import profile_table
from tests.factories import REF, build_record, build_table, reading
from tests.fake_openai import FakeOpenAI, Reply

N = 300


def _answer(target: str, problem_type: str, features: list[str]) -> dict:
    return {"feasible": True, "feasibility_reason": f"{target} is the documented response", "problem_type": problem_type,
            "target_candidates": [target], "target": target, "related_features": features,
            "column_types": [{"column": f, "type": "numerical"} for f in features + [target]],
            "feature_descriptions": []}


def _codes(record: DatasetRecord, table: pd.DataFrame, answer: dict, tmp_path) -> tuple[str, str]:
    """(the heuristic's rejection code, the LLM designer's) for one dataset, the LLM answering `answer`."""
    profile, config = profile_table(table), DesignConfig()
    with pytest.raises(DatasetRejected) as mine:
        heuristic.design(record, profile, table, rng_for(0, REF, "design"), config)
    settings = LLMSettings(model="openai/fake-model", cache_dir=str(tmp_path / "cache"), timeout=5, num_retries=0)
    with FakeOpenAI([Reply.answer(answer)]) as server:
        with pytest.raises(DatasetRejected) as theirs:
            llm.design(record, profile, table, rng_for(0, REF, "design"), config,
                       settings=settings.model_copy(update={"api_base": server.api_base}), usage=LLMUsage())
        assert server.n_requests == 1  # refused by a gate, not sent back for another answer
    return mine.value.code, theirs.value.code


def test_a_target_computed_from_its_features_is_refused_as_the_heuristic_refuses_it(tmp_path) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(1, 2, N), rng.uniform(1, 2, N)
    # Each factor four times over (rescaled copies): no three columns' removal breaks y = a x b.
    table = pd.DataFrame({**{f"{n}{k}": k * v + k - 1 for n, v in (("a", a), ("b", b)) for k in range(1, 5)},
                          "y": a * b})
    record = build_record(documented_outcomes={"y": reading("fitted_model", "model response in lm(y ~ .) in Examples")})
    codes = _codes(record, table, _answer("y", "regression", ["a1", "b1", "a2"]), tmp_path)
    assert codes == ("tried:computed_target", "tried:computed_target")


def test_a_censored_duration_is_refused_as_a_survival_study(tmp_path) -> None:
    rng = np.random.default_rng(9)
    table = build_table(n=N, label=None, time=lambda n: rng.integers(1, 900, n), status=lambda n: rng.integers(0, 2, n))
    record = build_record(title="Clinic data")
    codes = _codes(record, table, _answer("time", "regression", ["x", "visits"]), tmp_path)
    assert codes == ("survival_study", "survival_study")


def test_a_column_with_nothing_to_learn_is_refused_by_the_learnability_gate(tmp_path) -> None:
    rng = np.random.default_rng(12)
    x = rng.normal(size=N)
    table = build_table(n=N, label=None, colour=None, sparse=None, x=x, earnings=rng.normal(size=N) * 100 + 1000,
                        income=lambda n: 3 * x + rng.normal(scale=0.1, size=n))
    record = build_record(column_descriptions={"earnings": "real earnings, the response", "income": "family income"},
                          documented_outcomes={"earnings": reading("format_entry", "documented as 'response' in Format")})
    codes = _codes(record, table, _answer("earnings", "regression", ["x", "visits", "income"]), tmp_path)
    assert codes == ("tried:not_learnable", "tried:not_learnable")
