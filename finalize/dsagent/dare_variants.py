"""Desktop variants of a built tabular DARE task: IF (v1) and MM (v2), same instruction and metric.
(Time-series XF/CF variants: ts_variants.py.)

The instruction is the task's own question text with a preamble saying where the
files are and where prediction.csv goes; the evaluator scores prediction.csv
exactly as DARE-bench does (IF: exact match / numpy.allclose against the
reference predictions; MM: macro-F1 / clipped R² against the ground truth). MM
is a free-modelling metric, so its score is the metric relative to the
reference model's metric on the same rows: matching the reference solves it.
"""

from __future__ import annotations

from pathlib import Path

from finalize.dsagent import evaluator_template
from finalize.dsagent.oracles import program
from finalize.dsagent.records import DesktopTask
from finalize.mm_check import MIN_MARGIN
from pipeline.core import names
from pipeline.core.if_workflow import workflow_question
from pipeline.core.jsonio import read_json
from pipeline.core.metrics import SCORING_SENTENCES, SOLVED_THRESHOLD, metric_for
from pipeline.core.records import DatasetRejected
from pipeline.core.text import md_name

TASK_FOLDER = "<TASK_FOLDER>"  # replaced by the VM path when the config is written
PREDICTION_PERTURBATIONS = ("missing_file", "wrong_value", "wrong_column", "shuffled_ids")

# The oracles run the kernel's one IF workflow (pipeline/core/if_workflow.py), rendered into the script:
# IF as the instruction says (train_v1, joined, filtered by the expected ranges), MM on train_v2.
_IF_BODY = '''
prediction = if_workflow(P["question"], P["train"], P["val"], noisy=True)
prediction.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''

_MM_BODY = '''
prediction = fit_predict(P["question"], read_table(P["train"]), read_table(P["val"]))
prediction.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''


def scoring_note(check: dict, question: str, bar_of: str = "the reference model's") -> str:
    """What the desktop evaluator checks beyond the task's own text `question`: the columns of
    prediction.csv by their exact names (unlike DARE's scorer it takes no misnamed prediction column,
    and a published DARE question may leave it unnamed), the metric when the question does not state
    it (pipeline.core.metrics.SCORING_SENTENCES, as daregen's questions do) and, for a free-modelling
    check, the bar the score is relative to (`bar_of`: whose metric on the same rows)."""
    columns = ", ".join(md_name(c) for c in [*check["id_columns"], *check["targets"]])
    parts = [f"Columns: `{names.PREDICTION}` holds {columns}, named exactly so (the predictions under the "
             "target's name)."]
    sentence = SCORING_SENTENCES[check["metric"]]
    if sentence not in question:
        parts.append(sentence)
    if check.get("reference_metric"):
        parts.append(f"Here the score is that metric divided by {bar_of} on the same rows, capped at 1; "
                     f"{SOLVED_THRESHOLD} or more solves the task.")
    return "\n\n" + " ".join(parts)


def preamble(files: list[str]) -> str:
    listed = ", ".join(f"`{f}`" for f in files)
    return (f"You are working in a desktop with VS Code, Jupyter and a terminal. The task folder "
            f"`{TASK_FOLDER}` is open and holds {listed}. Work in that folder and save the result as "
            f"`{TASK_FOLDER}/{names.PREDICTION}`.\n\n")


