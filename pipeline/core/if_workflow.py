"""The IF workflow, written once: the table readers, the canonical-value rule, the expected-range
filter and the scikit-learn pipeline that question_v1 spells out step by step.

Three consumers run this one text:

- the reference (finalize/reference_solution.py) imports it and runs `if_workflow` on
  `train_v1_no_err`; what it predicts is the IF ground truth, `verify/simulated_pred_local.csv`;
- the DSAgentBench IF oracle (finalize/dsagent/oracles.py) and the exported SFT solution
  (pipeline/export/sft.py) are scripts rendered from the blocks below plus the task's parameters
  as one Python literal (`render_script`); they run `if_workflow` on `train_v1` with the range
  filter, as the instruction says, and must reproduce the reference byte for byte;
- the range filter and the in-range rule are also what noise injection (postprocess/noise.py)
  and the task checks (finalize/checks.py) use, so a value is in range for all of them alike.

The two blocks between the `self-contained` markers import only json, io, sqlite3 and pandas
(scikit-learn inside the functions that fit), so a rendered script runs without daregen installed.
Untrusted names (columns, tables, model types, file names) reach a rendered script only inside
the one literal bound to `P` (`parameters_literal`): never as code, a comment or a docstring.
"""

from __future__ import annotations

import pprint

# ---- self-contained tables: begin (readers, canonical values, the range filter) ----
import io
import json
import sqlite3

import pandas as pd


def read_table(path, table=None, connect=sqlite3.connect):
    """A task file as a frame: a CSV as DARE-bench reads it (only "" is missing), a parquet file,
    or one table of a SQLite file (the first by name unless `table` names one)."""
    path = str(path)
    if path.endswith(".csv"):
        return pd.read_csv(path, keep_default_na=False, na_values=[""])
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    con = connect(path)
    try:
        if table is None:
            (table,) = con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").fetchone()
        return pd.read_sql_query('SELECT * FROM "%s"' % str(table).replace('"', '""'), con)
    finally:
        con.close()


def _table_number(name):
    suffix = name.rsplit("_", 1)[-1]
    return int(suffix) if suffix.isdigit() else 0


def read_split_tables(path, connect=sqlite3.connect):
    """A flat task's train_v1.sqlite: its columns split over table_1 .. table_k, each with row_id;
    merged back on row_id in table order, rows in row_id order, row_id dropped."""
    con = connect(str(path))
    try:
        tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    finally:
        con.close()
    tables.sort(key=_table_number)
    train = read_table(path, tables[0], connect)
    for table in tables[1:]:
        train = train.merge(read_table(path, table, connect), on="row_id", how="inner")
    return train.sort_values("row_id", kind="stable").drop(columns=["row_id"]).reset_index(drop=True)


def read_joined(path, join_path, connect=sqlite3.connect):
    """A relational task's training data: its fact table LEFT JOINed to each dimension table in the
    order of `join_path`, on left_on = right_on; the right key repeats left_on and is dropped."""
    key = "\x00key"  # no column of a source can be named so: the right key never collides
    joined = read_table(path, join_path[0]["left"], connect)
    for step in join_path:
        right = read_table(path, step["right"], connect).rename(columns={step["right_on"]: key})
        joined = joined.merge(right, left_on=step["left_on"], right_on=key,
                              how=step.get("how", "left")).drop(columns=key)
    return joined


def read_training_data(path, question, split_tables, connect=sqlite3.connect):
    """The training rows as the instruction's first step loads them: joined when the task has a
    join path, merged from its split tables when `split_tables` (train_v1.sqlite), else one table."""
    if question.get("join_path"):
        return read_joined(path, question["join_path"], connect)
    if split_tables and str(path).endswith(".sqlite"):
        return read_split_tables(path, connect)
    return read_table(path, connect=connect)


def canonical(value):
    """A category as text, so 3, 3.0 and "3" name the same allowed value (blanks around it aside)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value).strip()
    return str(int(number)) if number.is_integer() else repr(number)


def allowed_levels(allowed):
    """A categorical column's allowed values as the canonical texts a value is matched against."""
    return {canonical(v) for v in allowed}


