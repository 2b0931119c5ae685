"""DARE-bench's own scripts against a daregen tree: do they agree with what the tree records?

    .venv/bin/python bench/bench_dare_scripts.py --dare-repo PATH TREE [--work DIR] [--no-mm]

PATH is an extracted checkout of DARE-bench (github.com/Snowflake-Labs/dare-bench, Apache-2.0; its
code is run from there, never copied here), holding `scripts/reference_solution.py` and
`scripts/evaluation.py`. Both run in subprocesses with this interpreter (the venv's python), offline
(neither touches the network without `--use-sandbox`, which is never passed), exactly as DARE-bench's
README runs them in batch mode:

- `reference_solution.py --databases_dir D --question_list D/question_list.json --output_dir C
  --execute` on a copy D of the tree whose `verify/simulated_pred_local.csv` files were deleted, so
  every one it leaves behind is one it wrote (it writes into verify/ and source/, so never the tree
  itself). It renders its template from `all_metadata.json` and runs it with cwd=source/; it skips
  time series by design (its template is tabular only).
- `evaluation.py --predictions_dir P --databases_dir TREE --question_list TREE/question_list.json
  --version v1|v2 --output J`, once per prediction set and variant, on the tree itself (read only).

Per task, each comparison either agrees or is a disagreement with its reason:

- `ref`    (tabular) DARE's reference script ran and wrote simulated_pred_local.csv;
- `IF`     (tabular) evaluation.py v1 scores DARE's regenerated predictions against our recorded
           simulated_pred_local.csv at the maximum, 1.0 (exact match / numpy.allclose); whether the two
           files are also byte-identical is shown, not judged;
- `MM`     (tabular, unless --no-mm) our MM reference predictions (finalize.mm_check, the fit behind
           `daregen.mm_baselines`) scored by evaluation.py v2, rounded as recorded, equal the recorded
           `reference_<metric>`;
- `truth`  (time series) the ground truth written as an agent would (v1: row_id + target; v2: the rows
           and columns of val_v2 + target) scores 1.0 on v1 and v2: val_v2 carries exactly the columns
           evaluation.py aligns on;
- `scorer` every prediction above, and a perturbed one per variant (a third of the rows changed),
           gets the same score from evaluation.py and from `daregen score` (|difference| <= 1e-9).

Printed: a per-task table, each disagreement with its reason, the counts and the timings; the last
line is `RESULT {json}`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from finalize.mm_check import assess_task
from pipeline.core import names
from pipeline.core.metrics import metric_for
from pipeline.review.score import score_prediction

REFERENCE_SCRIPT = Path("scripts") / "reference_solution.py"
EVALUATION_SCRIPT = Path("scripts") / "evaluation.py"
SCORER_TOLERANCE = 1e-9
MM_DIGITS = 4  # finalize.mm_check records reference_<metric> rounded to this many digits
PERTURB_EVERY = 3  # the perturbed prediction changes every third row
# The thread count our sandbox pins the reference to (finalize/sandbox.py); one thread also keeps
# this bench frugal on a shared machine.
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# DARE's batch runner reports a task it could not run as this line (its exception's text).
_FAILED_LINE = re.compile(r"^❌ Failed for (?P<task>\S+): (?P<reason>.*)$")


@dataclass(frozen=True)
class Check:
    """One comparison of one task: what DARE-bench's scripts say against what we expect."""

    task: str
    name: str
    agree: bool | None  # None: not applicable to this task (shown, never counted)
    detail: str = ""


# ------------------------------------------------------------------ pure judgements


def judge_reference_run(task: str, failure: str | None, regenerated: bool) -> Check:
    """DARE's reference script must have written verify/simulated_pred_local.csv for a tabular task."""
    if failure is not None:
        return Check(task, "ref", False, f"reference_solution.py failed: {failure}")
    if not regenerated:
        return Check(task, "ref", False, "reference_solution.py wrote no simulated_pred_local.csv")
    return Check(task, "ref", True, "ran")


def _dare_score(result: Mapping | None) -> tuple[float | None, str]:
    """evaluation.py's final_score for one task, or None with why it has none."""
    if result is None:
        return None, "evaluation.py did not score the task"
    if not result.get("prediction_exist"):
        return None, "evaluation.py found no prediction.csv"
    error = f" ({result['error']})" if result.get("error") else ""
    return float(result["final_score"]), error


def judge_expected(task: str, name: str, result: Mapping | None, expected: float, digits: int | None = None) -> Check:
    """evaluation.py's score, rounded to `digits` when given, must equal `expected`."""
    score, why = _dare_score(result)
    if score is None:
        return Check(task, name, False, why)
    shown = score if digits is None else round(score, digits)
    agree = abs(shown - expected) <= SCORER_TOLERANCE
    detail = f"evaluation.py {shown:.6g}{why}" + ("" if agree else f", expected {expected:.6g}")
    return Check(task, name, agree, detail)


