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

from finalize.metadata_txt import COLUMNS_HEADER
from finalize.task_files import TaskFiles
from pipeline.core import names
from pipeline.core.if_workflow import filter_by_expected_ranges, make_model
from pipeline.core.jsonio import read_json


@dataclass(frozen=True)
class Problem:
    where: str
    message: str
    severity: Literal["error", "warning"] = "error"

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


def check_instruction(where: str, text: str, q: dict, descriptions: dict[str, str] | None = None,
                      severity: Literal["error", "warning"] = "error") -> list[Problem]:
    """The IF text names everything the reference depends on: each selected feature (by name or
    description), each range endpoint or allowed value, the model, its random_state and the
    imputation. The generator's own wording always passes; this guards rewordings."""
    from finalize.instructions import column_phrase, format_number, quoted_value

    descriptions = descriptions or {}
    missing: list[str] = []

    def named(col: str) -> bool:
        phrase = column_phrase(col, descriptions)
        return f"`{col}`" in text or phrase.split(" (`")[0] in text

    missing += [f"feature {c!r}" for c in q["selected_features"] if not named(c)]
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
    if not any(w in text for w in imputer_words):
        missing.append(f"imputation {q['imputer_type']}")
    if not missing:
        return []
    return [Problem(where, "question_v1 does not mention " + ", ".join(missing[:8])
                    + (f" (+{len(missing) - 8} more)" if len(missing) > 8 else ""), severity)]


def metadata_descriptions(metadata_txt: str) -> dict[str, str]:
    """`name: description` lines of metadata.txt's columns section: after the *last* line that is
    exactly the section header, since the dataset's own description (above it) may contain one."""
    lines = metadata_txt.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == COLUMNS_HEADER]
    out = {}
    for line in lines[starts[-1] + 1:] if starts else []:
        name, sep, desc = line.partition(": ")
        if sep and name.strip():
            out[name.strip()] = desc.strip()
    return out


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
