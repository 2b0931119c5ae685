"""A recorded MM baseline is a score: the MM check's reference predictions, written as prediction.csv,
get exactly the recorded `reference_<metric>` from `daregen score` (both use pipeline/core/metrics.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.mm_check import assess_task
from pipeline.core import names
from pipeline.core.jsonio import write_json
from pipeline.review.score import score_prediction


def _task(root: Path, problem_type: str, n: int = 300, seed: int = 0) -> tuple[Path, dict]:
    """A csv task folder with just the MM files: train_v2, val_v2, verify/ground_truth.csv and the question."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    latent = x1 + 0.5 * x2 + (colour == "red") + rng.normal(size=n)
    if problem_type == "classification":
        y = np.select([latent < -0.5, latent < 0.8], ["low", "mid"], "high")
    else:
        y = np.round(latent * 10, 3)
    table = pd.DataFrame({"row_id": np.arange(n) + 1000, "x1": x1, "x2": x2, "colour": colour, "y": y})
    cut = int(n * 0.8)
    task = root / names.task_dir_name("synthetic", problem_type)
    (task / names.SOURCE_DIR).mkdir(parents=True)
    (task / names.VERIFY_DIR).mkdir()
    table.iloc[:cut].drop(columns="row_id").to_csv(task / names.SOURCE_DIR / "train_v2.csv", index=False)
    table.iloc[cut:].drop(columns="y").to_csv(task / names.SOURCE_DIR / "val_v2.csv", index=False)
    table.iloc[cut:][["row_id", "y"]].to_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH, index=False)
    question = {"target": ["y"], "problem_type": problem_type, "save_file_type": "csv"}
    write_json(task / names.VERIFY_DIR / names.ALL_METADATA, {"question": question})
    return task, question


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
def test_the_recorded_mm_reference_equals_daregen_score_on_its_predictions(tmp_path, problem_type) -> None:
    task, question = _task(tmp_path, problem_type)
    assessment = assess_task(task, question)
    metric = "macro_f1" if problem_type == "classification" else "r2"
    recorded = assessment.scores[f"reference_{metric}"]
    assert assessment.problems == () and 0 < recorded < 1  # a real model, neither trivial nor perfect

    prediction = tmp_path / "pred" / names.PREDICTION
    prediction.parent.mkdir()
    assessment.reference_predictions["y"].to_csv(prediction, index=False)
    scored = score_prediction(task, "v2", prediction)

    assert scored.reason is None
    assert round(scored.score, 4) == recorded