def out_of_range(values, allowed, column_type):
    """True where a known value breaks its expected range: in a numerical column, a value outside
    [low, high] or no number at all; in a categorical one, a value whose canonical text is not an
    allowed value's. A missing value is never out of range."""
    if column_type == "numerical":
        numbers = pd.to_numeric(values, errors="coerce")
        return values.notna() & (numbers.isna() | (numbers < allowed[0]) | (numbers > allowed[1]))
    return values.notna() & ~values.map(canonical).isin(allowed_levels(allowed))


def filter_by_expected_ranges(frame, expected_ranges, column_types):
    """The filter the IF instruction asks for: drop the rows whose known values break a range."""
    keep = pd.Series(True, index=frame.index)
    for column, allowed in expected_ranges.items():
        keep &= ~out_of_range(frame[column], allowed, column_types[column])
    return frame[keep].reset_index(drop=True)
# ---- self-contained tables: end ----


# ---- self-contained model: begin (the pipeline, fit and predict; needs the tables block) ----
MODEL_MODULES = ("linear_model", "naive_bayes", "neural_network", "svm", "tree")
# DARE-bench's template (scripts/reference_solution.py) wraps exactly these classifiers in
# MultiOutputClassifier when a task has several targets; DecisionTreeClassifier fits them natively,
# and regressors all take a 2-d target. MLPClassifier is left as DARE-bench leaves it (it cannot fit
# several label columns, so the designer never pairs it with a target list).
MULTI_OUTPUT_WRAPPED = frozenset({"LogisticRegression", "GaussianNB", "LinearSVC"})


def model_class(model_type):
    """The scikit-learn estimator class a DARE model type names (ValueError for any other name)."""
    import importlib

    for module in MODEL_MODULES:
        cls = getattr(importlib.import_module("sklearn." + module), str(model_type), None)
        if isinstance(cls, type) and hasattr(cls, "get_params"):
            return cls
    raise ValueError("unknown model type (not a scikit-learn estimator of %s)" % ", ".join(MODEL_MODULES))


def make_model(model_type, random_state):
    """The model, seeded with `random_state` when it takes one (an integer, never anything else)."""
    if isinstance(random_state, bool) or not isinstance(random_state, int):
        raise ValueError("random_state must be an integer, not a %s" % type(random_state).__name__)
    cls = model_class(model_type)
    return cls(random_state=random_state) if "random_state" in cls().get_params() else cls()


