"""The five non-modelling DSAgentBench capability categories, generated from a task's clean data.

Every generator is a pure function `(ctx, rng) -> DesktopTask`: it draws its
choices (columns, questions, how many steps) from the per-task generator it is
handed, computes the expected answer from the data here, and writes an oracle
program that computes the same thing independently from the files in the VM.
A generator that finds nothing to ask of a dataset raises DatasetRejected.
"""

from __future__ import annotations

import io
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

import numpy as np
import pandas as pd

from finalize.dsagent.dare_variants import TASK_FOLDER
from finalize.dsagent.oracles import program
from finalize.dsagent.records import DesktopTask
from pipeline.core import names
from pipeline.core.csv_convention import read_task_csv
from pipeline.core.if_workflow import build_pipeline
from pipeline.core.jsonio import to_jsonable
from pipeline.core.metrics import SOLVED_THRESHOLD
from pipeline.core.records import DatasetRejected
from pipeline.core.text import md_name
from postprocess.formats import write_sqlite_tables

GENERATED_DIR = "files"  # generated inputs live in dsagentbench/tasks/<name>/files/
TABLE_PERTURBATIONS = ("missing_file", "wrong_value", "wrong_column", "shuffled_ids")
ANSWER_PERTURBATIONS = ("missing_file", "wrong_value", "wrong_column")
CHART_PERTURBATIONS = ("missing_file", "wrong_value", "wrong_column", "unlabeled_axis", "wrong_mark")
_RTOL, _ATOL = 1e-6, 1e-9
_TABLE_ATOL = 1e-8  # a derived table's cells (feature engineering, acquisition)


@dataclass(frozen=True)
class DataContext:
    """What a generator may use: the DARE task's clean files (train_v2 with the target, val_v2 with row_id)."""

    task_dir: str  # folder name in the tree
    files: dict[str, str]  # TRAIN_V2 / VAL_V2 stem -> the source file playing that part (train.csv in a TS task)
    question: dict
    train: pd.DataFrame
    val: pd.DataFrame
    train_v1_tables: dict[str, pd.DataFrame] | None  # the tables of a multi-table train_v1.sqlite

    @property
    def target(self) -> str:
        return self.question["target"][0]

    @property
    def roles(self) -> frozenset[str]:
        """The columns the task's design gave a role, the only ones a question may be about: its target(s)
        and its related features (question_v1's lists; the selected features are among them). A column the
        designer left out (an identifier, a coordinate, a design factor: daregen.excluded_features says why)
        and a time series' time and entity columns stay in the data files but are never a question's subject:
        the distinct count of a time index is the row count, the log of an id means nothing. The design
        owns these facts; nothing here guesses roles from names."""
        q = self.question
        identifiers = {q.get("time_column"), *q.get("entity_columns", ())}
        return frozenset(c for c in (*q["target"], *q.get("related_features", ()), *q.get("selected_features", ()))
                         if c not in identifiers)

    def design_columns(self, frame: pd.DataFrame) -> list[str]:
        """`frame`'s columns that have a role in the design (roles), in the frame's order."""
        return [c for c in frame.columns if c in self.roles and c != names.ROW_ID]

    def source(self, stem: str) -> tuple[str, str]:
        """(file name in the VM, path in the tree) of a DARE source file."""
        f = self.files[stem]
        return f, f"{self.task_dir}/{names.SOURCE_DIR}/{f}"

    def numeric(self, frame: pd.DataFrame, exclude: tuple[str, ...] = ()) -> list[str]:
        return [c for c in self.design_columns(frame) if c not in exclude
                and pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
                and frame[c].notna().sum() >= 3 and frame[c].nunique() > 1]

    def categorical(self, frame: pd.DataFrame, exclude: tuple[str, ...] = ()) -> list[str]:
        kinds = self.question.get("column_type_inference") or {}
        return [c for c in self.design_columns(frame) if c not in exclude
                and kinds.get(c, "categorical" if frame[c].dtype == object else "") == "categorical"
                and 2 <= frame[c].nunique() <= 12]


def _pick(rng: np.random.Generator, items: list, k: int = 1) -> list:
    if len(items) < k:
        raise DatasetRejected("not enough suitable columns")
    return [items[i] for i in sorted(rng.choice(len(items), size=k, replace=False))]


def _num(value) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def _text(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value.item() if isinstance(value, np.generic) else value).strip()


def _names(columns: list[str]) -> str:
    return ", ".join(md_name(c) for c in columns) if columns else "none"


def _listing(items: list[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))


