"""SFT solutions: a standalone Python script per IF variant (the instruction's steps, in order) and a
baseline script per MM variant, each run in the sandbox against the task's files before it is exported.

An IF script must reproduce `verify/simulated_pred_local.csv` byte for byte; an MM script is kept
when it scores above 0, and its score (measured here by `pipeline.reward.score_prediction`) goes
with it. A script that fails is dropped with the reason, never exported wrong.

The scripts are rendered from the kernel's self-contained IF workflow (pipeline/core/if_workflow.py)
with the task's `all_metadata.json` question block as one Python literal, and read only the files the
agent is given (`train_v1`, `val_v1`, ...), from the working directory: the same workflow as the
reference, which runs it on `train_v1_no_err` without the range filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from finalize.sandbox import Limits, run_in_sandbox
from pipeline.core import names
from pipeline.core.if_workflow import render_script, workflow_question
from pipeline.core.text import shorten
from pipeline.reward import score_prediction

SYSTEM_PROMPT = ("You are a data scientist working in a sandbox. Answer with one self-contained Python script "
                 "that solves the task: it runs in the folder holding the task's files and writes prediction.csv.")


@dataclass(frozen=True)
class Solution:
    task_dir: str
    variant: str  # IF | MM
    script: str
    inputs: tuple[str, ...]  # file names the script reads from its working directory


_IF_BODY = '''
if __name__ == "__main__":
    prediction = if_workflow(P["question"], P["train"], P["val"], noisy=True)
    prediction.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''

_MM_BODY = '''
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder

if __name__ == "__main__":
    train, val = read_table(P["train"]), read_table(P["val"])
    target = P["target"]
    train = train.dropna(subset=[target])
    features = [c for c in train.columns if c != target and c != "row_id" and c in val.columns]
    numeric = [c for c in features
               if pd.api.types.is_numeric_dtype(train[c]) and pd.api.types.is_numeric_dtype(val[c])]
    categorical = [c for c in features if c not in numeric]
    for frame in (train, val):  # categories as text; a missing value becomes a category of its own
        frame[categorical] = frame[categorical].astype(str)

    steps = [("num", "passthrough", numeric)] if numeric else []
    if categorical:
        steps.append(("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), categorical))
    estimator = HistGradientBoostingClassifier if P["classification"] else HistGradientBoostingRegressor
    model = Pipeline([("preprocess", ColumnTransformer(steps)), ("model", estimator(random_state=0))])
    model.fit(train[features], train[target])

    prediction = pd.DataFrame({"row_id": val["row_id"].to_numpy()})
    prediction[target] = model.predict(val[features])
    prediction.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''


def if_solution(task_dir: Path, question: dict) -> Solution:
    """The IF instruction as a script: the kernel's IF workflow with this task's parameters (raises
    ValueError for a task it cannot express, or whose parameters are not data of the right shape)."""
    if len(question["target"]) != 1:
        raise ValueError("multi-output target: no single-column SFT solution")
    ftype = question["save_file_type"]
    train_file, val_file = names.data_file(names.TRAIN_V1, ftype), names.data_file(names.VAL_V1, ftype)
    params = {"question": workflow_question(question), "train": train_file, "val": val_file}
    script = render_script("Solution of an IF task: the instruction's steps, in order (if_workflow below). Run it "
                           "in the task's folder; the task's columns, ranges and model are the JSON in P.",
                           params, _IF_BODY)
    return Solution(task_dir.name, "IF", script, (train_file, val_file))


def mm_solution(task_dir: Path, question: dict) -> Solution:
    """A reasonable MM baseline: every shared column, gradient-boosted trees with a fixed seed."""
    if len(question["target"]) != 1:
        raise ValueError("multi-output target: no single-column SFT solution")
    ftype = question["save_file_type"]
    train_file, val_file = names.data_file(names.TRAIN_V2, ftype), names.data_file(names.VAL_V2, ftype)
    target = question["target"][0]
    if not isinstance(target, str):
        raise ValueError("the target must be a column name")
    params = {"train": train_file, "val": val_file, "target": target,
              "classification": question["problem_type"] == "classification"}
    script = render_script("Baseline solution of an MM task: gradient-boosted trees on every column. Run it in "
                           "the task's folder.", params, _MM_BODY, ("tables",))
    return Solution(task_dir.name, "MM", script, (train_file, val_file))


# --------------------------------------------------------------------------- running


def solution_job(script: str) -> str:
    """In the sandbox: run the script in the working directory, return the prediction.csv it wrote."""
    import warnings

    from finalize.runner import thread_controller

    warnings.simplefilter("ignore")
    with thread_controller().limit(limits=1):  # single-threaded BLAS, as the reference ran
        exec(compile(script, "solution.py", "exec"), {"__name__": "__main__"})  # noqa: S102
    return Path(names.PREDICTION).read_text(encoding="utf-8")


def run_script_sandboxed(script: str, files: dict[str, Path], hide: tuple[Path, ...] = (), timeout_s: float = 300.0):
    """Run model-written (or generated) code the safe way: finalize.sandbox, no network, only `files`
    (name in the working directory -> path) visible, `hide` covered. Returns the SandboxResult; its
    value is the prediction.csv text when ok."""
    return run_in_sandbox(solution_job, (script,), files, Limits(wall_s=timeout_s), hide=hide)


@dataclass(frozen=True)
class CheckedSolution:
    solution: Solution
    score: float | None  # MM: the measured score; IF: 1.0 when it reproduces the reference
    reason: str  # "" when kept


def check_solution(task_dir: Path, solution: Solution) -> CheckedSolution:
    """Run a solution in the sandbox and judge it (IF: byte-identical to the reference; MM: score > 0)."""
    files = {name: task_dir / names.SOURCE_DIR / name for name in solution.inputs}
    result = run_script_sandboxed(solution.script, files, hide=(task_dir.resolve().parent,))
    if not result.ok:
        return CheckedSolution(solution, None, shorten(f"solution {result.status}: {result.reason}", 300))
    if solution.variant == "IF":
        reference = (task_dir / names.VERIFY_DIR / names.SIMULATED_PRED).read_text(encoding="utf-8")
        if result.value != reference:
            return CheckedSolution(solution, None, "solution output differs from simulated_pred_local.csv")
        return CheckedSolution(solution, 1.0, "")
    score = score_prediction(task_dir, solution.variant, result.value)
    if score.reason or score.score <= 0.0:
        return CheckedSolution(solution, score.score, f"baseline scores {score.score}: {score.reason or 'no signal'}")
    return CheckedSolution(solution, round(score.score, 6), "")


def chat_record(solution: CheckedSolution, prompt: str, extra: dict) -> dict:
    """One SFT JSONL line: system/user/assistant messages, the code in the assistant turn."""
    code = solution.solution.script
    what = ("This script follows the instruction step by step." if solution.solution.variant == "IF"
            else "A gradient-boosted baseline on every column.")
    return {**extra, "variant": solution.solution.variant, "score": solution.score,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                         {"role": "user", "content": prompt},
                         {"role": "assistant", "content": f"{what}\n\n```python\n{code}```\n"}]}