def build_pipeline(q):
    """Numeric features: imputation as asked, then standard scaling; categorical ones: most-frequent
    imputation, then one-hot encoding ignoring unknown levels; then the model."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.multioutput import MultiOutputClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = Pipeline([("imputer", SimpleImputer(strategy=q["imputer_type"])), ("scaler", StandardScaler())])
    categorical = Pipeline([
        ("imputer", SimpleImputer(strategy="most_frequent")),
        ("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False)),
    ])
    transformers = []
    if q["numerical_features"]:
        transformers.append(("num", numeric, list(q["numerical_features"])))
    if q["categorical_features"]:
        transformers.append(("cat", categorical, list(q["categorical_features"])))
    model = make_model(q["model_type"], q["random_state"])
    if len(q.get("target", ())) > 1 and q.get("problem_type") == "classification" \
            and q["model_type"] in MULTI_OUTPUT_WRAPPED:
        model = MultiOutputClassifier(model)
    return Pipeline([("preprocess", ColumnTransformer(transformers)), ("model", model)])


def restore_types(train, val, retype):
    """Noise rows made some columns textual: re-read the kept rows as a fresh CSV table so they get
    their own types back, and (`retype`: a parquet or SQLite task, whose columns keep the type the
    noise gave them) take a numeric type back from the validation rows."""
    train = pd.read_csv(io.StringIO(train.to_csv(index=False)), keep_default_na=False, na_values=[""])
    if retype:
        for column in train.columns:
            if column in val.columns and val[column].dtype.kind in "iufb" and train[column].dtype.kind not in "iufb":
                train[column] = pd.to_numeric(train[column], errors="coerce")
    return train


def fit_predict(q, train, val):
    """Drop rows with a missing target, fit the pipeline on the features, predict the validation rows:
    a frame of row_id and one column per target."""
    targets = list(q["target"])
    train = train.dropna(subset=targets)
    features = list(q["numerical_features"]) + list(q["categorical_features"])
    y = train[targets[0]] if len(targets) == 1 else train[targets]
    model = build_pipeline(q)
    model.fit(train[features], y)
    predictions = model.predict(val[features])
    out = pd.DataFrame({"row_id": val["row_id"].to_numpy()})
    if len(targets) == 1:
        out[targets[0]] = predictions
    else:
        for i, target in enumerate(targets):
            out[target] = predictions[:, i]
    return out


def if_workflow(q, train_file, val_file, noisy, connect=sqlite3.connect):
    """question_v1's steps in order. `noisy`: the training file is train_v1 (split tables, noise
    rows), so its rows are filtered by the expected ranges; otherwise it is the clean train_v1_no_err."""
    val = read_table(val_file, connect=connect)
    # Step 1: load the training data (joining the tables the instruction names).
    train = read_training_data(train_file, q, noisy, connect)
    if noisy:
        # Step 2: drop rows whose known values break the expected ranges (missing values are kept).
        train = filter_by_expected_ranges(train, q["expected_ranges"], q["column_type_inference"])
        train = restore_types(train, val, retype=not str(val_file).endswith(".csv"))
    # Steps 3-8: drop missing targets, impute, scale and one-hot encode, fit, predict.
    return fit_predict(q, train, val)
# ---- self-contained model: end ----


BLOCKS = ("tables", "model")


def self_contained_source(block: str) -> str:
    """The text of one self-contained block (markers excluded), for a script that cannot import daregen."""
    from pathlib import Path

    if block not in BLOCKS:
        raise ValueError(f"unknown block {block!r}; expected one of {BLOCKS}")
    text = Path(__file__).read_text(encoding="utf-8")
    begin = text.index(f"# ---- self-contained {block}: begin")
    start = text.index("\n", begin) + 1
    return text[start:text.index(f"# ---- self-contained {block}: end ----")]


def parameters_literal(params: dict) -> str:
    """`params` as one Python literal expression, the only way data enters a rendered script: pprint's
    layout of repr (keys sorted), so a reader sees the task's columns and ranges plainly and every
    string stays a string (repr escapes quotes, line breaks and control characters). Data that has
    no literal (a NaN or infinite float) goes in as its JSON, parsed by json.loads. Only JSON data is
    accepted: anything else raises TypeError here, at build time."""
    text = json.dumps(params, sort_keys=True, ensure_ascii=True)  # TypeError for what JSON cannot hold
    try:
        json.dumps(params, allow_nan=False)
    except ValueError:
        return f"json.loads({json.dumps(text)})"
    return pprint.pformat(params, sort_dicts=True, width=100)


# Keys of the question block the workflow reads; everything else stays out of a rendered script.
WORKFLOW_KEYS = ("target", "problem_type", "numerical_features", "categorical_features", "imputer_type",
                 "model_type", "random_state", "expected_ranges", "column_type_inference", "join_path")


def workflow_question(question: dict) -> dict:
    """The question keys the workflow reads, checked to be data of the right shape (ValueError
    otherwise): names are strings, the seed an integer, the model a known estimator."""
    q = {k: question[k] for k in WORKFLOW_KEYS if k in question}
    for key in ("target", "numerical_features", "categorical_features"):
        if not all(isinstance(v, str) for v in q.get(key, ())):
            raise ValueError(f"{key} must be a list of column names")
    make_model(q["model_type"], q["random_state"])  # an unknown model or a non-integer seed raises here
    return q


def render_script(docstring: str, params: dict, body: str, blocks: tuple[str, ...] = BLOCKS,
                  helpers: str = "") -> str:
    """A self-contained script: a fixed docstring (never data), the named blocks, `helpers` (fixed
    code), the parameters as one literal bound to `P`, then `body` (fixed code reading P)."""
    if '"""' in docstring or "\\" in docstring:
        raise ValueError("a script docstring is fixed text without quotes or escapes")
    parts = [f'"""{docstring}"""\n', *(self_contained_source(b) + "\n" for b in blocks), helpers,
             f"P = {parameters_literal(params)}\n\n", body.strip() + "\n"]
    return "".join(parts)
