"""Imported only by the sandbox's fork server (finalize.sandbox.PRELOAD), never by the pipeline.

Importing it runs one tiny reference pipeline per model type and reads each file
format from memory, so the work libraries do lazily on first use (pandas' and
pyarrow's readers, scikit-learn's validation and solver set-up, scipy's LAPACK
lookups) is done once in the fork server instead of once in every forked job,
where it cost several times the fit itself. This is the one module whose import
has a side effect on purpose; it touches no disk, network or global state of ours.
"""

from __future__ import annotations

import io
import sqlite3
import warnings

import numpy as np
import pandas as pd

from pipeline.core.if_workflow import build_pipeline
from finalize.runner import thread_controller

MODEL_TYPES = {
    "classification": ("LogisticRegression", "DecisionTreeClassifier", "GaussianNB", "LinearSVC", "MLPClassifier"),
    "regression": ("LinearRegression", "DecisionTreeRegressor", "Ridge", "Lasso", "MLPRegressor"),
}


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.normal(size=24)
    return pd.DataFrame({"x": np.where(np.arange(24) % 7 == 0, np.nan, x), "c": rng.choice(["a", "b"], 24),
                         "y_class": np.where(x > 0, "yes", "no"), "y_reg": x * 2.0, "row_id": np.arange(24)})


def warm_up() -> None:
    thread_controller()  # inherited by every forked job (see finalize.runner.thread_controller)
    frame = _frame()
    buf = io.BytesIO()
    frame.to_parquet(buf)
    pd.read_parquet(io.BytesIO(buf.getvalue()))
    pd.read_csv(io.StringIO(frame.to_csv(index=False, lineterminator="\n")))
    con = sqlite3.connect(":memory:")
    try:
        frame.to_sql("t", con, index=False)
        pd.read_sql_query('SELECT * FROM "t"', con)
    finally:
        con.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for problem, models in MODEL_TYPES.items():
            target = "y_class" if problem == "classification" else "y_reg"
            for model_type in models:
                q = {"imputer_type": "mean", "numerical_features": ["x"], "categorical_features": ["c"],
                     "model_type": model_type, "random_state": 0}
                pipe = build_pipeline(q).fit(frame[["x", "c"]], frame[target])
                pd.DataFrame({"row_id": frame["row_id"], target: pipe.predict(frame[["x", "c"]])}).to_csv(
                    index=False, lineterminator="\n")


warm_up()
