"""A prediction scores what DARE-bench would give it: the reference scores 1.0, and a file that cannot be aligned on its ids scores 0 with a reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from pipeline.review.score import (
    GROUND_TRUTH_V1,
    GROUND_TRUTH_V2,
    SCORE_SUMMARY,
    REFERENCES,
    Score,
    format_report,
    run_score,
    score_prediction,
    scoring_rule,
    score_tree,
    write_reference_predictions,
)
from pipeline.core import metrics
from pipeline.core.jsonio import dumps, read_json, write_json
from pipeline.core.metrics import DEFAULT_METRICS
from pipeline.core.names import (
    ALL_METADATA,
    GROUND_TRUTH,
    PREDICTION,
    QUESTION_LIST,
    ROW_ID,
    SIMULATED_PRED,
    TASK_SUFFIX,
    VARIANTS,
    VERIFY_DIR,
)
from tests.factories import DARE_EXAMPLES

EXAMPLES = DARE_EXAMPLES

_CLASS_GT = pd.DataFrame({ROW_ID: [1, 2, 3, 4, 5], "y": ["a", "b", "a", "c", "b"]})
_CLASS_REF = pd.DataFrame({ROW_ID: [1, 2, 3, 4, 5], "y": ["a", "b", "b", "c", "b"]})
_REG_GT = pd.DataFrame({ROW_ID: [1, 2, 3, 4, 5], "y": [1.5, 2.0, 3.25, 4.0, 5.5]})
_REG_REF = pd.DataFrame({ROW_ID: [1, 2, 3, 4, 5], "y": [1.4, 2.2, 3.0, 4.1, 5.3]})
_TS_V1 = pd.DataFrame({ROW_ID: [1, 2, 3, 4], "y": [10.0, 12.0, 11.0, 15.0]})
_TS_V2 = pd.DataFrame({"date": ["20201120", "20201121", "20201122"], "state": ["56", "56", "56"], "y": [3.0, 5.0, 4.0]})


def _task(
    tmp_path: Path,
    kind: str = "classification",
    gt: pd.DataFrame | None = None,
    ref: pd.DataFrame | None = None,
    name: str | None = None,
    targets: tuple[str, ...] = ("y",),
) -> Path:
    """Write one task under tmp_path/tasks and register it in question_list.json.

    Tabular: gt -> ground_truth.csv (MM), ref -> simulated_pred_local.csv (IF).
    Time series: ref -> ground_truth_v1.csv (XF), gt -> ground_truth_v2.csv (CF).
    """
    root = tmp_path / "tasks"
    name = name or f"owner_{kind[:5]}_{TASK_SUFFIX[kind]}"
    verify = root / name / VERIFY_DIR
    verify.mkdir(parents=True)
    if kind == "time_series_analysis":
        (_TS_V1 if ref is None else ref).to_csv(verify / GROUND_TRUTH_V1, index=False)
        (_TS_V2 if gt is None else gt).to_csv(verify / GROUND_TRUTH_V2, index=False)
    else:
        default_gt, default_ref = (_CLASS_GT, _CLASS_REF) if kind == "classification" else (_REG_GT, _REG_REF)
        (default_gt if gt is None else gt).to_csv(verify / GROUND_TRUTH, index=False)
        (default_ref if ref is None else ref).to_csv(verify / SIMULATED_PRED, index=False)
    write_json(verify / ALL_METADATA, {"question": {"target": list(targets), "problem_type": kind}})
    question_list = root / QUESTION_LIST
    entries = read_json(question_list) if question_list.exists() else []
    write_json(question_list, [*entries, {"file_path": name, "task": kind}])
    return root / name


def _prediction(tmp_path: Path, frame: pd.DataFrame | str, name: str = "pred.csv") -> Path:
    path = tmp_path / name
    if isinstance(frame, str):
        path.write_text(frame, encoding="utf-8")
    else:
        frame.to_csv(path, index=False)
    return path


def _score(task_dir: Path, variant: str, tmp_path: Path, frame: pd.DataFrame | str) -> Score:
    return score_prediction(task_dir, variant, _prediction(tmp_path, frame))


# ------------------------------------------------------------------ happy paths


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_if_reference_scores_one(tmp_path: Path, kind: str) -> None:
    task = _task(tmp_path, kind)
    score = score_prediction(task, "v1", task / VERIFY_DIR / SIMULATED_PRED)
    assert (score.score, score.solved, score.reason) == (1.0, True, None)


def test_reference_predictions_score_one_everywhere(tmp_path: Path) -> None:
    for kind in TASK_SUFFIX:
        _task(tmp_path, kind)
    write_reference_predictions(tmp_path / "tasks", tmp_path / "preds")
    report = score_tree(tmp_path / "preds", tmp_path / "tasks")
    assert len(report.scores) == len(TASK_SUFFIX) * len(VARIANTS)
    assert all(s.score == 1.0 and s.reason is None for s in report.scores), format_report(report)
    assert [(s.task, s.variant) for s in report.scores] == sorted((s.task, s.variant) for s in report.scores)


def test_shuffled_rows_still_align_by_id(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    shuffled = _CLASS_REF.sample(frac=1.0, random_state=3)
    assert list(shuffled[ROW_ID]) != list(_CLASS_REF[ROW_ID])
    assert _score(task, "v1", tmp_path, shuffled).score == 1.0


def test_numeric_labels_compare_numerically(tmp_path: Path) -> None:
    ref = pd.DataFrame({ROW_ID: [1, 2, 3], "y": [0, 1, 1]})
    task = _task(tmp_path, "classification", gt=ref, ref=ref)
    written_as_floats = f"{ROW_ID},y\n1,0.0\n2, 1.0\n3,1\n"
    assert _score(task, "v1", tmp_path, written_as_floats).score == 1.0


def test_string_labels_are_stripped(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    padded = _CLASS_REF.assign(y=" " + _CLASS_REF["y"] + " ")
    assert _score(task, "v1", tmp_path, padded).score == 1.0


def test_single_misnamed_target_column_is_used(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    assert _score(task, "v1", tmp_path, _REG_REF.rename(columns={"y": "prediction"})).score == 1.0


def test_float_row_ids_are_accepted(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    assert _score(task, "v1", tmp_path, _REG_REF.assign(**{ROW_ID: _REG_REF[ROW_ID].astype(float)})).score == 1.0


# ------------------------------------------------------------------ metric values


def test_constant_prediction_fails_if_classification(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    score = _score(task, "v1", tmp_path, _CLASS_REF.assign(y="b"))
    assert (score.score, score.solved, score.reason, score.metric) == (0.0, False, None, "exact_match")


def test_allclose_tolerance(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    assert _score(task, "v1", tmp_path, _REG_REF.assign(y=_REG_REF["y"] + 1e-9)).score == 1.0
    assert _score(task, "v1", tmp_path, _REG_REF.assign(y=_REG_REF["y"] + 1e-3)).score == 0.0


def test_macro_f1_matches_sklearn(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    predicted = ["a", "a", "a", "c", "c"]
    expected = f1_score(_CLASS_GT["y"], predicted, average="macro")
    score = _score(task, "v2", tmp_path, _CLASS_GT.assign(y=predicted))
    assert score.metric == "macro_f1"
    assert score.score == pytest.approx(expected)
    assert 0.0 < score.score < 1.0


def test_r2_is_clipped_at_zero(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    terrible = _REG_GT.assign(y=-100.0 * _REG_GT["y"])
    score = _score(task, "v2", tmp_path, terrible)
    assert (score.score, score.reason, score.metric) == (0.0, None, "clipped_r2")


def test_multi_output_averages_targets(tmp_path: Path) -> None:
    gt = pd.DataFrame({ROW_ID: [1, 2, 3], "u": ["a", "b", "a"], "w": ["x", "y", "y"]})
    task = _task(tmp_path, "classification", gt=gt, ref=gt, targets=("u", "w"))
    assert _score(task, "v1", tmp_path, gt.assign(w="x")).score == 0.5


# ------------------------------------------------------------------ adversarial files


def test_missing_file_scores_zero_with_reason(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    score = score_prediction(task, "v1", tmp_path / "nowhere" / PREDICTION)
    assert score.score == 0.0 and score.reason and "missing prediction file" in score.reason


def test_empty_file_scores_zero_with_reason(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    score = _score(task, "v2", tmp_path, "")
    assert score.score == 0.0 and score.reason and "unreadable" in score.reason


def test_missing_row_id_scores_zero(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    score = _score(task, "v1", tmp_path, _CLASS_REF.drop(columns=[ROW_ID]))
    assert score.score == 0.0 and ROW_ID in score.reason


def test_missing_target_with_several_columns_scores_zero(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    score = _score(task, "v1", tmp_path, _CLASS_REF.rename(columns={"y": "p"}).assign(q=1))
    assert score.score == 0.0 and "target" in score.reason


def test_duplicate_row_ids_score_zero(tmp_path: Path) -> None:
    task = _task(tmp_path, "classification")
    doubled = pd.concat([_CLASS_REF, _CLASS_REF.iloc[[0]]])
    score = _score(task, "v1", tmp_path, doubled)
    assert score.score == 0.0 and "duplicate" in score.reason


@pytest.mark.parametrize(
    "frame",
    [
        pd.concat([_CLASS_REF, pd.DataFrame({ROW_ID: [99], "y": ["a"]})]),  # an id not in the ground truth
        _CLASS_REF.iloc[:-1],  # a ground-truth row with no prediction
    ],
    ids=["extra_row", "missing_row"],
)
def test_row_count_mismatch_scores_zero(tmp_path: Path, frame: pd.DataFrame) -> None:
    task = _task(tmp_path, "classification")
    score = _score(task, "v1", tmp_path, frame)
    assert score.score == 0.0 and "row-count mismatch" in score.reason


def test_non_numeric_regression_prediction_scores_zero(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    frame = _REG_REF.astype({"y": object})
    frame.loc[2, "y"] = "oops"
    for variant in VARIANTS:
        score = _score(task, variant, tmp_path, frame)
        assert score.score == 0.0 and "non-numeric" in score.reason


def test_nan_regression_prediction_scores_zero(tmp_path: Path) -> None:
    task = _task(tmp_path, "regression")
    score = _score(task, "v1", tmp_path, _REG_REF.assign(y=[1.4, np.nan, 3.0, 4.1, 5.3]))
    assert score.score == 0.0 and score.reason


# ------------------------------------------------------------------ time series


def test_ts_v2_ignores_extra_prediction_rows(tmp_path: Path) -> None:
    task = _task(tmp_path, "time_series_analysis")
    extra = pd.DataFrame({"date": ["20201123"], "state": ["56"], "y": [1e6]})
    frame = pd.concat([extra, _TS_V2.iloc[::-1]])
    assert _score(task, "v2", tmp_path, frame).score == 1.0


def test_ts_v2_ids_compare_as_written(tmp_path: Path) -> None:
    task = _task(tmp_path, "time_series_analysis")
    reformatted = _TS_V2.assign(date=pd.to_datetime(_TS_V2["date"]).dt.strftime("%Y-%m-%d"))
    score = _score(task, "v2", tmp_path, reformatted)
    assert score.score == 0.0 and "row-count mismatch" in score.reason


def test_ts_v1_extra_rows_are_a_mismatch(tmp_path: Path) -> None:
    task = _task(tmp_path, "time_series_analysis")
    frame = pd.concat([_TS_V1, pd.DataFrame({ROW_ID: [5], "y": [1.0]})])
    assert _score(task, "v1", tmp_path, frame).reason


def test_ts_scores_keep_dare_and_add_a_verdict_against_the_best_recorded_baseline(tmp_path: Path) -> None:
    task = _task(tmp_path, "time_series_analysis")
    meta = read_json(task / VERIFY_DIR / ALL_METADATA)
    meta["question"]["baselines"] = {"v1/seasonal_naive": 0.5, "v1/ets": 0.8, "v2/seasonal_naive": 0.0}
    write_json(task / VERIFY_DIR / ALL_METADATA, meta)
    y = _TS_V1["y"]
    close = _score(task, "v1", tmp_path, _TS_V1.assign(y=y + np.array([0.5, -0.5, 0.5, -0.5])))
    far = _score(task, "v1", tmp_path, _TS_V1.assign(y=y + np.array([2.0, -2.0, 2.0, -2.0])))
    assert close.baseline == far.baseline == 0.8  # the best v1 baseline is the bar
    assert close.beats_baseline is True and far.beats_baseline is False and not close.solved
    assert close.to_json()["beats_baseline"] is True and "score" in close.to_json()
    # every CF baseline scores 0: no meaningful bar, so no verdict (DARE's score stays as it is)
    cf = _score(task, "v2", tmp_path, _TS_V2)
    assert (cf.score, cf.baseline, cf.beats_baseline) == (1.0, 0.0, None)
    tabular = _score(_task(tmp_path, "classification"), "v1", tmp_path, _CLASS_REF)
    assert tabular.baseline is None and "beats_baseline" not in tabular.to_json()
    write_reference_predictions(tmp_path / "tasks", tmp_path / "preds")
    text = format_report(score_tree(tmp_path / "preds", tmp_path / "tasks"))
    assert "best baseline 0.8000: beats it" in text and "best baseline 0.0000: no bar" in text
    assert "beats the best baseline 1/1, within 5% of it 1/1" in text


def test_a_forecast_just_below_the_baseline_is_within_5pct_and_never_said_to_beat_it(tmp_path: Path) -> None:
    task = _task(tmp_path, "time_series_analysis")
    meta = read_json(task / VERIFY_DIR / ALL_METADATA)
    forecast = _TS_V1.assign(y=_TS_V1["y"] + np.array([0.5, -0.5, 0.5, -0.5]))
    r2 = _score(task, "v1", tmp_path, forecast).score
    for baseline, beats, within, label in ((r2 / 0.99, False, True, "within 5% of it"),  # 1% below
                                           (r2 / 0.9, False, False, "more than 5% below it"),
                                           (r2, False, True, "within 5% of it"),  # equal is not better
                                           (r2 * 0.99, True, True, "beats it")):
        meta["question"]["baselines"] = {"v1/ets": baseline}
        write_json(task / VERIFY_DIR / ALL_METADATA, meta)
        score = _score(task, "v1", tmp_path, forecast)
        assert (score.beats_baseline, score.within_5pct_of_baseline, score.baseline_label) == (beats, within, label)
        assert score.to_json()["beats_baseline"] is beats
        assert score.to_json()["within_5pct_of_baseline"] is within
    meta["question"]["baselines"] = {"v1/ets": r2 / 0.99}
    write_json(task / VERIFY_DIR / ALL_METADATA, meta)
    preds = tmp_path / "preds"
    write_reference_predictions(tmp_path / "tasks", preds)
    forecast.to_csv(preds / task.name / "v1" / PREDICTION, index=False)
    text = format_report(score_tree(preds, tmp_path / "tasks"))
    assert "beats it" not in text and f"best baseline {r2 / 0.99:.4f}: within 5% of it" in text
    assert "beats the best baseline 0/1, within 5% of it 1/1" in text


# ------------------------------------------------------------------ tree, report, registry


def test_summary_json_is_written_and_canonical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _task(tmp_path, "classification")
    task = _task(tmp_path, "regression")
    write_reference_predictions(tmp_path / "tasks", tmp_path / "preds")
    (tmp_path / "preds" / task.name / "v2" / PREDICTION).unlink()

    report = run_score(tmp_path / "preds", tmp_path / "tasks", None)

    summary = tmp_path / "preds" / SCORE_SUMMARY
    text = summary.read_text(encoding="utf-8")
    assert text == dumps(report.to_json())
    assert json.loads(text)["variants"]["v2"] == {
        "mean_score": 0.5,
        "n_scored": 2,
        "n_solved": 1,
        "n_unscorable": 1,
        "solved_rate": 0.5,
        "n_with_baseline": 0,
        "n_beat_baseline": 0,
        "n_within_5pct_of_baseline": 0,
    }
    printed = capsys.readouterr().out
    assert "missing prediction file" in printed and "2 task(s)" in printed


def test_summary_path_can_be_chosen(tmp_path: Path) -> None:
    _task(tmp_path, "classification")
    run_score(tmp_path / "preds", tmp_path / "tasks", tmp_path / "out" / "s.json")
    assert read_json(tmp_path / "out" / "s.json")["n_unscorable"] == 2
    assert not (tmp_path / "preds" / SCORE_SUMMARY).exists()


def test_question_list_and_metadata_must_agree(tmp_path: Path) -> None:
    _task(tmp_path, "classification")
    ql = tmp_path / "tasks" / QUESTION_LIST
    write_json(ql, [{**read_json(ql)[0], "task": "regression"}])
    report = score_tree(tmp_path / "preds", tmp_path / "tasks")  # that task is skipped, by name, with why
    assert report.scores == () and len(report.skipped) == 1 and "says 'regression'" in report.skipped[0][1]


def test_registry_covers_every_kind_and_variant() -> None:
    every = {(kind, v) for kind in TASK_SUFFIX for v in VARIANTS}
    assert set(REFERENCES) == set(DEFAULT_METRICS) == every
    assert all(scoring_rule(kind, v).metric.name == DEFAULT_METRICS[(kind, v)] for kind, v in every)


def test_a_new_registry_entry_and_its_choice_are_all_scoring_needs(tmp_path: Path, monkeypatch) -> None:
    """Balanced accuracy as a registry entry chosen for MM classification: score uses it by name, with its
    own solved threshold, and nothing else in the scorer changes."""
    from sklearn.metrics import balanced_accuracy_score

    def balanced_accuracy(reference, prediction) -> float:
        ref, pred = metrics.canonical_labels(reference, prediction)
        return float(balanced_accuracy_score(ref.to_numpy(), pred.to_numpy()))

    entry = metrics.Metric("balanced_accuracy", "balanced accuracy", balanced_accuracy,
                           metrics.one_at_a_time(balanced_accuracy), True, 0.5, "labels as for macro-F1.")
    monkeypatch.setitem(metrics.METRICS, entry.name, entry)
    monkeypatch.setitem(metrics.DEFAULT_METRICS, ("classification", "v2"), entry.name)
    task = _task(tmp_path, "classification")
    # ground truth a b a c b; predicted a b b c b: recall a 1/2, b 1, c 1
    score = _score(task, "v2", tmp_path, _CLASS_REF)
    assert (score.metric, score.reason) == ("balanced_accuracy", None)
    assert score.score == pytest.approx((0.5 + 1 + 1) / 3)
    assert score.solved  # 0.83 clears the entry's own 0.5, not the default 0.95
    assert _score(task, "v1", tmp_path, _CLASS_REF).metric == "exact_match"  # the other choices stay


def test_score_rejects_reason_with_nonzero_score() -> None:
    with pytest.raises(ValueError):
        Score("t", "v1", "exact_match", 0.5, reason="bad")


# ------------------------------------------------------------------ real DARE-bench examples


def _copy_examples(tmp_path: Path, kinds: set[str]) -> Path:
    root = tmp_path / "tasks"
    root.mkdir()
    entries = [e for e in read_json(EXAMPLES / QUESTION_LIST) if e["task"] in kinds]
    for entry in entries:
        shutil.copytree(EXAMPLES / entry["file_path"] / VERIFY_DIR, root / entry["file_path"] / VERIFY_DIR)
    write_json(root / QUESTION_LIST, entries)
    return root


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="DARE-bench examples not present")
def test_real_tabular_examples_score_one_on_their_references(tmp_path: Path) -> None:
    root = _copy_examples(tmp_path, {"classification", "regression"})
    preds = tmp_path / "preds"
    for task_dir in (p for p in root.iterdir() if p.is_dir()):
        for variant, reference in (("v1", SIMULATED_PRED), ("v2", GROUND_TRUTH)):
            (preds / task_dir.name / variant).mkdir(parents=True)
            shutil.copyfile(task_dir / VERIFY_DIR / reference, preds / task_dir.name / variant / PREDICTION)
    report = score_tree(preds, root)
    assert len(report.scores) == 4
    assert all(s.score == 1.0 for s in report.scores), format_report(report)


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="DARE-bench examples not present")
def test_real_examples_cross_scores_are_plausible(tmp_path: Path) -> None:
    """The IF reference scored as an MM answer lands strictly between 0 and 1, and vice versa fails IF."""
    root = _copy_examples(tmp_path, {"classification", "regression", "time_series_analysis"})
    write_reference_predictions(root, tmp_path / "preds")
    assert all(s.score == 1.0 for s in score_tree(tmp_path / "preds", root).scores)
    for task_dir in (p for p in root.iterdir() if p.is_dir() and not p.name.endswith("_ts")):
        as_mm = score_prediction(task_dir, "v2", task_dir / VERIFY_DIR / SIMULATED_PRED)
        as_if = score_prediction(task_dir, "v1", task_dir / VERIFY_DIR / GROUND_TRUTH)
        assert as_mm.reason is None and 0.0 < as_mm.score < 1.0
        assert (as_if.score, as_if.reason) == (0.0, None)