def dare_variants(task_dir: Path, question: dict, entry: dict) -> tuple[list[DesktopTask], dict[str, str]]:
    """The IF and MM desktop tasks of one built tabular DARE task, and {task key: why not} for the
    variants that cannot be made (raises DatasetRejected when the task has none)."""
    if "prediction_starting_time" in question or question.get("problem_type") not in ("classification",
                                                                                        "regression"):
        raise DatasetRejected("not a tabular task: time-series variants are made by ts_variants")
    name, ftype = task_dir.name, question["save_file_type"]
    src = f"{name}/{names.SOURCE_DIR}"
    verify = task_dir / names.VERIFY_DIR
    if len(question["target"]) != 1:
        raise DatasetRejected("multi-output targets are not supported by the desktop variants")
    try:
        q = workflow_question(question)
    except ValueError as exc:
        raise DatasetRejected(f"the IF workflow cannot run this question: {exc}") from exc
    out, rejected = [], {}
    for variant, kind, stem_train, stem_val, qkey in (("v1", "if", names.TRAIN_V1, names.VAL_V1, "question_v1"),
                                                      ("v2", "mm", names.TRAIN_V2, names.VAL_V2, "question_v2")):
        metric = metric_for(question["problem_type"], variant)
        train_f, val_f = names.data_file(stem_train, ftype), names.data_file(stem_val, ftype)
        files = [train_f, val_f, names.METADATA_TXT]
        if kind == "if":
            # DARE's own reference predictions. Noise rows are interleaved into train_v1 with the clean rows
            # kept in order, so filtering train_v1 as instructed gives train_v1_no_err row for row and even
            # order-sensitive models (MLP mini-batches, liblinear) refit to the same predictions; the
            # oracle, which follows the instruction literally, proves it at build time or the task is dropped.
            bar, origin = None, "simulated_pred_local"
            reference_csv = (verify / names.SIMULATED_PRED).read_text(encoding="utf-8")
            body, steps = _IF_BODY, ("load and join the training data", "filter by expected ranges",
                                                  "drop missing targets", "select features", "impute",
                                                  "scale and one-hot encode", "fit the model",
                                                  "predict and save prediction.csv")
            stages = ("feature_engineering", "modelling")
        else:
            origin = "ground_truth"
            reference_csv = (verify / names.GROUND_TRUTH).read_text(encoding="utf-8")
            try:
                bar = _reference_metric(verify, question["target"], metric.name)
            except DatasetRejected as exc:
                rejected[f"{name}/{kind}"] = str(exc)
                continue
            body, steps = _MM_BODY, ("load the training data", "choose and fit a model",
                                                  "predict and save prediction.csv")
            stages = ("modelling",)
        check = {"kind": "prediction", "file": names.PREDICTION, "metric": metric.name, "id_columns": [names.ROW_ID],
                 "targets": list(question["target"]), "reference_file": "reference.csv"}
        if bar is not None:
            check["reference_metric"] = bar
        out.append(DesktopTask(
            key=f"{name}/{kind}", name=f"{name}__{kind}", source_task=name, category="modelling", kind=kind,
            steps=steps, stages=stages, instruction=preamble(files) + entry[qkey] + scoring_note(check, entry[qkey]),
            inputs={f: f"{src}/{f}" for f in files}, output=names.PREDICTION,
            expected={"check": check, "solved_threshold": metric.solved_threshold, "reference_origin": origin},
            reference_csv=reference_csv,
            oracle=program({"question": q if kind == "if" else {k: v for k, v in q.items() if k != "join_path"},
                            "train": train_f, "val": val_f}, body, pipeline=True),
            perturbations=PREDICTION_PERTURBATIONS))
    return out, rejected


def _reference_metric(verify: Path, targets: list[str], metric: str) -> float:
    """The reference solution's MM metric on the validation rows: the bar a desktop MM run must reach."""
    spec = {"file": names.SIMULATED_PRED, "reference_path": str(verify / names.GROUND_TRUTH), "metric": metric,
            "id_columns": [names.ROW_ID], "targets": list(targets)}
    value = round(evaluator_template.check_prediction(verify, spec), 6)
    # The reference is the IF pipeline, fit on the task's selected features only; those can all be noise
    # while other columns carry the signal (the MM check then passes on them). A bar at or below the
    # trivial answer is met by any output, even every label flipped, so the task could not be failed.
    # Trees without recorded MM baselines (published examples) take the clipped metric's 0 as trivial.
    recorded = (read_json(verify / names.ALL_METADATA).get("daregen") or {}).get("mm_baselines") or {}
    trivial = float(recorded.get(f"trivial_{metric}", 0.0))
    if value < trivial + MIN_MARGIN:
        raise DatasetRejected(f"reference {metric} on the MM rows is {value:g}, not {MIN_MARGIN} above the "
                              f"trivial answer's {trivial:g}; no bar for a desktop MM task")
    return value
