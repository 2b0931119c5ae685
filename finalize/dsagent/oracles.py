"""Oracle programs: a standalone Python script per desktop task that solves it from the VM folder.

Each oracle is the prelude below plus the task's parameters as a JSON literal plus
a body; it runs with the task folder as its working directory, reads only the
files placed there and writes the task's output file. Validation runs it in the
sandbox and requires the evaluator to accept what it wrote.
"""

from __future__ import annotations

import json

PRELUDE = '''"""Oracle solution (daregen DSAgentBench): run from the task folder."""
import json
import sqlite3

import numpy as np
import pandas as pd


def read_table(name, table=None):
    if name.endswith(".csv"):
        return pd.read_csv(name, keep_default_na=False, na_values=[""])  # DARE-bench: only "" is missing
    if name.endswith(".parquet"):
        return pd.read_parquet(name)
    con = sqlite3.connect(name)
    try:
        if table is None:
            (table,) = con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").fetchone()
        return pd.read_sql_query('SELECT * FROM "%s"' % table.replace('"', '""'), con)
    finally:
        con.close()


def jsonable(value):
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value

'''

PIPELINE = '''
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler


def make_model(model_type, random_state):
    from sklearn import linear_model, naive_bayes, neural_network, svm, tree
    cls = next(getattr(m, model_type) for m in (linear_model, naive_bayes, neural_network, svm, tree)
               if hasattr(m, model_type))
    return cls(random_state=random_state) if "random_state" in cls().get_params() else cls()


def build_pipeline(imputer, numeric, categorical, model):
    steps = []
    if numeric:
        steps.append(("num", Pipeline([("imputer", SimpleImputer(strategy=imputer)),
                                       ("scaler", StandardScaler())]), numeric))
    if categorical:
        steps.append(("cat", Pipeline([("imputer", SimpleImputer(strategy="most_frequent")),
                                       ("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False))]),
                      categorical))
    return Pipeline([("preprocess", ColumnTransformer(steps)), ("model", model)])

'''


def program(params: dict, body: str, pipeline: bool = False) -> str:
    """The oracle's full source: prelude, optional sklearn pipeline helpers, parameters, body."""
    literal = json.dumps(json.dumps(params, sort_keys=True, ensure_ascii=True))
    return (PRELUDE + (PIPELINE if pipeline else "") + f"P = json.loads({literal})\n\n" + body.strip() + "\n")