def judge_scorer(task: str, name: str, result: Mapping | None, ours: float, our_reason: str | None) -> Check:
    """evaluation.py and `daregen score` must give one prediction the same score."""
    score, why = _dare_score(result)
    if score is None:
        return Check(task, name, False, why)
    agree = abs(score - ours) <= SCORER_TOLERANCE
    detail = f"evaluation.py {score:.6g}{why}, daregen {ours:.6g}"
    if our_reason and not agree:
        detail += f" ({our_reason})"
    return Check(task, name, agree, detail)


def disagreements(checks: Sequence[Check]) -> list[Check]:
    return [c for c in checks if c.agree is False]


# ------------------------------------------------------------------ predictions


def _read_text(path: Path) -> pd.DataFrame:
    """A CSV as the text it holds: ids and time keys must reach evaluation.py as we wrote them."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def perturbed(truth: pd.DataFrame, targets: Sequence[str], problem_type: str) -> pd.DataFrame:
    """`truth` with every PERTURB_EVERY-th row's targets changed: a label to the next label in sorted order
    (IF and MM classification), a number by half the column's standard deviation (plus one, so a constant
    column changes too). Scores strictly between the extremes for the continuous metrics."""
    out = truth.copy()
    rows = np.arange(len(out)) % PERTURB_EVERY == 0
    for t in targets:
        if problem_type == "classification":
            labels = sorted(set(out[t]))
            following = {a: labels[(i + 1) % len(labels)] for i, a in enumerate(labels)}
            out.loc[rows, t] = out.loc[rows, t].map(following)
        else:
            values = pd.to_numeric(out[t], errors="coerce")
            shift = float(np.nanstd(values)) / 2 + 1.0 if values.notna().any() else 1.0
            out[t] = values.where(~rows, values + shift).map(repr)
    return out


def ts_truth_v2(val_v2: pd.DataFrame, truth_v2: pd.DataFrame, targets: Sequence[str]) -> tuple[pd.DataFrame, str]:
    """The CF ground truth as an agent writes it: val_v2's rows and columns, plus the target. The second
    value names a layout fault (val_v2's columns are not the identifiers evaluation.py aligns on)."""
    keys = [c for c in truth_v2.columns if c not in set(targets)]
    fault = "" if list(val_v2.columns) == keys else (
        f"val_v2 columns {list(val_v2.columns)} are not ground_truth_v2's identifier columns {keys}")
    shared = [c for c in keys if c in val_v2.columns]
    return val_v2.merge(truth_v2, on=shared, how="left")[[*val_v2.columns, *targets]], fault


def mm_reference(task_dir: Path, question: dict) -> pd.DataFrame | None:
    """Our MM reference predictions (the fit behind daregen.mm_baselines), one row_id column and one
    column per target; None where the check made none."""
    predictions = assess_task(task_dir, question).reference_predictions
    if set(predictions) != set(question["target"]):
        return None
    frames = [predictions[t].set_index(names.ROW_ID) for t in question["target"]]
    return pd.concat(frames, axis=1, join="outer").reset_index()


def _write(frame: pd.DataFrame, pred_dir: Path, task: str) -> Path:
    path = pred_dir / task / names.PREDICTION
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, lineterminator="\n")
    return path


# ------------------------------------------------------------------ running DARE-bench's scripts


def _env() -> dict[str, str]:
    return {**os.environ, **SINGLE_THREAD, "PYTHONDONTWRITEBYTECODE": "1"}


