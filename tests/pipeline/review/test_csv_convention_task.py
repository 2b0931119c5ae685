"""A task whose target level is spelled `None` (a string in a parquet source) builds as a CSV task, its
instruction says only empty strings are missing, its reference reproduces the ground truth, and
`verify` and `score` agree on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import names
from pipeline.core.csv_convention import QUESTION_V1_PHRASE, read_task_csv
from pipeline.core.jsonio import read_json
from pipeline.review.score import score_prediction
from pipeline.review.verify import verify_task
from pipeline.steps import ENTRY_JSON
from tests.factories import build_local_task, needs_sandbox, task_folder

pytestmark = needs_sandbox


def _none_level_table(n: int = 160, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"x": x, "visits": rng.integers(0, 40, size=n),
                         "colour": rng.choice(["red", "green", "None"], size=n),
                         "label": np.where(x + 0.4 * rng.normal(size=n) > 0, "None", "Some")})


def test_a_none_level_survives_build_reference_verify_and_score(tmp_path: Path) -> None:
    outcome = build_local_task(tmp_path, "nonelevel", _none_level_table(), "csv", 3, source_format="parquet",
                               title="None levels", license="CC0-1.0", target_hint="label")
    task = task_folder(tmp_path, outcome)
    truth = read_task_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH)
    sim = read_task_csv(task / names.VERIFY_DIR / names.SIMULATED_PRED)
    assert set(truth["label"]) == {"None", "Some"} and "None" in set(sim["label"])
    assert read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]["target"] == ["label"]
    assert QUESTION_V1_PHRASE in read_json(Path(outcome.work_dir) / ENTRY_JSON)["question_v1"]
    verdict = verify_task(task)
    assert verdict.status == "pass", verdict.line()
    assert score_prediction(task, "v1", task / names.VERIFY_DIR / names.SIMULATED_PRED).score == 1.0
    assert score_prediction(task, "v2", task / names.VERIFY_DIR / names.GROUND_TRUTH).score == 1.0
