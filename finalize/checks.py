"""Independent checks of a written task; each returns Problems, a guard gates publishing.

The checks re-read the files from disk the way an agent or a grader would, so
they catch what the in-memory tables cannot: a format round trip that changed a
value, a filter that does not recover the clean rows, a leaked target.
"""

from __future__ import annotations

from collections import Counter
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from finalize.instructions import (SELECTION_ANCHOR, VAL_MISSING_RULE, format_number, missing_value_rule, quoted_value,
                                   row_order_sentence)
from finalize.task_files import TaskFiles
from pipeline.core import names
from pipeline.core.column_refs import resolve
from pipeline.core.if_workflow import filter_by_expected_ranges, make_model
from pipeline.core.jsonio import read_json
from pipeline.core.metrics import metric_for, scoring_sentence
from pipeline.core.records import CHECK_FAILED, DatasetRejected
from pipeline.core.sqlite import connect_read_only, table_names
from pipeline.core.text import md_name


@dataclass(frozen=True)
class Problem:
    where: str
    message: str
    severity: Literal["error", "warning"] = "error"
    code: str = ""  # the rejection code of a check that names its own (mm_infeasible, nondeterministic)

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.message}"


def _canonical_value(v) -> tuple:
    """A cell normalised for comparison across formats: numbers as floats, text as text, missing."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ("missing",)
    if isinstance(v, (bool, np.bool_)):
        return ("num", float(v))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return ("num", float(v))
    return ("str", str(v))


def canonical_rows(df: pd.DataFrame) -> list[tuple]:
    """Rows as sorted tuples of normalised values, for multiset comparison across formats."""
    cols = list(df.columns)
    rows = [tuple(_canonical_value(v) for v in row) for row in df[cols].itertuples(index=False, name=None)]
    return sorted(rows)


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """canonical_rows(a) == canonical_rows(b), without a Python tuple per cell (most of check_tabular_task's
    time on a big task): each pair of columns becomes integer codes, equal exactly where the normalised
    values are equal, and the rows of codes are compared as multisets, which is what comparing the
    sorted lists of rows does. A NaN that is not a float (it would be a number that sorts nowhere in
    particular) sends the comparison back to canonical_rows itself."""
    if len(a) != len(b) or a.shape[1] != b.shape[1]:
        return len(a) == len(b) == 0
    if len(a) == 0:
        return True
    codes_a, codes_b = [], []
    for j in range(a.shape[1]):
        pair = _column_codes(a.iloc[:, j], b.iloc[:, j])
        if pair is None:
            return canonical_rows(a) == canonical_rows(b)
        codes_a.append(pair[0])
        codes_b.append(pair[1])
    rows_a, rows_b = np.column_stack(codes_a), np.column_stack(codes_b)
    return bool(np.array_equal(rows_a[np.lexsort(rows_a.T)], rows_b[np.lexsort(rows_b.T)]))


def _text_or_missing(column: pd.Series) -> np.ndarray | None:
    """The column's values as iterating it gives them, when each is text (a str) or missing: the text,
    or None where _canonical_value says missing; else None. Iterating a string column gives its dtype's
    na_value for a missing value: NaN is missing, while pd.NA is not a float and reads as the text "<NA>"."""
    if isinstance(column.dtype, pd.StringDtype):
        na = column.dtype.na_value
        return column.to_numpy(dtype=object, na_value=None if isinstance(na, float) else str(na))
    if column.dtype != object:
        return None
    values = column.to_numpy()
    if pd.api.types.infer_dtype(values, skipna=False) != "string":  # all str (no missing), else per cell
        return None
    return values


def _column_codes(x: pd.Series, y: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes for the values of x and y, shared, equal where _canonical_value is; None if undefined."""
    n = len(x)
    if isinstance(x.dtype, np.dtype) and isinstance(y.dtype, np.dtype) and \
            x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
        # Iterating a numpy column gives Python bools, ints and floats: _canonical_value's float of
        # each, NaN missing. + 0.0 makes -0.0 the 0.0 it equals.
        codes = pd.factorize(np.concatenate([x.to_numpy(np.float64), y.to_numpy(np.float64)]) + 0.0)[0]
        return codes[:n], codes[n:]
    text_x, text_y = _text_or_missing(x), _text_or_missing(y)
    if text_x is not None and text_y is not None:  # None is missing, and factorize codes it -1
        codes = pd.factorize(np.concatenate([text_x, text_y]))[0]
        return codes[:n], codes[n:]
    values = np.array([*x, *y], dtype=object)
    keys: dict[tuple, int] = {}
    canonical = [_canonical_value(v) for v in values]
    if any(k[0] == "num" and k[1] != k[1] for k in canonical):
        return None
    codes = np.array([keys.setdefault(k, len(keys)) for k in canonical], dtype=np.int64)
    return codes[:n], codes[n:]


