"""An MM task must be learnable beyond the trivial baseline and not solvable by one feature: a learnable task
passes with stable, rounded scores, a target of pure noise and a leaked target column are errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.mm_check import (LEAK_SCORE, MIN_MARGIN, _ordinal_codes, assess_frames, assess_task,
                               check_mm_feasibility)
from pipeline.core import names
from pipeline.core.jsonio import read_json
from postprocess.formats import SQLITE_TABLE, read_frame, write_frame
from tests.factories import DARE_EXAMPLES, NO_DARE_EXAMPLES, TABULAR_EXAMPLES


def _mm(problem_type: str, n: int = 400, signal: float = 1.0, leak: bool = False, seed: int = 0):
    """train_v2, val_v2 and ground truth for a target that depends on x1, x2 and a category with
    weight `signal`; `leak` adds a column that is the target in disguise."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    latent = signal * (x1 + 0.5 * x2 + (colour == "red")) + rng.normal(size=n)
    y = np.where(latent > 0.3, "yes", "no") if problem_type == "classification" else latent * 10
    df = pd.DataFrame({"x1": x1, "x2": np.where(rng.random(n) < 0.1, np.nan, x2), "colour": colour, "y": y})
    if leak:
        df["y_copy"] = (df["y"] == "yes").astype(int) if problem_type == "classification" else df["y"] * 2.54
    cut = int(n * 0.8)
    train, val = df.iloc[:cut].reset_index(drop=True), df.iloc[cut:].reset_index(drop=True)
    val = val.assign(row_id=np.arange(len(val)) + 1000)
    truth = val[["row_id", "y"]]
    return train, val.drop(columns=["y"]), truth


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
def test_a_learnable_task_passes_with_stable_scores(problem_type: str) -> None:
    train, val, truth = _mm(problem_type)
    first = assess_frames(train, val, truth, ["y"], problem_type, "t")
    assert first.problems == ()
    metric = "macro_f1" if problem_type == "classification" else "r2"
    assert set(first.scores) == {f"trivial_{metric}", f"reference_{metric}", f"best_single_feature_{metric}"}
    assert first.scores[f"reference_{metric}"] >= first.scores[f"trivial_{metric}"] + MIN_MARGIN
    assert all(round(v, 4) == v and 0 <= v <= 1 for v in first.scores.values())
    # Row order of val and truth must not matter, and a second run gives the same numbers.
    again = assess_frames(train, val.iloc[::-1], truth.sample(frac=1, random_state=1), ["y"], problem_type, "t")
    assert again.scores == first.scores


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
def test_an_all_missing_column_is_assessed_not_crashed_on(problem_type: str) -> None:
    """The MM files keep an all-missing source column; boosting cannot bin it, so it is left out of the fit."""
    train, val, truth = _mm(problem_type)
    result = assess_frames(train.assign(nothing=np.nan), val.assign(nothing=np.nan), truth, ["y"], problem_type, "t")
    assert result.problems == ()
    assert result.scores == assess_frames(train, val, truth, ["y"], problem_type, "t").scores


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
def test_a_target_of_pure_noise_is_infeasible(problem_type: str) -> None:
    train, val, truth = _mm(problem_type, n=2000, signal=0.0)  # 400 val rows: little split noise
    result = assess_frames(train, val, truth, ["y"], problem_type, "noise_task")
    messages = [p.message for p in result.problems if p.severity == "error"]
    assert len(messages) == 1 and messages[0].startswith("MM infeasible: the reference models"), messages
    assert f"not {MIN_MARGIN} above the trivial baseline" in messages[0]
    assert result.problems[0].where == "noise_task"


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
def test_a_leaked_target_column_is_an_error(problem_type: str) -> None:
    train, val, truth = _mm(problem_type, leak=True)
    result = assess_frames(train, val, truth, ["y"], problem_type, "t")
    leaks = [p.message for p in result.problems if p.message.startswith("MM leakage")]
    assert len(leaks) == 1 and "'y_copy'" in leaks[0] and f">= {LEAK_SCORE}" in leaks[0], result.problems
    assert "'x1'" not in leaks[0]
    metric = "macro_f1" if problem_type == "classification" else "r2"
    assert result.scores[f"best_single_feature_{metric}"] >= LEAK_SCORE


def test_a_single_class_in_training_is_infeasible() -> None:
    train, val, truth = _mm("classification")
    train = train.assign(y="yes")
    result = assess_frames(train, val, truth, ["y"], "classification", "t")
    assert any(p.message.startswith("MM infeasible") for p in result.problems)


def test_missing_target_in_ground_truth_is_reported() -> None:
    train, val, truth = _mm("regression")
    result = assess_frames(train, val, truth.rename(columns={"y": "other"}), ["y"], "regression", "t")
    assert result.scores == {} and "lack the target ['y']" in result.problems[0].message


@pytest.mark.parametrize("name", TABULAR_EXAMPLES)
def test_published_dare_tasks_are_feasible(name: str, tmp_path: Path) -> None:
    if not (DARE_EXAMPLES / name).exists():
        pytest.skip(NO_DARE_EXAMPLES)
    task = Path(shutil.copytree(DARE_EXAMPLES / name, tmp_path / name))
    q = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    assert check_mm_feasibility(task, q) == []
    # Leak the target into val_v2 and train_v2 as a renamed column: caught, as a warning when asked.
    ftype, target = q["save_file_type"], q["target"][0]
    truth = pd.read_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH)
    for stem, frame in ((names.TRAIN_V2, None), (names.VAL_V2, truth)):
        path = task / names.SOURCE_DIR / names.data_file(stem, ftype)
        df = read_frame(path, ftype)
        df["leak"] = df[target] if frame is None else df[names.ROW_ID].map(dict(zip(frame[names.ROW_ID],
                                                                                     frame[target])))
        write_frame(df, path, ftype, SQLITE_TABLE.get(stem))
    found = check_mm_feasibility(task, q, "warning")  # small val sets too: no small-sample exemption
    assert [p.severity for p in found] == ["warning"] and "'leak'" in found[0].message
    assert assess_task(task, q).problems[0].severity == "error"


