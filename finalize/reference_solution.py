"""The IF reference solution, derived only from verify/all_metadata.json.

    python -m finalize.reference_solution TASK_DIR OUT_CSV

It is deliberately self-contained (json, sqlite3, pandas, scikit-learn, and the
kernel's read-only SQLite connection) so that anyone can read it next to the
instruction text and rerun it: it is the workflow question_v1 spells out, step
for step. Ground truth for IF is what
this script prints into verify/simulated_pred_local.csv.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from pipeline.core.csv_convention import read_task_csv
from pipeline.core.sqlite import connect_read_only, select_all


def read_table(path: Path) -> pd.DataFrame:
    if path.suffix == ".csv":
        return read_task_csv(path)
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    con = connect_read_only(path)
    try:
        (name,) = con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchone()
        return pd.read_sql_query(select_all(con, name), con)
    finally:
        con.close()


def read_joined(path: Path, join_path: list[dict]) -> pd.DataFrame:
    """A relational task's training data: its fact table LEFT JOINed to each dimension table
    in the order of `join_path`, on left_on = right_on; the right key equals left_on and is dropped."""
    con = connect_read_only(path)
    try:
        read = lambda t: pd.read_sql_query(select_all(con, t), con)  # noqa: E731
        joined = read(join_path[0]["left"])
        for step in join_path:
            right = read(step["right"]).rename(columns={step["right_on"]: "\x00key"})
            joined = joined.merge(right, left_on=step["left_on"], right_on="\x00key",
                                  how=step["how"]).drop(columns="\x00key")
    finally:
        con.close()
    return joined


def make_model(model_type: str, random_state: int):
    from sklearn import linear_model, naive_bayes, neural_network, svm, tree

    modules = (linear_model, naive_bayes, neural_network, svm, tree)
    cls = next(getattr(m, model_type) for m in modules if hasattr(m, model_type))
    params = cls().get_params()
    return cls(random_state=random_state) if "random_state" in params else cls()


# DARE-bench's template (scripts/reference_solution.py) wraps exactly these classifiers in
# MultiOutputClassifier when a task has several targets; DecisionTreeClassifier fits them natively,
# and regressors all take a 2-d target. MLPClassifier is left as DARE-bench leaves it (it cannot fit
# several label columns, so the designer never pairs it with a target list).
MULTI_OUTPUT_WRAPPED = frozenset({"LogisticRegression", "GaussianNB", "LinearSVC"})


def build_pipeline(q: dict) -> Pipeline:
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


def predict_from(q: dict, source_dir: Path) -> pd.DataFrame:
    """The workflow of question_v1, from the question block and the task's source/ files."""
    ext = {"csv": "csv", "parquet": "parquet", "sqlite": "sqlite"}[q["save_file_type"]]
    train_file = source_dir / f"train_v1_no_err.{ext}"
    train = read_joined(train_file, q["join_path"]) if q.get("join_path") else read_table(train_file)
    val = read_table(source_dir / f"val_v1.{ext}")
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
        for i, t in enumerate(targets):
            out[t] = predictions[:, i]
    return out


def predict(task_dir: Path) -> pd.DataFrame:
    q = json.loads((task_dir / "verify" / "all_metadata.json").read_text(encoding="utf-8"))["question"]
    return predict_from(q, task_dir / "source")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m finalize.reference_solution TASK_DIR OUT_CSV", file=sys.stderr)
        return 2
    out = predict(Path(args[0]))
    out.to_csv(args[1], index=False, lineterminator="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