def check_tabular_task(task_dir: Path, files: TaskFiles | None = None) -> list[Problem]:
    """`files`: the task's files as read for other checks too (read here otherwise)."""
    problems: list[Problem] = []
    where = task_dir.name
    meta_path = task_dir / names.VERIFY_DIR / names.ALL_METADATA
    if not meta_path.exists():
        return [Problem(where, f"missing {names.VERIFY_DIR}/{names.ALL_METADATA}")]
    q = read_json(meta_path)["question"]
    src = task_dir / names.SOURCE_DIR
    for key in ("needed_files_v1", "needed_files_v2"):
        for f in q[key]:
            if not (src / f).exists():
                problems.append(Problem(where, f"{key} names {f}, which does not exist"))
    if problems:
        return problems
    target = q["target"]
    if files is None or files.task_dir != task_dir or files.file_type != q["save_file_type"]:
        files = TaskFiles(task_dir, q["save_file_type"])
    read = files.source
    train_v1 = read(names.TRAIN_V1)
    if names.ROW_ID in train_v1.columns:
        train_v1 = train_v1.drop(columns=[names.ROW_ID])
    clean = read(names.TRAIN_V1_NO_ERR)
    filtered = filter_by_expected_ranges(train_v1, q["expected_ranges"], q["column_type_inference"])
    if sorted(filtered.columns) != sorted(clean.columns):
        problems.append(Problem(where, "train_v1 and train_v1_no_err have different columns"))
    elif not same_rows(filtered[list(clean.columns)], clean):
        problems.append(Problem(where, f"filtering train_v1 by expected_ranges gives {len(filtered)} rows, "
                                       f"not the {len(clean)} rows of train_v1_no_err"
                                       f"{_row_difference(filtered[list(clean.columns)], clean)}"))
    if len(train_v1) <= len(clean):
        problems.append(Problem(where, "train_v1 holds no noise rows"))
    val_v1, val_v2 = read(names.VAL_V1), read(names.VAL_V2)
    for name, val in ((names.VAL_V1, val_v1), (names.VAL_V2, val_v2)):
        leaked = [t for t in target if t in val.columns]
        if leaked:
            problems.append(Problem(where, f"{name} contains the target {leaked}"))
        if names.ROW_ID not in val.columns:
            problems.append(Problem(where, f"{name} has no {names.ROW_ID}"))
    gt = _read_verify_csv(files, names.GROUND_TRUTH, [names.ROW_ID, *target], problems)
    if gt is not None and names.ROW_ID in val_v2.columns and sorted(gt[names.ROW_ID]) != sorted(val_v2[names.ROW_ID]):
        problems.append(Problem(where, "ground_truth row_ids differ from val_v2's"))
    sim = _read_verify_csv(files, names.SIMULATED_PRED, [names.ROW_ID, *target], problems)
    if sim is not None:
        if names.ROW_ID in val_v1.columns and sorted(sim[names.ROW_ID]) != sorted(val_v1[names.ROW_ID]):
            problems.append(Problem(where, "simulated predictions' row_ids differ from val_v1's"))
        if sim[target].isna().any().any():
            problems.append(Problem(where, "simulated predictions contain missing values"))
    train_v2 = read(names.TRAIN_V2)
    if any(t not in train_v2.columns for t in target):
        problems.append(Problem(where, "train_v2 lacks the target"))
    if q["problem_type"] == "classification" and gt is not None and all(t in train_v2.columns for t in target):
        for t in target:
            unseen = set(gt[t].astype(str)) - set(train_v2[t].astype(str))
            if unseen:
                problems.append(Problem(where, f"val classes of {t!r} never seen in training: {sorted(unseen)}",
                                        "warning"))
    return problems