def test_a_leak_on_a_small_validation_set_is_judged_by_cv_on_train() -> None:
    # 12 val rows where the disguised target happens to be scrambled: the val score alone misses it,
    # the 3-fold CV on the 188 training rows does not (no small-sample exemption).
    train, val, truth = _mm("regression", n=200, leak=True)
    val, truth = val.iloc[:12].copy(), truth.iloc[:12]
    val["y_copy"] = val["y_copy"].to_numpy()[::-1]
    leaks = [p.message for p in assess_frames(train, val, truth, ["y"], "regression", "t").problems
             if p.message.startswith("MM leakage")]
    assert len(leaks) == 1 and "'y_copy'" in leaks[0] and "CV on train" in leaks[0], leaks


def test_an_honest_feature_on_a_small_validation_set_is_no_leak() -> None:
    train, val, truth = _mm("classification", n=200)
    result = assess_frames(train, val.iloc[:15], truth.iloc[:15], ["y"], "classification", "t")
    assert not [p for p in result.problems if p.message.startswith("MM leakage")]


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
@pytest.mark.parametrize("case", ["learnable", "weak", "noise", "leak", "small"])
def test_verdict_only_gives_the_full_assessments_problems(problem_type: str, case: str) -> None:
    """verify asks for the verdict alone (the boosted fit may be skipped): its problems must be the full
    assessment's, message for message, whether the task passes, fails or leaks."""
    signal = {"weak": 0.15, "noise": 0.0}.get(case, 1.0)
    train, val, truth = _mm(problem_type, n=200 if case == "small" else 600, signal=signal, leak=case == "leak")
    if case == "small":
        val, truth = val.iloc[:15], truth.iloc[:15]
    full = assess_frames(train, val, truth, ["y"], problem_type, "t")
    quick = assess_frames(train, val, truth, ["y"], problem_type, "t", verdict_only=True)
    assert quick.problems == full.problems
    if case == "learnable":  # one feature alone clears the margin: the boosted fit was skipped
        assert quick.scores == {} and full.scores
    if case == "weak" and problem_type == "classification":  # only boosting clears it: fitted, same scores
        assert quick.scores == full.scores and not full.problems
    if case == "noise":
        assert any(p.message.startswith("MM infeasible") for p in quick.problems)
    if case == "leak":
        assert any(p.message.startswith("MM leakage") for p in quick.problems)


def test_ordinal_codes_look_values_up_by_their_text() -> None:
    """The reference's encoding of a non-numeric column: a value's code is its str()'s place in the
    training categories, so sqlite's 1, 1.0 and "1" in one column are not one category."""
    categories = ["1", "1.0", "True", "a"]
    mixed = pd.Series([1, 1.0, "1", True, None, np.nan, "a", "zz"], dtype=object)
    expected = [0.0, 1.0, 0.0, 2.0, np.nan, np.nan, 3.0, np.nan]
    np.testing.assert_array_equal(_ordinal_codes(mixed, categories), expected)
    text = pd.Series(["a", None, "1", "zz"], dtype="str")
    np.testing.assert_array_equal(_ordinal_codes(text, categories), [3.0, np.nan, 0.0, np.nan])


@pytest.mark.parametrize("problem_type", ["classification", "regression"])
def test_the_check_scores_the_designs_reference_models_and_keeps_the_best(monkeypatch, problem_type: str) -> None:
    """A rare class that unweighted boosting never answers and a weak additive signal it overfits are
    learnable: the check scores task_design.learnable's reference models, so the design's estimate and the
    check agree, and records the best, whose predictions it keeps."""
    import finalize.mm_check as mm_check
    from pipeline.core.metrics import metric_for

    rng = np.random.default_rng(0)
    n = 1000
    x = rng.normal(size=n)
    df = pd.DataFrame({"x": x, **{f"n{i}": rng.normal(size=n) for i in range(6)}})
    df["y"] = (np.where(x + rng.normal(scale=1.2, size=n) > 2.0, "yes", "no") if problem_type == "classification"
               else 0.4 * x + rng.normal(size=n))
    train, val = df.iloc[:700].reset_index(drop=True), df.iloc[700:].reset_index(drop=True).assign(
        row_id=np.arange(300))
    truth, val = val[["row_id", "y"]], val.drop(columns=["y"])
    metric = metric_for(problem_type, "v2")
    full = assess_frames(train, val, truth, ["y"], problem_type, "t")
    assert full.problems == ()
    ref = full.scores[f"reference_{metric.name}"]
    assert ref >= full.scores[f"trivial_{metric.name}"] + MIN_MARGIN
    kept = full.reference_predictions["y"]
    assert round(metric.function(truth["y"].to_numpy(), kept["y"].to_numpy()), 4) == ref
    both = mm_check.reference_models
    monkeypatch.setattr(mm_check, "reference_models", lambda p: both(p)[:1])
    boosting = assess_frames(train, val, truth, ["y"], problem_type, "t")
    assert any("MM infeasible" in p.message for p in boosting.problems)
    assert boosting.scores[f"reference_{metric.name}"] < ref
