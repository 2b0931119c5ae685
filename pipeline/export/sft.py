"""SFT solutions: a standalone Python script per IF variant (the instruction's steps, in order) and a
baseline script per MM variant, each run in the sandbox against the task's files before it is exported.

An IF script must reproduce `verify/simulated_pred_local.csv` byte for byte; an MM script is kept
when it scores above 0, and its score (measured here by `pipeline.reward.score_prediction`) goes
with it. A script that fails is dropped with the reason, never exported wrong.

The scripts are generated from the task's `all_metadata.json` question block and read only the
files the agent is given (`train_v1`, `val_v1`, ...), from the working directory: they are what a
careful agent would write, not the reference (which reads `train_v1_no_err`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from finalize.sandbox import Limits, run_in_sandbox
from pipeline.core import names
from pipeline.core.csv_convention import CSV_READ_ARGS
from pipeline.reward import score_prediction

SYSTEM_PROMPT = ("You are a data scientist working in a sandbox. Answer with one self-contained Python script "
                 "that solves the task: it runs in the folder holding the task's files and writes prediction.csv.")

_MODEL_MODULES = ("linear_model", "naive_bayes", "neural_network", "svm", "tree")


@dataclass(frozen=True)
class Solution:
    task_dir: str
    variant: str  # IF | MM
    script: str
    inputs: tuple[str, ...]  # file names the script reads from its working directory


def _model_import(model_type: str, random_state: int) -> tuple[str, str]:
    """(`from sklearn.x import M`, `M(random_state=...)`) for a DARE model type."""
    import sklearn.linear_model  # noqa: F401  (the submodules below are looked up by attribute)
    import sklearn.naive_bayes  # noqa: F401
    import sklearn.neural_network  # noqa: F401
    import sklearn.svm  # noqa: F401
    import sklearn.tree  # noqa: F401
    import sklearn

    for module in _MODEL_MODULES:
        cls = getattr(getattr(sklearn, module), model_type, None)
        if cls is not None:
            seeded = "random_state" in cls().get_params()
            return (f"from sklearn.{module} import {model_type}",
                    f"{model_type}(random_state={random_state})" if seeded else f"{model_type}()")
    raise ValueError(f"unknown model type {model_type!r}")


def _read_code(var: str, file_name: str, table: str) -> str:
    if file_name.endswith(".csv"):
        return f'{var} = pd.read_csv("{file_name}", {CSV_READ_ARGS})'
    if file_name.endswith(".parquet"):
        return f'{var} = pd.read_parquet("{file_name}")'
    return (f'con = sqlite3.connect("{file_name}")\n'
            f'{var} = pd.read_sql_query(\'SELECT * FROM "{table}"\', con)\ncon.close()')


def _load_train_v1(q: dict, train_file: str) -> str:
    if q.get("join_path"):
        lines = [f'con = sqlite3.connect("{train_file}")',
                 f'train = pd.read_sql_query({_sql(q["join_path"][0]["left"])}, con)']
        for step in q["join_path"]:
            lines += [f'# left join `{step["right"]}` on `{step["left"]}`.`{step["left_on"]}` = '
                      f'`{step["right"]}`.`{step["right_on"]}`; the right key repeats the left one and is dropped',
                      f'right = pd.read_sql_query({_sql(step["right"])}, con).rename(columns={{{step["right_on"]!r}: '
                      '"__key"})',
                      f'train = train.merge(right, left_on={step["left_on"]!r}, right_on="__key", '
                      f'how={step.get("how", "left")!r}).drop(columns="__key")']
        return "\n".join(lines + ["con.close()"])
    if q["save_file_type"] == "sqlite":
        return f'''con = sqlite3.connect("{train_file}")
tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
tables.sort(key=lambda t: int(t.rsplit("_", 1)[-1]) if t.rsplit("_", 1)[-1].isdigit() else 0)
train = pd.read_sql_query('SELECT * FROM "%s"' % tables[0], con)
for table in tables[1:]:
    train = train.merge(pd.read_sql_query('SELECT * FROM "%s"' % table, con), on="row_id", how="inner")
con.close()
train = train.sort_values("row_id", kind="stable").drop(columns=["row_id"]).reset_index(drop=True)'''
    return _read_code("train", train_file, "")


def _sql(table: str) -> str:
    return repr('SELECT * FROM "' + table.replace('"', '""') + '"')


def _range_filter(q: dict) -> str:
    lines = ["keep = pd.Series(True, index=train.index)"]
    for i, (col, allowed) in enumerate(q["expected_ranges"].items(), start=1):
        if q["column_type_inference"][col] == "numerical":
            lines += [f"# {i}. {col} between {allowed[0]} and {allowed[1]}",
                      f"values = pd.to_numeric(train[{col!r}], errors=\"coerce\")",
                      f"keep &= ~(train[{col!r}].notna() & (values.isna() | (values < {allowed[0]!r}) | "
                      f"(values > {allowed[1]!r})))"]
        else:
            lines += [f"# {i}. {col} one of {allowed!r}",
                      f"allowed = {{canonical(v) for v in {allowed!r}}}",
                      f"keep &= ~(train[{col!r}].notna() & ~train[{col!r}].map(canonical).isin(allowed))"]
    return "\n".join(lines + ["train = train[keep]"])


def if_solution(task_dir: Path, question: dict) -> Solution:
    """The IF instruction as a script (raises ValueError for a task it cannot express)."""
    q = question
    if len(q["target"]) != 1:
        raise ValueError("multi-output target: no single-column SFT solution")
    ftype = q["save_file_type"]
    train_file, val_file = names.data_file(names.TRAIN_V1, ftype), names.data_file(names.VAL_V1, ftype)
    target = q["target"][0]
    model_import, model_call = _model_import(q["model_type"], q["random_state"])
    nums, cats = list(q["numerical_features"]), list(q["categorical_features"])
    transformers = []
    if nums:
        transformers.append(f'("num", Pipeline([("imputer", SimpleImputer(strategy={q["imputer_type"]!r})), '
                            '("scaler", StandardScaler())]), numeric_features)')
    if cats:
        transformers.append('("cat", Pipeline([("imputer", SimpleImputer(strategy="most_frequent")), '
                            '("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False))]), '
                            'categorical_features)')
    retype = ""
    if ftype != "csv":
        retype = '''
# A parquet or sqlite column keeps the type the noise gave it: take the numeric type back from val.
for column in train.columns:
    if column in val.columns and val[column].dtype.kind in "iufb" and train[column].dtype.kind not in "iufb":
        train[column] = pd.to_numeric(train[column], errors="coerce")'''
    script = f'''"""Solution of {task_dir.name} (IF): the instruction's steps, in order. Run it in the task's folder."""
import io
{"import sqlite3" + chr(10) if ftype == "sqlite" else ""}
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
{model_import}


def canonical(value):
    """A category as text, so 3, 3.0 and "3" name the same allowed value."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value).strip()
    return str(int(number)) if number.is_integer() else repr(number)