def _row_difference(filtered: pd.DataFrame, clean: pd.DataFrame) -> str:
    """Which rows make the filtered train_v1 differ from the clean rows, one example each way."""
    def counted(df: pd.DataFrame) -> Counter:
        return Counter(canonical_rows(df))

    def show(row: tuple) -> str:
        return "{" + ", ".join(f"{c}: {v[-1]!r}" if v[0] != "missing" else f"{c}: missing"
                               for c, v in zip(clean.columns, row)) + "}"

    extra, lost = counted(filtered) - counted(clean), counted(clean) - counted(filtered)
    parts = []
    if extra:
        parts.append(f"{sum(extra.values())} row(s) pass the range filter but are not clean rows, "
                     f"e.g. {show(next(iter(extra)))} (a noise row inside the ranges?)")
    if lost:
        parts.append(f"{sum(lost.values())} clean row(s) are missing after filtering, e.g. {show(next(iter(lost)))}")
    return ": " + "; ".join(parts) if parts else ""


def check_instruction(where: str, text: str, q: dict, documented: dict[str, str] | None = None,
                      severity: Literal["error", "warning"] = "error", *, tables: list[str] | None = None,
                      strict: bool = False) -> list[Problem]:
    """The IF text states everything the reference depends on, read as an agent reads it: with
    metadata.txt's descriptions (`documented`, {column: description}) as the only key from words to
    columns. Always: each selected feature (backticked, or by a description that singles it out),
    each range endpoint or allowed value, the model, its random_state and the imputation.
    `strict` (daregen's own wording): also each feature list in its place and order (the ranges,
    the selection, the numeric and the categorical features), the encoders, the row order, the
    validation file's missing-value rule, and every SQLite table in `tables` (those the agent reads)."""
    documented = documented or {}
    missing: list[str] = []
    mentioned = {column for column, _ in resolve(text, documented)}
    missing += [f"feature {c!r}" for c in q["selected_features"] if md_name(c) not in text and c not in mentioned]
    for col, allowed in q["expected_ranges"].items():
        if q["column_type_inference"].get(col) == "numerical":
            missing += [f"range value {v} of {col!r}" for v in map(format_number, allowed)
                        if not re.search(rf"(?<![\d.]){re.escape(v)}(?![\d])", text)]
        else:  # a category value must appear quoted: as the generator escapes it, or in a usual quote style
            missing += [f"range value {v} of {col!r}" for v in map(str, allowed)
                        if quoted_value(v) not in text and not any(f"{a}{v}{b}" in text
                                                                   for a, b in ('""', "''", "‘’", "“”"))]
    if q["model_type"] not in text:
        missing.append(f"model {q['model_type']}")
    seeded = "random_state" in make_model(q["model_type"], 0).get_params()
    if seeded and not re.search(rf"random[_ ]state\D{{0,20}}\b{q['random_state']}\b", text):
        missing.append(f"random_state {q['random_state']}")
    imputer_words = {q["imputer_type"], q["imputer_type"].replace("_", " ")}
    if q.get("numerical_features", True) and not any(w in text for w in imputer_words):  # no numeric feature: none
        missing.append(f"imputation {q['imputer_type']}")
    if strict:
        missing += _workflow_facts_missing(text, q, documented, tables or [])
    if not missing:
        return []
    return [Problem(where, "question_v1 does not state " + ", ".join(missing[:8])
                    + (f" (+{len(missing) - 8} more)" if len(missing) > 8 else ""), severity)]


def check_scoring(where: str, entry: dict, q: dict) -> list[Problem]:
    """Each question states how it is scored in the one sentence its scorers apply
    (pipeline.core.metrics.scoring_sentence: the metric, and for an exact match the precision it needs):
    a question that leaves it out makes a solver guess the rule its answer is judged by."""
    missing = [variant for variant in ("v1", "v2")
               if scoring_sentence(q["problem_type"], variant, len(q["target"])) not in entry[f"question_{variant}"]]
    return [Problem(where, f"question_{v} does not state its scoring sentence ({metric_for(q['problem_type'], v).name})")
            for v in missing]


# The preprocessing the reference always does (pipeline.core.if_workflow.build_pipeline), as words an
# agent needs to read to rebuild it.
ENCODER_FACTS = ("standard scaler", "one-hot encoder", 'handle_unknown set to "ignore"', "sparse_output set to False",
                 "ColumnTransformer with the numeric features first", '"most_frequent"')
# Which of them a question states depends on the feature kinds it has (instructions.preprocessing_text): a step
# for a kind the data lacks is not run, and not spelled out.
_SCALER_FACTS = ("standard scaler",)
_BOTH_KINDS_FACTS = ("ColumnTransformer with the numeric features first",)


