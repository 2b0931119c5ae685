"""Seeded train/val split of the analysis table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from pipeline.core.records import DatasetRejected, TaskSpec


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**31 - 1))


def analysis_rows(table: pd.DataFrame, spec: TaskSpec, rng: np.random.Generator) -> pd.DataFrame:
    """Rows with every target known, sampled down to spec.max_rows (original order kept)."""
    rows = table[table[list(spec.target)].notna().all(axis=1)].reset_index(drop=True)
    if spec.max_rows is not None and len(rows) > spec.max_rows:
        keep = np.sort(rng.choice(len(rows), size=spec.max_rows, replace=False))
        rows = rows.iloc[keep].reset_index(drop=True)
    return rows


def _time_order(column: pd.Series) -> pd.Series:
    """A sortable key of a panel's time column: its numbers (years, a numeric index) or its dates."""
    if pd.api.types.is_numeric_dtype(column):
        return column.astype(float)
    key = pd.to_datetime(column.astype("string"), errors="coerce", format="mixed")
    if key[column.notna()].isna().any():
        raise DatasetRejected(f"the panel's time column {column.name!r} holds values that are no time",
                              "panel_time_not_time")
    return key


def split_by_time(rows: pd.DataFrame, column: str, ratio: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train on a panel's earlier time points, validate on its last ones: the cut between two time points
    whose training share of the rows is nearest `ratio` (the later cut on a tie), each part keeping the
    rows' order."""
    key = _time_order(rows[column])
    times = np.sort(key.dropna().unique())
    if len(times) < 2:
        raise DatasetRejected(f"the panel's time column {column!r} has fewer than two time points",
                              "panel_too_few_times")
    known = int(key.notna().sum())
    shares = [float((key <= t).sum()) / known for t in times[:-1]]
    cut = times[min(range(len(shares)), key=lambda i: (abs(shares[i] - ratio), -i))]
    # A row whose time is unknown belongs to neither part.
    return rows[(key <= cut).to_numpy()], rows[(key > cut).to_numpy()]


def split_train_val(rows: pd.DataFrame, spec: TaskSpec, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stratified for classification (on the first target of a list), so every class the IF model may
    predict is in train; a short panel's by time (split_by_time)."""
    if spec.split_time_column is not None:
        train, val = split_by_time(rows, spec.split_time_column, spec.train_test_ratio)
        return _checked(train, val, spec)
    target = spec.target[0]
    stratify = None
    if spec.problem_type == "classification":
        counts = rows[target].value_counts()
        n_val = len(rows) - int(np.floor(spec.train_test_ratio * len(rows)))
        if counts.min() >= 2 and n_val >= len(counts):
            stratify = rows[target]
    train, val = train_test_split(rows, train_size=spec.train_test_ratio, random_state=_seed(rng), stratify=stratify)
    return _checked(train, val, spec)


def _checked(train: pd.DataFrame, val: pd.DataFrame, spec: TaskSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    if len(val) == 0 or len(train) == 0:
        raise DatasetRejected(f"split left an empty part ({len(train)} train, {len(val)} val rows)", "split_empty")
    if spec.problem_type == "classification" and any(train[t].nunique() < 2 for t in spec.target):
        raise DatasetRejected("training split holds a single class", "single_class_train")
    return train.reset_index(drop=True), val.reset_index(drop=True)
