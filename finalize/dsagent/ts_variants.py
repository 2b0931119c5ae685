"""Desktop variants of a built time-series DARE task: XF (question_v1) and CF (question_v2).

The instruction is the task's own question text with the desktop preamble; the
evaluator scores prediction.csv as DARE-bench does (XF: clipped R² against
ground_truth_v1 aligned on row_id; CF: clipped R² against ground_truth_v2 aligned
on every identifier column, the time column read with `time_format`, extra rows
ignored, a missing identifier column scoring 0).

Solved means a score of at least SOLVED_THRESHOLD (0.95), and no forecaster reaches R² 0.95 on most
series, so the ground truth itself (R² 1) would make an unsolvable bar. The
score is instead the agent's R² relative to the best baseline daregen recorded
for the same rows (`question.baselines`: seasonal naive, ETS, SARIMAX; fitted by
postprocess.timeseries on train.csv alone): forecasting as well as a standard
statistical model counts as solved, as the MM variant counts matching the
reference model. A task whose best baseline is near 0 has no meaningful bar and
its variant is dropped with the reason.

The oracles are honest about what they know. No program reproduces the held-out
future from the agent-visible files, so both read the held-out rows as hidden
inputs (under `_hidden/`, copied only into the validation folder, never into the
VM): XF writes ground_truth_v1's values at val_v1's row_ids; CF executes the CF
instruction's aggregation (pipeline/core/ts_reference.py, embedded verbatim) on the
future rows, as the build does to write ground_truth_v2. Validation thus proves
the evaluator's alignment, parsing and rejection of wrong outputs, not that the
bar is reachable by forecasting (the recorded baselines show that it is).
"""

from __future__ import annotations

from pathlib import Path

from pipeline.core import ts_reference
from finalize.dsagent.dare_variants import preamble, scoring_note
from finalize.dsagent.oracles import program
from finalize.dsagent.records import DesktopTask
from pipeline.core import names
from pipeline.core.metrics import metric_for
from pipeline.core.records import DatasetRejected

HIDDEN_DIR = "_hidden"  # oracle-only inputs in the validation folder
MIN_BAR = 0.05  # as for MM: a best baseline below this does no better than the mean, no bar to reach
XF_PERTURBATIONS = ("missing_file", "wrong_value", "missing_id_column", "shuffled_ids")
CF_PERTURBATIONS = ("missing_file", "wrong_value", "missing_id_column", "time_format")
# Whose score the desktop forecast's is divided by: question.baselines, all fitted on train.csv alone.
BAR_OF = ("the best R² a standard forecasting baseline fitted to `train.csv` (seasonal naive, exponential smoothing, "
          "SARIMAX, drift, a trend or an autoregression) reaches")

_XF_BODY = '''
val = pd.read_csv(P["val"], dtype=str, keep_default_na=False)
truth = pd.read_csv(P["truth_v1"], dtype=str, keep_default_na=False)
out = val[["row_id"]].merge(truth[["row_id", P["target"]]], on="row_id", how="left", validate="one_to_one")
out.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''

_CF_BODY = '''
q = P["question"]
target = q["target"][0]
keys = pd.read_csv(P["val"], dtype=str, keep_default_na=False)
future = pd.read_csv(P["future_v1"], dtype=str, keep_default_na=False)
truth = pd.read_csv(P["truth_v1"], dtype=str, keep_default_na=False)
future = future.drop(columns=[target], errors="ignore").merge(truth[["row_id", target]], on="row_id",
                                                              how="inner", validate="one_to_one")
