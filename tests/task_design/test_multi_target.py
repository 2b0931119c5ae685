"""A source that documents several categorical outcomes of the same unit gets one classification task
whose `target` lists them (as 7 of DARE-bench's eval tasks do); the other outcomes never serve as
features, and the task builds, its reference reproduces its ground truth and verify passes it. A
source without documented outcomes, or a model that cannot fit several labels, keeps one target."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import names
from pipeline.core.jsonio import read_json
from pipeline.review.score import score_prediction
from pipeline.review.verify import verify_task
from task_design.multi_target import with_documented_outcomes
from tests.factories import MULTI_TARGETS, build_local_task, build_record, needs_sandbox, spec_where, task_folder


def _outcomes_table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x, z = rng.normal(size=n), rng.normal(size=n)
    noise = lambda: 0.3 * rng.normal(size=n)  # noqa: E731  learnable, not a one-column lookup
    return pd.DataFrame({"x": x, "z": z, "w": rng.integers(0, 30, size=n),
                         "colour": rng.choice(["red", "blue", "green"], size=n),
                         "size": np.where(x + noise() > 0, "big", "small"),
                         "shape": np.where(z + noise() > 0, "round", "square"),
                         "tone": np.where(x + z + noise() > 0, "None", "loud")})


def _is_candidate(spec) -> bool:
    return spec.problem_type == "classification" and spec.target == ("size",) and spec.model_type != "MLPClassifier"


def test_documented_outcomes_become_a_target_list_and_leave_the_features() -> None:
    from sourcing.normalize import normalize_table

    table = normalize_table(_outcomes_table())
    spec = spec_where(table, _is_candidate, target_hint="size")
    record = build_record(outcome_columns=MULTI_TARGETS)
    multi = with_documented_outcomes(spec, record)
    assert multi.target == MULTI_TARGETS
    for listing in (multi.related_features, multi.selected_features, multi.expected_ranges):
        assert not set(MULTI_TARGETS) & set(listing)
    assert multi.excluded_features["tone"] == "another target of this task"
    assert with_documented_outcomes(spec, build_record()) == spec  # nothing documented: unchanged
    mlp = spec.model_copy(update={"model_type": "MLPClassifier"})
    assert with_documented_outcomes(mlp, record) == mlp  # DARE-bench's template cannot fit it


@needs_sandbox
def test_a_three_target_task_builds_and_verifies(tmp_path: Path) -> None:
    # seed 1: the seeded designer picks `size` and a model the reference wraps in MultiOutputClassifier
    outcome = build_local_task(tmp_path, "outcomes", _outcomes_table(), "csv", 1, source_format="parquet",
                               title="Outcomes", license="CC0-1.0", target_hint="size",
                               outcome_columns=list(MULTI_TARGETS))
    task = task_folder(tmp_path, outcome)
    question = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    assert question["target"] == list(MULTI_TARGETS)
    assert question["model_type"] in ("LogisticRegression", "GaussianNB", "LinearSVC")  # wrapped, as DARE does
    entry = read_json(Path(outcome.work_dir) / "entry.json")
    assert all(f"`{t}`" in entry["question_v1"] for t in MULTI_TARGETS)
    truth = pd.read_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH, keep_default_na=False, na_values=[""])
    assert list(truth.columns) == [names.ROW_ID, *MULTI_TARGETS] and "None" in set(truth["tone"])
    verdict = verify_task(task)
    assert verdict.status == "pass", verdict.line()
    assert score_prediction(task, "v1", task / names.VERIFY_DIR / names.SIMULATED_PRED).score == 1.0