def encoder_facts(q: dict) -> list[str]:
    """The ENCODER_FACTS a question of `q`'s feature kinds states."""
    nums, cats = bool(q["numerical_features"]), bool(q["categorical_features"])
    return [f for f in ENCODER_FACTS if (f in _SCALER_FACTS and nums) or (f in _BOTH_KINDS_FACTS and nums and cats)
            or (f not in _SCALER_FACTS + _BOTH_KINDS_FACTS and cats)]


def _workflow_facts_missing(text: str, q: dict, documented: dict[str, str], tables: list[str]) -> list[str]:
    """What a daregen question_v1 fails to state beyond the loose checks, each as a short phrase."""
    missing = []
    got = []
    for rule in re.findall(r"^\d+\. (.*)$", text, flags=re.M):  # the numbered range rules
        head = re.split(r" between (?=\S+ and \S+ inclusive$)| limited to the values ", rule)[0]
        got.append([c for c, _ in resolve(head, documented)])
    expected = list(q["expected_ranges"])
    if got != [[c] for c in expected]:
        missing.append(f"the expected ranges in order (read {_columns_read(got)}, need {expected})")
    nums, cats = list(q["numerical_features"]), list(q["categorical_features"])
    selection = text.find(SELECTION_ANCHOR)
    typing = text.find(". Treat ", selection) if selection >= 0 else -1
    lists = [("the selected features in order", (selection + len(SELECTION_ANCHOR), typing), q["selected_features"])]
    numeric = _span(text, typing, ". Treat ", r" as (?:a )?numeric feature")
    if nums:
        lists.append(("the numeric features in order", numeric, nums))
    if cats:
        lists.append(("the categorical features in order",
                      _span(text, numeric[1] if nums else typing, ", and treat " if nums else ". Treat ",
                            r" as (?:a )?categorical feature"), cats))
    for what, (i, j), want in lists:
        read = [c for c, _ in resolve(text[i:j], documented)] if selection >= 0 and 0 <= i < j else None
        if read != list(want):
            missing.append(f"{what} (read {read}, need {list(want)})")
    missing += [f"the encoding step {f!r}" for f in encoder_facts(q) if f not in text]
    join_path = q.get("join_path") or []
    order = row_order_sentence(q["save_file_type"], join_path[0]["left"] if join_path else None)
    if order not in text:
        missing.append("the training rows' order")
    if f"{VAL_MISSING_RULE} ({missing_value_rule(q['save_file_type'])})" not in text:
        missing.append("the validation file's missing-value rule")
    missing += [f"SQLite table {t!r}" for t in tables if md_name(t) not in text]
    return missing


def _span(text: str, offset: int, start: str, stop: str) -> tuple[int, int]:
    """Where the words between `start` (the first after `offset`) and the regex `stop` are; (-1, -1) if not found."""
    i = text.find(start, offset) if offset >= 0 else -1
    m = re.compile(stop).search(text, i + len(start)) if i >= 0 else None
    return (i + len(start), m.start()) if m else (-1, -1)


def agent_tables(source_dir: Path, file_type: str) -> list[str]:
    """The SQLite tables the IF agent reads: those of train_v1 and val_v1 (none for other formats)."""
    if file_type != "sqlite":
        return []
    out = []
    for stem in (names.TRAIN_V1, names.VAL_V1):
        con = connect_read_only(source_dir / names.data_file(stem, file_type))
        try:
            out += table_names(con)
        finally:
            con.close()
    return out


def _columns_read(groups: list[list[str]]) -> str:
    return "[" + ", ".join("/".join(g) or "?" for g in groups) + "]"


def _read_verify_csv(files: TaskFiles, name: str, required: list[str], problems: list[Problem]) -> pd.DataFrame | None:
    """A verify/ file with its required columns, or None after recording why not."""
    where = files.task_dir.name
    if not (files.task_dir / names.VERIFY_DIR / name).exists():
        problems.append(Problem(where, f"missing {names.VERIFY_DIR}/{name}"))
        return None
    df = files.verify_csv(name)
    missing = [c for c in required if c not in df.columns]
    if missing:
        problems.append(Problem(where, f"{name} lacks column(s) {missing}"))
        return None
    return df


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def checks_failed(problems: list[Problem]) -> DatasetRejected:
    """The rejection of a task whose checks found `problems` (errors, at least one): every message in one line,
    coded as its first problem names itself, or `task_checks`."""
    return DatasetRejected(CHECK_FAILED + "; ".join(p.message for p in problems), problems[0].code or "task_checks")