future[target] = pd.to_numeric(future[target], errors="coerce")
ground_truth_v2(q, future, keys).to_csv("prediction.csv", index=False, lineterminator="\\n")
'''

_REFERENCE_KEYS = ("target", "time_column", "time_format", "is_resampled", "resample_rule",
                   "resample_aggregation")


def best_recorded_baseline(question: dict, variant: str) -> tuple[str, float] | None:
    """(name, R²) of the best recorded `variant/*` baseline of a time-series task, or None."""
    recorded = {k: v for k, v in (question.get("baselines") or {}).items()
                if k.startswith(f"{variant}/") and isinstance(v, (int, float)) and not isinstance(v, bool)}
    return max(sorted(recorded.items()), key=lambda kv: kv[1]) if recorded else None


def best_baseline(question: dict, variant: str) -> float:
    """The highest recorded R² of the `variant/*` baselines: the bar a desktop forecast must reach."""
    best = best_recorded_baseline(question, variant)
    if best is None:
        raise DatasetRejected(f"no {variant} baseline recorded in all_metadata.json; no bar for a desktop forecast")
    name, value = best
    if value < MIN_BAR:
        raise DatasetRejected(f"best {variant} baseline R² is {value:g} ({name}); no bar for a desktop forecast")
    return round(float(value), 6)


def _reference_source() -> str:
    """pipeline/core/ts_reference.py as oracle code (its __future__ import must lead a file, so it goes)."""
    text = Path(ts_reference.__file__).read_text(encoding="utf-8")
    return text.replace("from __future__ import annotations\n", "")


def ts_variants(task_dir: Path, question: dict, entry: dict) -> tuple[list[DesktopTask], dict[str, str]]:
    """The XF and CF desktop tasks of one built time-series DARE task, and {task key: why not}."""
    name = task_dir.name
    if len(question.get("target") or []) != 1:
        raise DatasetRejected("multi-output targets are not supported by the desktop variants")
    target = question["target"][0]
    src, verify = f"{name}/{names.SOURCE_DIR}", f"{name}/{names.VERIFY_DIR}"
    val_v1, val_v2 = names.data_file(names.VAL_V1, "csv"), names.data_file(names.VAL_V2, "csv")
    hidden_truth, hidden_future = f"{HIDDEN_DIR}/{names.GROUND_TRUTH_V1}", f"{HIDDEN_DIR}/{val_v1}"
    out, rejected = [], {}
    for kind, variant, qkey, val_f, reference in (("xf", "v1", "question_v1", val_v1, names.GROUND_TRUTH_V1),
                                                  ("cf", "v2", "question_v2", val_v2, names.GROUND_TRUTH_V2)):
        key = f"{name}/{kind}"
        try:
            bar = best_baseline(question, variant)
        except DatasetRejected as exc:
            rejected[key] = str(exc)
            continue
        reference_csv = (task_dir / names.VERIFY_DIR / reference).read_text(encoding="utf-8")
        files = [names.TS_TRAIN_CSV, val_f, names.METADATA_TXT]
        metric = metric_for(names.TIME_SERIES_PROBLEM, variant)
        check = {"kind": "prediction", "file": names.PREDICTION, "metric": metric.name, "targets": [target],
                 "reference_file": "reference.csv", "reference_metric": bar}
        if kind == "xf":
            check.update(id_columns=[names.ROW_ID], time_ordered=True)
            oracle = program({"val": val_f, "truth_v1": hidden_truth, "target": target}, _XF_BODY)
            oracle_inputs = {hidden_truth: f"{verify}/{names.GROUND_TRUTH_V1}"}
            steps = ("load train.csv", "parse the time column", "fit a forecaster with the known features",
                     "predict at val_v1's time points", "save prediction.csv with row_id")
            perturbations = XF_PERTURBATIONS
        else:
            header = reference_csv.split("\n", 1)[0]
            ids = [c for c in _csv_header(header) if c != target]
            if question.get("time_column") not in ids or not question.get("time_format"):
                rejected[key] = "the CF ground truth has no time column with a time_format to align on"
                continue
            if question.get("is_resampled") and not (question.get("resample_rule")
                                                     and question.get("resample_aggregation")):
                # DARE-bench's own resampled tasks do not record how; the CF oracle could not redo it.
                rejected[key] = "resampled CF task without resample_rule/resample_aggregation; no CF oracle"
                continue
            check.update(id_columns=ids, time_column=question["time_column"],
                         time_format=question["time_format"], ignore_extra_rows=True)
            params = {"question": {k: question[k] for k in _REFERENCE_KEYS if k in question},
                      "val": val_f, "future_v1": hidden_future, "truth_v1": hidden_truth}
            oracle = program(params, _reference_source() + "\n" + _CF_BODY)
            oracle_inputs = {hidden_future: f"{src}/{val_v1}", hidden_truth: f"{verify}/{names.GROUND_TRUTH_V1}"}
            steps = ("load train.csv", "parse the time column", "resample each series as instructed",
                     "fit a forecaster per series", "forecast at val_v2's keys", "save prediction.csv")
            perturbations = CF_PERTURBATIONS
        out.append(DesktopTask(
            key=key, name=f"{name}__{kind}", source_task=name, category="modelling", kind=kind, steps=steps,
            stages=("feature_engineering", "modelling"), instruction=preamble(files) + entry[qkey]
            + scoring_note(check, entry[qkey], BAR_OF),
            inputs={f: f"{src}/{f}" for f in files}, output=names.PREDICTION,
            expected={"check": check, "solved_threshold": metric.solved_threshold, "reference_origin": reference.removesuffix(".csv")},
            reference_csv=reference_csv, oracle=oracle, perturbations=perturbations, oracle_inputs=oracle_inputs))
    return out, rejected


def _csv_header(line: str) -> list[str]:
    import csv

    return next(csv.reader([line.rstrip("\r")]))
