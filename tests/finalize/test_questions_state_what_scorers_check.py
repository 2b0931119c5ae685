"""Every question states each thing its scorers check (the prediction column, the metric, the precision an
IF regression needs, which rows or timestamps to predict and the one time format both scorers accept), and a
prediction written by following the question literally scores full marks under `daregen score` and under
the DSAgentBench evaluator alike.

"Literally" means the test reads what it needs from the question's words (the column it names, the time
format it names), never from all_metadata.json, and writes the numbers as pandas writes them by default.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.dsagent import evaluator_template
from finalize.dsagent.dare_variants import dare_variants
from finalize.dsagent.ts_variants import ts_variants
from pipeline.core import names
from pipeline.core.if_workflow import if_workflow, workflow_question
from pipeline.core.jsonio import read_json
from pipeline.core.metrics import SCORING_SENTENCES, metric_for
from pipeline.core.records import DatasetRejected
from pipeline.review.score import score_prediction, scoring_rule
from pipeline.steps import ENTRY_JSON
from tests.factories import build_local_task, build_table, task_folder
from tests.finalize.test_timeseries_task import _events, _panel, _write

COLUMN_NAMED = re.compile(r"in a column named `([^`]+)`")
FORMAT_NAMED = re.compile(r"in the strftime format `([^`]+)`")


def _named_column(question: str) -> str:
    [column] = COLUMN_NAMED.findall(question)  # one target: exactly one column named
    return column


def _both_scores(task_dir: Path, variant: str, frame: pd.DataFrame, tmp_path: Path, check: dict) -> tuple[float, float]:
    """(daregen score, desktop evaluator) for one prediction, the evaluator given the same reference file."""
    folder = tmp_path / f"{task_dir.name}_{variant}_{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    frame.to_csv(folder / names.PREDICTION, index=False)  # pandas' defaults: full precision
    kind = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]["problem_type"]
    shutil.copyfile(task_dir / names.VERIFY_DIR / scoring_rule(kind, variant).reference_file, folder / "reference.csv")
    dare = score_prediction(task_dir, variant, folder / names.PREDICTION).score
    desktop = evaluator_template.evaluate(folder, {"check": {**check, "reference_file": "reference.csv"}}, folder)
    return dare, desktop


# ------------------------------------------------------------------------------------------- tabular


@pytest.fixture(scope="module")
def tabular_tasks(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """A classification and a regression task built through every stage, with their question-list entries."""
    root = tmp_path_factory.mktemp("questions")
    out = {}
    table = build_table(n=200)
    rng = np.random.default_rng(7)
    table["price"] = 3 * table["x"] + (table["colour"] == "red") + rng.normal(scale=0.5, size=len(table))
    for kind, hint, ftype in (("classification", "label", "csv"), ("regression", "price", "parquet")):
        outcome = build_local_task(root / kind, f"shop_{kind}", table, ftype, 3, title="Shop visits",
                                   license="CC0-1.0", target_hint=hint,
                                   column_descriptions={"x": "A standard normal score", "price": "Sale price"})
        task_dir = task_folder(root / kind, outcome)
        entry = read_json(Path(outcome.work_dir) / ENTRY_JSON)
        out[kind] = (task_dir, entry)
    return out


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_if_question_states_column_metric_precision_and_step_order(tabular_tasks, kind, tmp_path) -> None:
    task_dir, entry = tabular_tasks[kind]
    question = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    text = entry["question_v1"]
    metric = metric_for(kind, "v1")
    assert _named_column(text) == question["target"][0]
    assert SCORING_SENTENCES[metric.name] in text
    # Issue 49: what solves a task and that a repeated row scores 0 were left for a blind solver to guess.
    assert "Two predictions for one row (the same `row_id`) score 0. A score of 0.95 or more solves the task." in text
    if kind == "regression":  # rounding to 2 decimals scores 0 under numpy.allclose: the text says so
        assert "full floating-point precision, not rounded" in text
    assert "Impute first, then scale and encode" in text  # the order, not only implied by the sentences
    assert f"one row for each row of `{names.data_file(names.VAL_V1, question['save_file_type'])}`" in text

    # the workflow, run as the question spells it, written under the column it names
    src = task_dir / names.SOURCE_DIR
    ftype = question["save_file_type"]
    prediction = if_workflow(workflow_question(question), src / names.data_file(names.TRAIN_V1, ftype),
                             src / names.data_file(names.VAL_V1, ftype), noisy=True)
    prediction = prediction.rename(columns={question["target"][0]: _named_column(text)})
    [task] = [t for t in dare_variants(task_dir, question, entry)[0] if t.kind == "if"]
    assert _both_scores(task_dir, "v1", prediction, tmp_path, task.expected["check"]) == (1.0, 1.0)
    if kind == "regression":  # what the stated precision protects against
        rounded = prediction.assign(**{question["target"][0]: prediction[question["target"][0]].round(2)})
        assert _both_scores(task_dir, "v1", rounded, tmp_path, task.expected["check"]) == (0.0, 0.0)


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_mm_question_names_the_prediction_column_and_the_metric(tabular_tasks, kind, tmp_path) -> None:
    task_dir, entry = tabular_tasks[kind]
    question = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    text = entry["question_v2"]
    assert _named_column(text) == question["target"][0]
    assert SCORING_SENTENCES[metric_for(kind, "v2").name] in text
    # a perfect model's answer, under the column the question names
    truth = pd.read_csv(task_dir / names.VERIFY_DIR / names.GROUND_TRUTH)
    prediction = truth.rename(columns={question["target"][0]: _named_column(text)})
    tasks, rejected = dare_variants(task_dir, question, entry)
    mm = [t for t in tasks if t.kind == "mm"]
    if not mm:
        pytest.skip(f"no desktop MM variant: {rejected}")
    assert _both_scores(task_dir, "v2", prediction, tmp_path, mm[0].expected["check"]) == (1.0, 1.0)


def test_desktop_instructions_state_the_metric_once_and_the_bar_when_relative(tabular_tasks) -> None:
    for task_dir, entry in tabular_tasks.values():
        question = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
        for task in dare_variants(task_dir, question, entry)[0]:
            check = task.expected["check"]
            assert task.instruction.count(SCORING_SENTENCES[check["metric"]]) == 1
            assert f"`{names.PREDICTION}` holds `row_id`, `{check['targets'][0]}`, named exactly so" in task.instruction
            assert ("divided by the reference model's" in task.instruction) == ("reference_metric" in check)


# ------------------------------------------------------------------------------------------- time series


@pytest.fixture(scope="module")
def ts_tasks(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """A panel with an exogenous feature (XF) and an event series resampled to months (CF)."""
    return {"panel": _write(tmp_path_factory.mktemp("panel"), _panel(), "inv"),
            "events": _write(tmp_path_factory.mktemp("events"), _events(), "price")}


def _ts_check(task_dir: Path, question: dict, entry: dict, kind: str) -> dict:
    """The desktop check of the XF or CF variant; built as ts_variants builds it when the recorded
    baselines give no bar (a synthetic series may not), without the bar."""
    try:
        tasks, _ = ts_variants(task_dir, question, entry)
    except DatasetRejected:
        tasks = []
    for task in tasks:
        if task.kind == kind:
            return {k: v for k, v in task.expected["check"].items() if k != "reference_metric"}
    check = {"kind": "prediction", "file": names.PREDICTION, "metric": "r2", "targets": list(question["target"])}
    if kind == "xf":
        return {**check, "id_columns": [names.ROW_ID]}
    gt2 = pd.read_csv(task_dir / names.VERIFY_DIR / names.GROUND_TRUTH_V2, dtype=str, nrows=0)
    return {**check, "id_columns": [c for c in gt2.columns if c not in question["target"]],
            "time_column": question["time_column"], "time_format": question["time_format"], "ignore_extra_rows": True}


@pytest.mark.parametrize("which", ["panel", "events"])
def test_xf_question_names_the_prediction_column_rows_and_metric(ts_tasks, which, tmp_path) -> None:
    task_dir, entry = ts_tasks[which]
    question = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    text = entry["question_v1"]
    target = question["target"][0]
    assert _named_column(text) == target  # the desktop evaluator reads the predictions by this name only
    assert "exactly one row for each row of `val_v1.csv`" in text
    assert SCORING_SENTENCES["r2"] in text
    assert "Two predictions for one row (the same `row_id`) score 0. A score of 0.95 or more solves the task." in text
    assert ("Two predictions for one row (the same identifiers and time point) score 0. A score of 0.95 or more "
            "solves the task.") in entry["question_v2"]
    truth = pd.read_csv(task_dir / names.VERIFY_DIR / names.GROUND_TRUTH_V1)
    val = pd.read_csv(task_dir / names.SOURCE_DIR / "val_v1.csv", dtype=str)
    prediction = val[[names.ROW_ID]].astype(int).merge(truth, on=names.ROW_ID).rename(
        columns={target: _named_column(text)})
    assert _both_scores(task_dir, "v1", prediction, tmp_path, _ts_check(task_dir, question, entry, "xf")) == (1.0, 1.0)


@pytest.mark.parametrize("which", ["panel", "events"])
def test_cf_question_names_rows_column_format_and_metric_and_both_scorers_agree(ts_tasks, which, tmp_path) -> None:
    task_dir, entry = ts_tasks[which]
    question = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    text = entry["question_v2"]
    target, time_column = question["target"][0], question["time_column"]
    assert _named_column(text) == target
    assert "earliest and latest" not in text  # DARE-bench's sentence, which scores 0 when read literally
    assert "Predict the target at every row of `val_v2.csv`" in text
    assert SCORING_SENTENCES["r2"] in text
    [fmt] = FORMAT_NAMED.findall(text)
    assert fmt == question["time_format"]
    val_v2 = pd.read_csv(task_dir / names.SOURCE_DIR / "val_v2.csv", dtype=str, keep_default_na=False)
    assert f"for example `{val_v2[time_column].iloc[0]}`" in text
    check = _ts_check(task_dir, question, entry, "cf")

    # the rows of val_v2, the time written in the format the question names, the values under the named column
    truth = pd.read_csv(task_dir / names.VERIFY_DIR / names.GROUND_TRUTH_V2, dtype=str, keep_default_na=False)
    ids = [c for c in truth.columns if c != target]
    times = pd.to_datetime(truth[time_column], format=fmt)
    literal = truth.assign(**{time_column: times.dt.strftime(fmt)}).rename(columns={target: _named_column(text)})
    assert _both_scores(task_dir, "v2", literal[ids + [_named_column(text)]], tmp_path, check) == (1.0, 1.0)
    # the same instants in another spelling: 0 under both scorers, as the question says
    other = "%Y-%m-%d" if fmt != "%Y-%m-%d" else "%Y-%m-%dT%H:%M:%S"
    respelled = literal.assign(**{time_column: times.dt.strftime(other)})
    assert _both_scores(task_dir, "v2", respelled[ids + [_named_column(text)]], tmp_path, check) == (0.0, 0.0)
