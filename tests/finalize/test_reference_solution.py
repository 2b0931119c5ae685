"""The IF reference handles a `target` list exactly as DARE-bench's template does (MultiOutputClassifier
around LogisticRegression, GaussianNB and LinearSVC; DecisionTreeClassifier natively), and `daregen score`
and `verify` score and compare every target of it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sklearn.multioutput import MultiOutputClassifier

from finalize.reference_solution import predict
from pipeline.core import names
from pipeline.core.if_workflow import build_pipeline
from pipeline.core.jsonio import read_json
from pipeline.review.score import score_prediction
from pipeline.review.verify import compare_predictions
from tests.factories import MULTI_TARGETS, write_multi_target_task


@pytest.mark.parametrize("model_type", ["LogisticRegression", "GaussianNB", "LinearSVC", "DecisionTreeClassifier"])
def test_a_three_target_task_predicts_every_target(tmp_path: Path, model_type: str) -> None:
    task = write_multi_target_task(tmp_path, model_type)
    q = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    wrapped = isinstance(build_pipeline(q).named_steps["model"], MultiOutputClassifier)
    assert wrapped == (model_type != "DecisionTreeClassifier")
    out = predict(task)
    assert list(out.columns) == [names.ROW_ID, *MULTI_TARGETS]
    assert len(out) == len(pd.read_csv(task / names.SOURCE_DIR / "val_v1.csv"))
    # DARE-bench's CSV convention: `None` is a level of `tone`, learned and predicted as such
    assert "None" in set(out["tone"]) and out.notna().all().all()


def test_score_averages_the_targets_and_verify_names_the_wrong_one(tmp_path: Path) -> None:
    task = write_multi_target_task(tmp_path)
    reference = predict(task)
    reference.to_csv(task / names.VERIFY_DIR / names.SIMULATED_PRED, index=False, lineterminator="\n")
    pred = tmp_path / "prediction.csv"
    reference.to_csv(pred, index=False, lineterminator="\n")
    assert score_prediction(task, "v1", pred).score == 1.0
    wrong = reference.assign(shape=reference["shape"].map({"round": "square", "square": "round"}))
    wrong.to_csv(pred, index=False, lineterminator="\n")
    assert score_prediction(task, "v1", pred).score == pytest.approx(2 / 3)  # DARE: the mean over targets
    q = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    text = lambda f: f.astype(str)  # noqa: E731  (verify reads both files as text)
    assert compare_predictions(text(reference), text(reference), q, task.name, names.SIMULATED_PRED) == []
    problems = compare_predictions(text(reference), text(wrong), q, task.name, names.SIMULATED_PRED)
    assert len(problems) == 1 and "'shape'" in problems[0].message