def _level_text(value) -> str:
    """A category level as the data holds it: a number or a boolean bare (`1`, `2.5`, `True`), text quoted
    (`'a'`). Quoting every level told an agent to compare a 0/1 column with the text '1', which never matches."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, (bool, int, float)):
        return repr(value)
    text = _text(value)
    # a level is data: one holding a backtick or markup would open a code span or raw HTML in the instruction,
    # so it goes in a code span of its own (md_name), as column names do; ordinary text keeps its quotes
    return md_name(text) if any(c in text for c in "`<>&") else repr(text)


def _tolerance_text(rtol: float, atol: float) -> str:
    """How a number is compared, from the very tolerances expected.json holds: a solver that rounds
    (fold scores to 3 decimals, say) fails, and the instruction must say so."""
    if rtol == 0 and atol == 0:
        return "exactly"
    return f"within {atol:g} + {rtol:g} × |expected value|"


def _precision_note(rtol: float, atol: float, subject: str = "Numbers") -> str:
    return (f"\n\n{subject} are compared with the expected values {_tolerance_text(rtol, atol)}: write them at full "
            f"floating-point precision, not rounded.")


def _intro(files: list[str], output: str) -> str:
    listed = ", ".join(md_name(f) for f in files)
    # pandas' default also reads "NA", "None", "nan" ... as missing; the expected answers were computed
    # with DARE-bench's CSV convention, where only an empty cell is missing.
    csv_rule = (" In the CSV files only an empty cell is a missing value (pandas: `keep_default_na=False, "
                "na_values=[\"\"]`)." if any(f.endswith(".csv") for f in files) else "")
    return (f"You are working in a desktop with VS Code, Jupyter and a terminal. The task folder `{TASK_FOLDER}` "
            f"is open and holds {listed}. Save your result as `{TASK_FOLDER}/{output}`.{csv_rule}\n\n")


def _task(ctx: DataContext, kind: str, category: str, stages: tuple[str, ...], steps: list[str], text: str,
          inputs: dict[str, str], output: str, check: dict, oracle: str, perturbations: tuple[str, ...],
          generated: dict[str, bytes] | None = None) -> DesktopTask:
    generated = generated or {}
    files = sorted(inputs)
    return DesktopTask(
        key=f"{ctx.task_dir}/{kind}", name=f"{ctx.task_dir}__{kind}", source_task=ctx.task_dir, category=category,
        kind=kind, steps=tuple(steps), stages=stages, instruction=_intro(files, output) + text,
        inputs=inputs, generated=generated, output=output,
        expected={"check": {**check, "file": output}, "solved_threshold": SOLVED_THRESHOLD}, oracle=oracle,
        perturbations=perturbations)


# ----------------------------------------------------------------------------- EDA


def eda_task(ctx: DataContext, rng: np.random.Generator) -> DesktopTask:
    """Named answers about train_v2: missing counts, a Pearson correlation, grouped means, quantiles."""
    df = ctx.train
    fname, tree_path = ctx.source(names.TRAIN_V2)
    num, cat = ctx.numeric(df), ctx.categorical(df)
    if not num:
        raise DatasetRejected("EDA: no numeric feature or target column")
    catalogue: list[tuple[str, dict]] = [("missing", {}), ("quantile", {}), ("mean", {}), ("distinct", {})]
    if len(num) >= 2:
        catalogue.append(("pearson", {}))
    if cat:
        catalogue.append(("group_mean", {}))
    n_questions = int(rng.integers(1, 7))
    questions, answers, ops = [], {}, []
    for i in range(1, n_questions + 1):
        what = catalogue[int(rng.integers(len(catalogue)))][0]
        key = f"answer_{i}"
        if what == "missing":
            col = _pick(rng, ctx.design_columns(df))[0]
            value, tol = int(df[col].isna().sum()), (0.0, 0.0)
            questions.append(f"`{key}`: the number of missing values in column {md_name(col)}")
        elif what == "quantile":
            col, q = _pick(rng, num)[0], float(rng.choice([0.1, 0.25, 0.5, 0.75, 0.9]))
            value, tol = _num(df[col].quantile(q)), (_RTOL, _ATOL)
            questions.append(f"`{key}`: the {q:g} quantile of {md_name(col)} (linear interpolation, missing values "
                             f"ignored)")
            ops.append(("quantile", key, col, q))
            answers[key] = {"value": value, "rtol": tol[0], "atol": tol[1]}
            continue
        elif what == "mean":
            col = _pick(rng, num)[0]
            value, tol = _num(df[col].mean()), (_RTOL, _ATOL)
            questions.append(f"`{key}`: the mean of {md_name(col)} (missing values ignored)")
        elif what == "distinct":
            col = _pick(rng, ctx.design_columns(df))[0]
            value, tol = int(df[col].nunique()), (0.0, 0.0)
            questions.append(f"`{key}`: the number of distinct non-missing values in {md_name(col)}")
        elif what == "pearson":
            a, b = _pick(rng, num, 2)
            value, tol = _num(df[a].corr(df[b])), (0.0, 0.01)
            if value is None:
                raise DatasetRejected(f"EDA: correlation of {a} and {b} is undefined")
            questions.append(f"`{key}`: the Pearson correlation between {md_name(a)} and {md_name(b)} (rows where either "
                             f"is missing ignored), within 0.01")
            ops.append(("pearson", key, a, b))
            answers[key] = {"value": value, "rtol": tol[0], "atol": tol[1]}
            continue
        else:
            g, col = _pick(rng, cat)[0], _pick(rng, num)[0]
            level = _pick(rng, sorted(df[g].dropna().unique().tolist(), key=_text))[0]
            value, tol = _num(df.loc[df[g] == level, col].mean()), (_RTOL, _ATOL)
            questions.append(f"`{key}`: the mean of {md_name(col)} over the rows where {md_name(g)} is {_level_text(level)}")
            ops.append(("group_mean", key, g, col, to_jsonable(level)))
            answers[key] = {"value": value, "rtol": tol[0], "atol": tol[1]}
            continue
        ops.append((what, key, col))
        answers[key] = {"value": value, "rtol": tol[0], "atol": tol[1]}
    if any(a["value"] is None for a in answers.values()):
        raise DatasetRejected("EDA: an answer is undefined on this data")
    body = '''
df = read_table(P["file"])
out = {}
for op in P["ops"]:
    what, key = op[0], op[1]
    if what == "missing":
        out[key] = int(df[op[2]].isna().sum())
    elif what == "distinct":
        out[key] = int(df[op[2]].nunique())
    elif what == "mean":
        out[key] = float(df[op[2]].mean())
    elif what == "quantile":
        out[key] = float(df[op[2]].quantile(op[3]))
    elif what == "pearson":
        out[key] = float(df[op[2]].corr(df[op[3]]))
    else:
        out[key] = float(df.loc[df[op[2]] == op[4], op[3]].mean())
with open("answers.json", "w") as fh:
    json.dump(out, fh, indent=2)
'''
    text = (f"Load `{fname}` (the full training table) and answer these questions in a JSON object saved as "
            f"`answers.json`, one key per answer:\n{_listing(questions)}\n\n"
            + ("Counts must be exact; any other number" if any(a["atol"] == 0 and a["rtol"] == 0
                                                                for a in answers.values()) else "A number")
            + f" is compared with the expected value {_tolerance_text(_RTOL, _ATOL)} unless its question gives a "
            f"tolerance: write it at full floating-point precision, not rounded.")
    return _task(ctx, "eda", "eda", ("eda",), questions, text, {fname: tree_path},
                 "answers.json", {"kind": "answers", "answers": answers},
                 program({"file": fname, "ops": [list(o) for o in ops]}, body), ANSWER_PERTURBATIONS)


# ----------------------------------------------------------------------------- feature engineering


def feature_engineering_task(ctx: DataContext, rng: np.random.Generator) -> DesktopTask:
    """Derived columns of val_v2 (ratios, indicators, group means, z-scores, log1p), saved as features.csv."""
    df = ctx.val
    fname, tree_path = ctx.source(names.VAL_V2)
    num, cat = ctx.numeric(df), ctx.categorical(df)
    if not num:
        raise DatasetRejected("feature engineering: no numeric feature or target column in val_v2")
    kinds = ["zscore", "above_median"] + (["ratio"] if len(num) >= 2 else []) + (["indicator", "group_mean"]
                                                                                   if cat else [])
    kinds += ["log1p"] if any(df[c].min() >= 0 for c in num) else []
    n_features = int(rng.integers(1, 7))
    specs, steps, out = [], [], pd.DataFrame({names.ROW_ID: df[names.ROW_ID]})
    for _ in range(n_features):
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "ratio":
            definition = ["ratio", *_pick(rng, num, 2)]
        elif kind == "indicator":
            g = _pick(rng, cat)[0]
            definition = ["indicator", g, to_jsonable(_pick(rng, sorted(df[g].dropna().unique().tolist(),
                                                                          key=_text))[0])]
        elif kind == "group_mean":
            definition = ["group_mean", _pick(rng, cat)[0], _pick(rng, num)[0]]
        elif kind == "log1p":
            definition = ["log1p", _pick(rng, [c for c in num if df[c].min() >= 0])[0]]
        else:
            definition = [kind, _pick(rng, num)[0]]
        # Two draws can define the same column (the same ratio, the same indicator): asking for it twice
        # under two names says nothing new and reads as a mistake, so a repeat is left out and the
        # features keep consecutive names.
        if definition in [[s[0], *s[2:]] for s in specs]:
            continue
        col = f"feat_{len(specs) + 1}"
        what, args = definition[0], definition[1:]
        if what == "ratio":
            a, b = args
            den = df[b].astype(float)
            out[col] = df[a].astype(float) / den.where(den != 0)
            steps.append(f"{md_name(col)} = {md_name(a)} / {md_name(b)} (missing where {md_name(b)} is 0 or missing)")
        elif what == "indicator":
            g, level = args
            out[col] = (df[g] == level).astype(int)
            steps.append(f"{md_name(col)} = 1 where {md_name(g)} is {_level_text(level)}, else 0 (a one-hot column)")
        elif what == "group_mean":
            g, a = args
            out[col] = df.groupby(g)[a].transform("mean")
            steps.append(f"{md_name(col)} = the mean of {md_name(a)} over the rows sharing the row's {md_name(g)} value (missing "
                         f"values ignored; missing where {md_name(g)} is missing)")
        elif what == "zscore":
            a = args[0]
            out[col] = (df[a] - df[a].mean()) / df[a].std()
            steps.append(f"{md_name(col)} = ({md_name(a)} - its mean) / its sample standard deviation (ddof=1), computed over "
                         f"this file")
        elif what == "above_median":
            a = args[0]
            out[col] = (df[a] > df[a].median()).astype(int)
            steps.append(f"{md_name(col)} = 1 where {md_name(a)} is above its median over this file, else 0")
        else:
            a = args[0]
            out[col] = np.log1p(df[a].astype(float))
            steps.append(f"{md_name(col)} = the natural logarithm of 1 + {md_name(a)}")
        specs.append([what, col, *args])
    columns = [c for c in out.columns if c != names.ROW_ID]
    rows = [[_text(r[0])] + [_num(v) for v in r[1:]] for r in out.itertuples(index=False, name=None)]
    body = '''
df = read_table(P["file"])
out = pd.DataFrame({"row_id": df["row_id"]})
for s in P["specs"]:
    kind, col = s[0], s[1]
    if kind == "ratio":
        den = df[s[3]].astype(float)
        out[col] = df[s[2]].astype(float) / den.where(den != 0)
    elif kind == "indicator":
        out[col] = (df[s[2]] == s[3]).astype(int)
    elif kind == "group_mean":
        out[col] = df.groupby(s[2])[s[3]].transform("mean")
    elif kind == "zscore":
        out[col] = (df[s[2]] - df[s[2]].mean()) / df[s[2]].std()
    elif kind == "above_median":
        out[col] = (df[s[2]] > df[s[2]].median()).astype(int)
    else:
        out[col] = np.log1p(df[s[2]].astype(float))
out.to_csv("features.csv", index=False)
'''
    text = (f"Load `{fname}` and build a CSV `features.csv` with the column `row_id` plus these derived columns, "
            f"one row per row of the file:\n{_listing(steps)}"
            + _precision_note(_RTOL, _TABLE_ATOL, "Values") + " Leave a missing value as an empty cell.")
    stages = ("eda", "feature_engineering") if any(s[0] == "group_mean" for s in specs) else ("feature_engineering",)
    return _task(ctx, "features", "feature_engineering", stages, steps, text, {fname: tree_path}, "features.csv",
                 {"kind": "table", "key": names.ROW_ID, "columns": columns, "rows": rows,
                  "numeric": {c: True for c in columns}, "rtol": _RTOL, "atol": _TABLE_ATOL},
                 program({"file": fname, "specs": specs}, body), TABLE_PERTURBATIONS)


# ----------------------------------------------------------------------------- data acquisition


def _sqlite_bytes(tables: dict[str, pd.DataFrame]) -> bytes:
    """A sqlite file holding `tables`, written the same way every time (so its bytes are stable)."""
    with tempfile.TemporaryDirectory(prefix="daregen-dsagent-") as tmp:
        path = Path(tmp) / "db.sqlite"
        write_sqlite_tables(path, tables)
        return path.read_bytes()


def acquisition_task(ctx: DataContext, rng: np.random.Generator) -> DesktopTask:
    """Join the tables of a multi-table SQLite database on row_id (DARE's own train_v1.sqlite when the
    task has one, else a database split from val_v2 here), select, filter or aggregate, save joined.csv."""
    if ctx.train_v1_tables:
        fname, db_path = ctx.source(names.TRAIN_V1)
        generated: dict[str, bytes] = {}
        tables = dict(ctx.train_v1_tables)
    else:
        fname = "warehouse.sqlite"
        df = ctx.val
        cols = [c for c in df.columns if c != names.ROW_ID]
        if len(cols) < 2:
            raise DatasetRejected("data acquisition: too few columns to split over tables")
        n_tables = min(len(cols), int(rng.integers(2, 4)))
        order = rng.permutation(len(cols))
        tables = {}
        for t in range(n_tables):
            part = [cols[i] for i in sorted(order[t::n_tables])]
            rows = rng.permutation(len(df))  # each table in its own order: joining is the point
            tables[f"part_{t + 1}"] = df[[names.ROW_ID, *part]].iloc[rows].reset_index(drop=True)
        generated = {fname: _sqlite_bytes(tables)}
        db_path = None
    joined = None
    for t in sorted(tables):
        joined = tables[t] if joined is None else joined.merge(tables[t], on=names.ROW_ID, how="inner")
    joined = joined.sort_values(names.ROW_ID, kind="stable").reset_index(drop=True)
    num = ctx.numeric(joined)
    features = ctx.design_columns(joined)
    if not features:
        raise DatasetRejected("data acquisition: no feature or target column among the tables")
    mode = ["export", "join", "join_filter", "join_aggregate"][int(rng.integers(4))]
    if mode == "join_aggregate" and not (ctx.categorical(joined) and num):
        mode = "join_filter"
    if mode == "join_filter" and not num:
        mode = "join"
    table_names = sorted(tables)
    params: dict = {"file": fname, "tables": table_names, "mode": mode}
    if mode == "export":
        t = table_names[int(rng.integers(len(table_names)))]
        result = tables[t].sort_values(names.ROW_ID, kind="stable")
        params["table"] = t
        steps = [f"read the table {md_name(t)}", "save it as `joined.csv`"]
        key = names.ROW_ID
    else:
        keep = _pick(rng, features, int(rng.integers(1, min(4, len(features)) + 1)))
        steps = [f"list the tables of `{fname}`", "join them all on `row_id`",
                 f"keep `row_id` and the columns {', '.join(f'{md_name(c)}' for c in keep)}"]
        result = joined[[names.ROW_ID, *keep]]
        key = names.ROW_ID
        params["keep"] = keep
        if mode in ("join_filter",):
            col = _pick(rng, num)[0]
            threshold = float(joined[col].median())
            result = joined.loc[joined[col] >= threshold, [names.ROW_ID, *keep]]
            steps.insert(2, f"keep only the rows where {md_name(col)} is at least {threshold!r}")
            params.update(filter_col=col, threshold=threshold)
        if mode == "join_aggregate":
            g, a = _pick(rng, ctx.categorical(joined))[0], _pick(rng, num)[0]
            grouped = joined.groupby(g, dropna=True)[a].agg(["count", "mean"]).reset_index()
            result = grouped.rename(columns={"count": "n_rows", "mean": f"mean_{a}"})
            key = g
            # pandas drops a missing group and SQL's GROUP BY keeps it as a group: the text must choose
            steps = [f"list the tables of `{fname}`", "join them all on `row_id`",
                     f"group the rows by {md_name(g)}, leaving out the rows where {md_name(g)} is missing",
                     f"count the rows with a non-missing {md_name(a)} per group (`n_rows`) and the mean of {md_name(a)} "
                     f"({md_name('mean_' + a)}), one row per group with the columns {md_name(g)}, `n_rows`, "
                     f"{md_name('mean_' + a)}"]
            params.update(group=g, agg=a)
        steps.append("save the result as `joined.csv`")
    result = result.reset_index(drop=True)
    columns = [c for c in result.columns if c != key]
    numeric = {c: bool(pd.api.types.is_numeric_dtype(result[c])) for c in columns}
    rows = [[_text(r[0])] + [(_num(v) if numeric[c] else _text(v)) for c, v in zip(columns, r[1:])]
            for r in result[[key, *columns]].itertuples(index=False, name=None)]
    body = '''
import sqlite3
con = sqlite3.connect(P["file"])
frames = {t: pd.read_sql_query('SELECT * FROM "%s"' % t, con) for t in P["tables"]}
con.close()
if P["mode"] == "export":
    out = frames[P["table"]].sort_values("row_id")
else:
    joined = None
    for t in P["tables"]:
        joined = frames[t] if joined is None else joined.merge(frames[t], on="row_id")
    joined = joined.sort_values("row_id")
    if P["mode"] == "join_aggregate":
        out = joined.groupby(P["group"])[P["agg"]].agg(["count", "mean"]).reset_index()
        out = out.rename(columns={"count": "n_rows", "mean": "mean_" + P["agg"]})
    else:
        if P["mode"] == "join_filter":
            joined = joined[joined[P["filter_col"]] >= P["threshold"]]
        out = joined[["row_id"] + P["keep"]]
out.to_csv("joined.csv", index=False)
'''
    text = (f"`{fname}` is a SQLite database whose tables share the key column `row_id`. "
            f"Produce `joined.csv` as follows:\n{_listing(steps)}"
            + _precision_note(_RTOL, _TABLE_ATOL, "Numeric values") + " Text values must match exactly.")
    stages = ("data_acquisition", "eda") if mode == "join_aggregate" else ("data_acquisition",)
    inputs = {fname: db_path if db_path else f"{GENERATED_DIR}/{fname}"}
    return _task(ctx, "acquisition", "data_acquisition", stages, steps, text, inputs, "joined.csv",
                 {"kind": "table", "key": key, "columns": columns, "rows": rows, "numeric": numeric,
                  "rtol": _RTOL, "atol": _TABLE_ATOL},
                 program(params, body), TABLE_PERTURBATIONS, generated)


# ----------------------------------------------------------------------------- evaluation

# The evaluation category asks the agent for metrics as scikit-learn spells them (R² unclipped, F1 with
# its default zero_division, labels as the CSV reads): an exercise in computing them, not a score of the
# agent. So these are expressions for the instruction and the oracle, not the scoring registry
# (pipeline/core/metrics.py), whose macro-F1 and R² canonicalise labels and clip, and give other answers.
_CLASS_METRICS = {"accuracy": "accuracy_score(y, p)", "macro_f1": "f1_score(y, p, average='macro')",
                  "macro_precision": "precision_score(y, p, average='macro', zero_division=0)",
                  "macro_recall": "recall_score(y, p, average='macro', zero_division=0)",
                  "balanced_accuracy": "balanced_accuracy_score(y, p)"}
_REG_METRICS = {"mae": "mean_absolute_error(y, p)", "rmse": "mean_squared_error(y, p) ** 0.5",
                "r2": "r2_score(y, p)", "median_absolute_error": "median_absolute_error(y, p)",
                "max_error": "max_error(y, p)"}
_METRIC_IMPORTS = ("from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, max_error, "
                   "mean_absolute_error, mean_squared_error, median_absolute_error, precision_score, r2_score, "
                   "recall_score")


def _metric_values(frame: pd.DataFrame, metrics: list[str], table: dict[str, str]) -> dict[str, float]:
    """The named metrics of y_true vs y_pred, by the very expressions the oracle uses."""
    scope: dict = {}
    exec(_METRIC_IMPORTS, scope)  # noqa: S102 - our own constant import line
    y, p = frame["y_true"], frame["y_pred"]
    return {m: float(eval(table[m], scope, {"y": y, "p": p})) for m in metrics}  # noqa: S307


def evaluation_task(ctx: DataContext, rng: np.random.Generator) -> DesktopTask:
    """Named metrics for given predictions (easy/medium), or a seeded K-fold cross-validation (hard)."""
    q, df = ctx.question, ctx.train.dropna(subset=[ctx.target])
    classification = q["problem_type"] == "classification"
    if len(df) < 20:
        raise DatasetRejected("evaluation: fewer than 20 labelled rows")
    tabular = q["problem_type"] in ("classification", "regression") and "numerical_features" in q
    if rng.random() < 0.35 and tabular:  # a time-series task has no feature lists to cross-validate with
        return _cross_validation_task(ctx, rng, df, classification)
    y = df[ctx.target].reset_index(drop=True)
    if classification:
        labels = sorted(y.unique().tolist(), key=_text)
        flip = rng.random(len(y)) < 0.25
        other = [labels[int(i)] for i in rng.integers(len(labels), size=len(y))]
        pred = pd.Series(np.where(flip, pd.Series(other, dtype=object), y.astype(object)))
    else:
        scale = float(y.std()) or 1.0
        pred = pd.Series(np.round(y.astype(float) + rng.normal(0, 0.5 * scale, len(y)), 6))
    frame = pd.DataFrame({names.ROW_ID: np.arange(len(y)), "y_true": y, "y_pred": pred})
    data = frame.to_csv(index=False, lineterminator="\n").encode()
    # the expected answer comes from the file as the agent reads it, by DARE-bench's CSV convention
    frame = read_task_csv(io.BytesIO(data))
    table = _CLASS_METRICS if classification else _REG_METRICS
    metrics = _pick(rng, sorted(table), int(rng.integers(1, 4)))
    values = _metric_values(frame, metrics, table)
    if any(not math.isfinite(v) for v in values.values()):
        raise DatasetRejected("evaluation: a metric is undefined on these predictions")
    answers = {m: {"value": v, "rtol": _RTOL, "atol": _ATOL} for m, v in values.items()}
    steps = ["load `predictions.csv` (columns `row_id`, `y_true`, `y_pred`)"] + [
        f"compute `{m}` ({table[m].split('(')[0]} from scikit-learn{', square root' if m == 'rmse' else ''}"
        f"{', macro average' if 'macro' in m else ''})" for m in metrics]
    body = _METRIC_IMPORTS + '''
frame = pd.read_csv("predictions.csv", keep_default_na=False, na_values=[""])
y, p = frame["y_true"], frame["y_pred"]
with open("metrics.json", "w") as fh:
    json.dump({name: float(eval(expr)) for name, expr in P["metrics"].items()}, fh, indent=2)
'''
    text = (f"`predictions.csv` holds the true values and a model's predictions of {md_name(ctx.target)}. "
            f"Compute these metrics and save them in `metrics.json` as an object keyed by metric name:\n"
            f"{_listing(steps[1:])}" + _precision_note(_RTOL, _ATOL, "The metrics"))
    return _task(ctx, "metrics", "evaluation", ("evaluation",), steps, text,
                 {"predictions.csv": f"{GENERATED_DIR}/predictions.csv"}, "metrics.json",
                 {"kind": "answers", "answers": answers},
                 program({"metrics": {m: table[m] for m in metrics}}, body), ANSWER_PERTURBATIONS,
                 {"predictions.csv": data})


_CV_BODY = '''
import warnings
from sklearn.model_selection import KFold, cross_val_score
warnings.simplefilter("ignore")
df = read_table(P["file"]).dropna(subset=[P["target"]])
model = build_pipeline({"imputer_type": "mean", "numerical_features": P["numeric"],
                        "categorical_features": P["categorical"], "model_type": P["model"], "random_state": P["seed"]})
folds = KFold(n_splits=P["k"], shuffle=True, random_state=P["seed"])
scores = cross_val_score(model, df[P["numeric"] + P["categorical"]], df[P["target"]], cv=folds,
                         scoring=P["scoring"])
with open("cv.json", "w") as fh:
    json.dump({"fold_scores": [float(s) for s in scores], "mean_score": float(scores.mean())}, fh, indent=2)
'''


def _cross_validation_task(ctx: DataContext, rng: np.random.Generator, df: pd.DataFrame,
                           classification: bool) -> DesktopTask:
    import warnings

    from sklearn.model_selection import KFold, cross_val_score

    q = ctx.question
    numeric, categorical = list(q["numerical_features"]), list(q["categorical_features"])
    model = "DecisionTreeClassifier" if classification else "Ridge"
    scoring = "accuracy" if classification else "r2"
    k, seed = int(rng.choice([3, 5])), int(rng.integers(0, 1000))
    fname, tree_path = ctx.source(names.TRAIN_V2)
    pipe = build_pipeline({"imputer_type": "mean", "numerical_features": numeric,
                           "categorical_features": categorical, "model_type": model, "random_state": seed})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(pipe, df[numeric + categorical], df[ctx.target],
                                 cv=KFold(n_splits=k, shuffle=True, random_state=seed), scoring=scoring)
    if not np.isfinite(scores).all():
        raise DatasetRejected("evaluation: a cross-validation fold has no score")
    # Which columns are numeric and which categorical is the task's own choice (question_v1 records it),
    # not something the data settles: a 0/1 column such as `married` fits either, and each reading
    # gives other fold scores. So the instruction names both lists, and their order in the
    # ColumnTransformer, which a decision tree's tie-breaking depends on.
    steps = [f"load `{fname}` and drop the rows with a missing {md_name(ctx.target)}",
             f"numeric features: {_names(numeric)}" + (": mean imputation then standard scaling" if numeric else ""),
             f"categorical features: {_names(categorical)}" + (
                 ": most-frequent imputation then one-hot encoding (`OneHotEncoder(handle_unknown='ignore')`)"
                 if categorical else ""),
             "combine them with a `ColumnTransformer` holding the numeric block first, then the categorical one, "
             "each over its features in the order listed",
             f"model: scikit-learn `{model}(random_state={seed})`, in one `Pipeline` after the ColumnTransformer, "
             f"so the preprocessing is fitted within each training fold",
             f"{k}-fold cross-validation with `KFold(n_splits={k}, shuffle=True, random_state={seed})`, "
             f"scoring `{scoring}`",
             "save the per-fold scores (`fold_scores`, in fold order) and their mean (`mean_score`)"]
    answers = {"fold_scores": {"value": [float(s) for s in scores], "rtol": _RTOL, "atol": _ATOL},
               "mean_score": {"value": float(scores.mean()), "rtol": _RTOL, "atol": _ATOL}}
    text = (f"Cross-validate a model predicting {md_name(ctx.target)} and save `cv.json`:\n{_listing(steps)}"
            + _precision_note(_RTOL, _ATOL, "The fold scores and their mean"))
    params = {"file": fname, "target": ctx.target, "numeric": numeric, "categorical": categorical,
              "model": model, "seed": seed, "k": k, "scoring": scoring}
    return _task(ctx, "crossval", "evaluation", ("feature_engineering", "modelling", "evaluation"), steps, text,
                 {fname: tree_path}, "cv.json", {"kind": "answers", "answers": answers},
                 program(params, _CV_BODY, pipeline=True), ANSWER_PERTURBATIONS)


# ----------------------------------------------------------------------------- visualization

_VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"  # the oracle below writes it too
_CHART_BODY = '''
df = read_table(P["file"])
x, y = P["x"], P["y"]
if P["mode"] == "bar_mean":
    data = df.dropna(subset=[x, y]).groupby(x)[y].mean().reset_index()
elif P["mode"] == "bar_count":
    data = df[x].dropna().value_counts().rename(y).rename_axis(x).reset_index()
else:
    data = df[[x, y]].dropna().head(P["limit"])
values = [{x: jsonable(a), y: jsonable(b)} for a, b in zip(data[x], data[y])]
spec = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "title": P["title"],
    "data": {"values": values},
    "mark": P["mark"],
    "encoding": {
        "x": {"field": x, "type": P["x_type"], "title": P["x_title"]},
        "y": {"field": y, "type": "quantitative", "title": P["y_title"]},
    },
}
with open("chart.vl.json", "w") as fh:
    json.dump(spec, fh, indent=2)
'''


def visualization_task(ctx: DataContext, rng: np.random.Generator) -> DesktopTask:
    """A Vega-Lite chart spec with inline data: title, mark, field mapping and axis titles are checked."""
    df = ctx.train
    fname, tree_path = ctx.source(names.TRAIN_V2)
    num, cat = ctx.numeric(df), ctx.categorical(df)
    modes = (["bar_count", "bar_mean"] if cat else []) + (["scatter"] if len(num) >= 2 else [])
    if not modes:
        raise DatasetRejected("visualization: no column pair to plot")
    mode = modes[int(rng.integers(len(modes)))]
    limit = 200
    if mode == "scatter":
        x, y = _pick(rng, num, 2)
        data = df[[x, y]].dropna().head(limit)
        mark, x_type = "point", "quantitative"
        title = f"{y} against {x}"
        steps = [f"take the first {limit} rows of `{fname}` where {md_name(x)} and {md_name(y)} are both present",
                 f"a point mark with {md_name(x)} on x and {md_name(y)} on y (both quantitative)",
                 f"title {md_name(title)}, x axis title {md_name(x)}, y axis title {md_name(y)}"]
        stages: tuple[str, ...] = ("visualization",)
        y_title, x_title = y, x
    elif mode == "bar_count":
        x = _pick(rng, cat)[0]
        y = "n_rows"
        data = df[x].dropna().value_counts().rename(y).rename_axis(x).reset_index()
        mark, x_type, title, x_title, y_title = "bar", "nominal", f"Rows per {x}", x, "number of rows"
        steps = [f"count the rows of `{fname}` per non-missing value of {md_name(x)} (field {md_name(y)})",
                 f"a bar mark with {md_name(x)} on x (nominal), {md_name(y)} on y (quantitative), title {md_name(title)}, "
                 f"x axis title {md_name(x_title)}, y axis title {md_name(y_title)}"]
        stages = ("visualization",)
    else:
        x, y = _pick(rng, cat)[0], _pick(rng, num)[0]
        data = df.dropna(subset=[x, y]).groupby(x)[y].mean().reset_index()
        mark, x_type, title, x_title, y_title = "bar", "nominal", f"Mean {y} by {x}", x, f"mean {y}"
        steps = [f"drop the rows of `{fname}` where {md_name(x)} or {md_name(y)} is missing",
                 f"group by {md_name(x)} and take the mean of {md_name(y)} (keep the field name {md_name(y)})",
                 "a bar mark", f"{md_name(x)} on x (nominal) and {md_name(y)} on y (quantitative)",
                 f"title {md_name(title)}", f"x axis title {md_name(x_title)} and y axis title {md_name(y_title)}"]
        stages = ("eda", "visualization")
    if data.empty:
        raise DatasetRejected("visualization: nothing to plot")
    values = [[_text(a), float(b)] for a, b in zip(data[x], data[y])]
    spec = {"kind": "vega_lite", "mark": mark, "title": title, "rtol": _RTOL, "atol": _ATOL, "values": values,
            "encoding": {"x": {"field": x, "type": x_type, "title": x_title},
                         "y": {"field": y, "type": "quantitative", "title": y_title}}}
    params = {"file": fname, "mode": mode, "x": x, "y": y, "limit": limit, "mark": mark, "x_type": x_type,
              "title": title, "x_title": x_title, "y_title": y_title}
    # The evaluator checks `$schema` names Vega-Lite (evaluator_template.check_vega_lite), which Vega-Lite
    # itself leaves optional: the instruction says so, or a literal chart scores 7 of 8 checks.
    text = (f"Make a chart of `{fname}` as a Vega-Lite v5 JSON specification whose `$schema` is "
            f"{_VEGA_LITE_SCHEMA!r}, with the data inline "
            f"(`data.values`, one object per mark with the fields named below) and save it as `chart.vl.json`; "
            f"axis titles go in each encoding channel's `title`:\n{_listing(steps)}"
            + _precision_note(_RTOL, _ATOL, "Quantitative data values"))
    return _task(ctx, "chart", "visualization", stages, steps, text, {fname: tree_path}, "chart.vl.json", spec,
                 program(params, _CHART_BODY), CHART_PERTURBATIONS)


# Registry: category -> generator. Modelling is the DARE variants (dare_variants.py).
GENERATORS: dict[str, Callable[[DataContext, np.random.Generator], DesktopTask]] = {
    "data_acquisition": acquisition_task,
    "eda": eda_task,
    "feature_engineering": feature_engineering_task,
    "evaluation": evaluation_task,
    "visualization": visualization_task,
}