def run_reference_solutions(dare_repo: Path, databases: Path, code_dir: Path) -> dict[str, str]:
    """Run DARE's reference script over `databases` in batch mode; task -> failure reason for each it reported."""
    proc = subprocess.run(
        [sys.executable, str(dare_repo / REFERENCE_SCRIPT), "--databases_dir", str(databases),
         "--question_list", str(databases / names.QUESTION_LIST), "--output_dir", str(code_dir), "--execute"],
        cwd=dare_repo / REFERENCE_SCRIPT.parent, env=_env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"reference_solution.py exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    found = (_FAILED_LINE.match(line) for line in proc.stdout.splitlines())
    return {m["task"]: m["reason"] for m in found if m}


def run_evaluation(dare_repo: Path, tree: Path, pred_dir: Path, variant: str, out: Path) -> dict[str, dict]:
    """evaluation.py over `tree` for `variant`; task -> its result (only tasks with a prediction in `pred_dir`)."""
    proc = subprocess.run(
        [sys.executable, str(dare_repo / EVALUATION_SCRIPT), "--predictions_dir", str(pred_dir),
         "--databases_dir", str(tree), "--question_list", str(tree / names.QUESTION_LIST),
         "--version", variant, "--output", str(out)],
        cwd=dare_repo / EVALUATION_SCRIPT.parent, env=_env(), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"evaluation.py exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    present = {p.name for p in pred_dir.iterdir()} if pred_dir.is_dir() else set()
    return {task: r for task, r in results.items() if task in present}


# ------------------------------------------------------------------ the bench


def _tasks(tree: Path) -> list[tuple[str, str]]:
    entries = json.loads((tree / names.QUESTION_LIST).read_text(encoding="utf-8"))
    return [(e["file_path"], e["task"]) for e in entries]


def _metadata(tree: Path, task: str) -> dict:
    return json.loads((tree / task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))


def _copy_tree(tree: Path, tasks: Sequence[tuple[str, str]], databases: Path) -> None:
    """The task folders and question_list.json, minus every simulated_pred_local.csv."""
    databases.mkdir(parents=True)
    shutil.copyfile(tree / names.QUESTION_LIST, databases / names.QUESTION_LIST)
    for task, _ in tasks:
        shutil.copytree(tree / task, databases / task, symlinks=True)
        (databases / task / names.VERIFY_DIR / names.SIMULATED_PRED).unlink(missing_ok=True)


def bench(dare_repo: Path, tree: Path, work: Path, mm: bool = True
          ) -> tuple[list[Check], dict[str, float], dict[str, bool]]:
    """The checks, the timings and, per tabular task DARE's script ran, whether its simulated_pred_local.csv is
    byte-identical to ours (shown, not judged: IF regression agrees up to numpy.allclose)."""
    tasks = _tasks(tree)
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    # DARE's batch runner reads every question_list entry's metadata, time series included (it skips them).
    _copy_tree(tree, tasks, work / "databases")
    timings["copy_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    failures = run_reference_solutions(dare_repo, work / "databases", work / "reference_code")
    timings["reference_solution_s"] = time.perf_counter() - clock

    # Prediction sets: <work>/pred/<set>/<variant>/<task>/prediction.csv
    pred = work / "pred"
    checks: list[Check] = []
    mm_expected: dict[str, float] = {}
    byte_identical: dict[str, bool] = {}
    clock_mm = 0.0
    for task, kind in tasks:
        question = _metadata(tree, task)["question"]
        targets = list(question["target"])
        verify = tree / task / names.VERIFY_DIR
        if kind == names.TIME_SERIES_PROBLEM:
            checks.append(Check(task, "ref", None, "skipped by reference_solution.py (tabular only)"))
            truth_v1 = _read_text(verify / names.GROUND_TRUTH_V1)
            truth_v2 = _read_text(verify / names.GROUND_TRUTH_V2)
            val_v2 = _read_text(tree / task / names.SOURCE_DIR / names.data_file(names.VAL_V2, "csv"))
            _write(truth_v1, pred / "reference" / "v1", task)
            as_agent, fault = ts_truth_v2(val_v2, truth_v2, targets)
            if fault:
                checks.append(Check(task, "truth v2 layout", False, fault))
            _write(as_agent, pred / "reference" / "v2", task)
            _write(perturbed(truth_v1, targets, kind), pred / "perturbed" / "v1", task)
            _write(perturbed(truth_v2, targets, kind), pred / "perturbed" / "v2", task)
            continue
        regenerated = work / "databases" / task / names.VERIFY_DIR / names.SIMULATED_PRED
        checks.append(judge_reference_run(task, failures.get(task), regenerated.is_file()))
        if regenerated.is_file():
            byte_identical[task] = regenerated.read_bytes() == (verify / names.SIMULATED_PRED).read_bytes()
            _write(_read_text(regenerated), pred / "reference" / "v1", task)
        _write(perturbed(_read_text(verify / names.SIMULATED_PRED), targets, kind), pred / "perturbed" / "v1", task)
        _write(perturbed(_read_text(verify / names.GROUND_TRUTH), targets, kind), pred / "perturbed" / "v2", task)
        if mm:
            recorded = _metadata(tree, task).get("daregen", {}).get("mm_baselines", {})
            key = f"reference_{metric_for(kind, 'v2').name}"
            clock = time.perf_counter()
            frame = mm_reference(tree / task, question) if key in recorded else None
            clock_mm += time.perf_counter() - clock
            if frame is None:
                checks.append(Check(task, "MM", None, f"no recorded {key} with predictions"))
            else:
                mm_expected[task] = float(recorded[key])
                _write(frame, pred / "reference" / "v2", task)
    timings["mm_reference_s"] = clock_mm

    clock = time.perf_counter()
    dare: dict[tuple[str, str], dict[str, dict]] = {}
    for pset in ("reference", "perturbed"):
        for variant in names.VARIANTS:
            out = work / f"evaluation_{pset}_{variant}.json"
            dare[(pset, variant)] = run_evaluation(dare_repo, tree, pred / pset / variant, variant, out)
    timings["evaluation_s"] = time.perf_counter() - clock

    clock = time.perf_counter()
    for task, kind in tasks:
        for pset in ("reference", "perturbed"):
            for variant in names.VARIANTS:
                path = pred / pset / variant / task / names.PREDICTION
                if not path.is_file():
                    continue
                result = dare[(pset, variant)].get(task)
                if pset == "reference":
                    if kind == names.TIME_SERIES_PROBLEM:
                        checks.append(judge_expected(task, f"truth {variant}", result, 1.0))
                    elif variant == "v1":
                        check = judge_expected(task, "IF", result, 1.0)
                        same = "byte-identical" if byte_identical.get(task) else "not byte-identical"
                        checks.append(Check(task, check.name, check.agree, f"{check.detail}; {same}"))
                    else:
                        checks.append(judge_expected(task, "MM", result, mm_expected[task], MM_DIGITS))
                ours = score_prediction(tree / task, variant, path)
                checks.append(judge_scorer(task, f"scorer {pset} {variant}", result, ours.score, ours.reason))
    timings["daregen_score_s"] = time.perf_counter() - clock
    return checks, timings, byte_identical


def format_table(checks: Sequence[Check]) -> str:
    """One line per task: each named check's verdict (ok / DIS / -), the scorer agreements, then the reasons."""
    order: dict[str, list[Check]] = {}
    for c in checks:
        order.setdefault(c.task, []).append(c)
    width = max([len("task"), *(len(t) for t in order)])
    lines = [f"{'task':<{width}}  ref  IF   MM   truth  scorer  verdict"]
    mark = {True: "ok", False: "DIS", None: "-"}
    for task, mine in order.items():
        def verdict(prefix: str) -> str:
            found = [c.agree for c in mine if c.name.startswith(prefix)]
            if not found:
                return ""
            return mark[False] if False in found else (mark[True] if True in found else mark[None])
        scorer = [c for c in mine if c.name.startswith("scorer")]
        agreed = sum(c.agree is True for c in scorer)
        bad = disagreements(mine)
        lines.append(f"{task:<{width}}  {verdict('ref'):<4} {verdict('IF'):<4} {verdict('MM'):<4} "
                     f"{verdict('truth'):<6} {agreed}/{len(scorer):<5}  {'DISAGREE' if bad else 'agree'}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dare-repo", type=Path, required=True, help="an extracted DARE-bench checkout")
    parser.add_argument("tree", type=Path, help="a daregen tree (with question_list.json)")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    parser.add_argument("--no-mm", action="store_true", help="skip refitting our MM reference (the slowest part)")
    args = parser.parse_args(argv)
    for script in (REFERENCE_SCRIPT, EVALUATION_SCRIPT):
        if not (args.dare_repo / script).is_file():
            parser.error(f"{args.dare_repo} holds no {script}: not a DARE-bench checkout")
    if not (args.tree / names.QUESTION_LIST).is_file():
        parser.error(f"{args.tree} holds no {names.QUESTION_LIST}: not a task tree")
    work = args.work or Path(tempfile.mkdtemp(prefix="dare_scripts_"))
    if args.work is not None and args.work.exists() and any(args.work.iterdir()):
        parser.error(f"{args.work} is not empty")
    start = time.perf_counter()
    try:
        checks, timings, byte_identical = bench(args.dare_repo.resolve(), args.tree.resolve(), work.resolve(), mm=not args.no_mm)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    timings["total_s"] = time.perf_counter() - start
    print(format_table(checks))
    bad = disagreements(checks)
    for c in bad:
        print(f"DISAGREE  {c.task}  {c.name}: {c.detail}")
    tasks = sorted({c.task for c in checks})
    bad_tasks = sorted({c.task for c in bad})
    counted = [c for c in checks if c.agree is not None]
    print(f"{len(tasks)} task(s) run, {len(tasks) - len(bad_tasks)} agree, {len(bad_tasks)} disagree | "
          f"{len(counted)} comparisons, {len(bad)} disagreement(s) | IF references byte-identical to ours: "
          f"{sum(byte_identical.values())} of {len(byte_identical)} | "
          + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    print("RESULT " + json.dumps({"tasks": len(tasks), "tasks_disagreeing": len(bad_tasks),
                                  "comparisons": len(counted), "disagreements": len(bad),
                                  "if_byte_identical": sum(byte_identical.values()), "if_regenerated": len(byte_identical),
                                  **{k: round(v, 2) for k, v in timings.items()}}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
