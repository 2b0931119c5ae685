"""bench_dare_scripts counts a task as agreeing only when DARE-bench's own scripts reproduce and score what
the tree records: a wrong IF reference, a recorded score evaluation.py does not give, or a CF validation
file without the columns evaluation.py aligns on is a disagreement with its reason."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from bench.bench_dare_scripts import (
    Check,
    bench,
    disagreements,
    judge_expected,
    judge_reference_run,
    judge_scorer,
    perturbed,
    ts_truth_v2,
)
from pipeline.core.metrics import clipped_r2, macro_f1
from tests.factories import DARE_EXAMPLES


def test_a_score_is_judged_against_the_expected_value_and_its_rounding() -> None:
    result = {"prediction_exist": 1.0, "final_score": 0.81284}
    assert judge_expected("t", "MM", result, 0.8128, digits=4).agree is True
    assert judge_expected("t", "MM", result, 0.8128).agree is False  # unrounded, 4e-5 apart
    missing = judge_expected("t", "IF", None, 1.0)
    assert missing.agree is False and "did not score" in missing.detail
    absent = judge_expected("t", "IF", {"prediction_exist": 0.0, "final_score": 0.0}, 1.0)
    assert absent.agree is False and "no prediction.csv" in absent.detail
    mismatch = judge_expected("t", "IF", {"prediction_exist": 1.0, "final_score": 0.0,
                                          "error": "row_count_mismatch_after_merge"}, 1.0)
    assert mismatch.agree is False and "row_count_mismatch_after_merge" in mismatch.detail


def test_the_two_scorers_must_agree_to_1e_9() -> None:
    result = {"prediction_exist": 1.0, "final_score": 0.5}
    assert judge_scorer("t", "scorer", result, 0.5 + 1e-12, None).agree is True
    far = judge_scorer("t", "scorer", result, 0.0, "prediction lacks id column(s) ['row_id']")
    assert far.agree is False and "lacks id column" in far.detail


def test_a_reference_run_that_failed_or_wrote_nothing_disagrees() -> None:
    assert judge_reference_run("t", None, True).agree is True
    assert "KeyError" in judge_reference_run("t", "KeyError: 'x'", False).detail
    assert judge_reference_run("t", None, False).agree is False
    checks = [Check("a", "ref", True), Check("a", "MM", None), Check("b", "IF", False, "why")]
    assert disagreements(checks) == [checks[2]]


def test_a_perturbed_prediction_changes_every_third_row_and_scores_between_the_extremes() -> None:
    labels = pd.DataFrame({"row_id": [str(i) for i in range(9)], "y": list("abcabcabc")})
    changed = perturbed(labels, ["y"], "classification")
    assert (changed["y"] != labels["y"]).tolist() == [True, False, False] * 3
    assert 0 < macro_f1(labels["y"], changed["y"]) < 1
    numbers = pd.DataFrame({"row_id": [str(i) for i in range(9)], "y": [str(v) for v in range(9)]})
    shifted = perturbed(numbers, ["y"], "regression")
    assert shifted["row_id"].tolist() == numbers["row_id"].tolist()
    assert 0 < clipped_r2(numbers["y"].astype(float), shifted["y"].astype(float)) < 1


def test_the_cf_truth_is_written_on_val_v2s_rows_and_a_missing_identifier_is_a_layout_fault() -> None:
    truth = pd.DataFrame({"date": ["2001-01", "2001-02", "2001-01"], "state": ["A", "A", "B"], "y": ["1", "2", "3"]})
    val = pd.DataFrame({"date": ["2001-01", "2001-01", "2001-02"], "state": ["B", "A", "A"]})
    frame, fault = ts_truth_v2(val, truth, ["y"])
    assert fault == "" and frame["y"].tolist() == ["3", "1", "2"]
    _, fault = ts_truth_v2(val[["date"]], truth, ["y"])
    assert "not ground_truth_v2's identifier columns" in fault


DARE_REPO = os.environ.get("DARE_BENCH_REPO")


@pytest.mark.skipif(not DARE_REPO, reason="set DARE_BENCH_REPO to an extracted DARE-bench checkout to run its scripts")
@pytest.mark.skipif(not (DARE_EXAMPLES / "question_list.json").is_file(), reason="set DARE_EXAMPLES to DARE-bench's examples")
def test_dare_scripts_agree_with_published_tasks_and_catch_a_wrong_if_reference(tmp_path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(DARE_EXAMPLES, tree)
    sabotaged = tree / "vishushekhar_pokemonunitedataset_class" / "verify" / "simulated_pred_local.csv"
    reference = pd.read_csv(sabotaged, dtype=str, keep_default_na=False)
    target = reference.columns[1]
    reference.loc[0, target] = "not a class"
    reference.to_csv(sabotaged, index=False)

    checks, _, identical = bench(Path(DARE_REPO).resolve(), tree, tmp_path / "work", mm=False)

    bad = {(c.task, c.name) for c in disagreements(checks)}
    assert bad == {("vishushekhar_pokemonunitedataset_class", "IF")}
    assert identical["vishushekhar_pokemonunitedataset_class"] is False
    judged = {c.task for c in checks if c.agree is True}
    assert len(judged) == 4  # every task has at least one comparison that ran and agreed