# Step 1: load the training data.
{_load_train_v1(q, train_file)}

# Step 2: drop rows whose known values violate the expected ranges (missing values are kept).
{_range_filter(q)}
# The noise rows made some columns textual; re-reading the clean rows gives them their own types back.
train = pd.read_csv(io.StringIO(train.to_csv(index=False)), {CSV_READ_ARGS})
{_read_code("val", val_file, names.VAL_SET_TABLE)}{retype}

# Step 3: drop rows with a missing target, then select the features in the given order.
target = {target!r}
train = train.dropna(subset=[target])
features = {list(q["selected_features"])!r}
numeric_features = {nums!r}
categorical_features = {cats!r}

# Steps 4-7: impute, scale and one-hot encode, then fit the model.
preprocess = ColumnTransformer([
    {(","+chr(10)+"    ").join(transformers)},
])
model = Pipeline([("preprocess", preprocess), ("model", {model_call})])
model.fit(train[features], train[target])

# Step 8: predict the validation rows and save prediction.csv with row_id and the target.
prediction = pd.DataFrame({{"row_id": val["row_id"].to_numpy()}})
prediction[target] = model.predict(val[features])
prediction.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''
    return Solution(task_dir.name, "IF", script, (train_file, val_file))


def mm_solution(task_dir: Path, question: dict) -> Solution:
    """A reasonable MM baseline: every shared column, gradient-boosted trees with a fixed seed."""
    if len(question["target"]) != 1:
        raise ValueError("multi-output target: no single-column SFT solution")
    ftype = question["save_file_type"]
    train_file, val_file = names.data_file(names.TRAIN_V2, ftype), names.data_file(names.VAL_V2, ftype)
    classification = question["problem_type"] == "classification"
    estimator = "HistGradientBoostingClassifier" if classification else "HistGradientBoostingRegressor"
    script = f'''"""Baseline solution of {task_dir.name} (MM): gradient-boosted trees on every column."""
{"import sqlite3" + chr(10) + chr(10) if ftype == "sqlite" else ""}import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import {estimator}
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder

{_read_code("train", train_file, names.TRAIN_SET_TABLE)}
{_read_code("val", val_file, names.VAL_SET_TABLE)}

target = {question["target"][0]!r}
train = train.dropna(subset=[target])
features = [c for c in train.columns if c != target and c != "row_id" and c in val.columns]
numeric = [c for c in features if pd.api.types.is_numeric_dtype(train[c]) and pd.api.types.is_numeric_dtype(val[c])]
categorical = [c for c in features if c not in numeric]
for frame in (train, val):  # categories as text; a missing value becomes a category of its own
    frame[categorical] = frame[categorical].astype(str)

steps = [("num", "passthrough", numeric)] if numeric else []
if categorical:
    steps.append(("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), categorical))
model = Pipeline([("preprocess", ColumnTransformer(steps)), ("model", {estimator}(random_state=0))])
model.fit(train[features], train[target])

prediction = pd.DataFrame({{"row_id": val["row_id"].to_numpy()}})
prediction[target] = model.predict(val[features])
prediction.to_csv("prediction.csv", index=False, lineterminator="\\n")
'''
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
        return CheckedSolution(solution, None, f"solution {result.status}: {result.reason}"[:300])
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
