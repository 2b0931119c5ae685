"""Assemble every table of one tabular task from the analysis table and its spec."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core import names
from pipeline.core.records import DatasetRecord, TaskPackage, TaskSpec
from postprocess.noise import inject_noise
from postprocess.relational import noisy_columns, relational_columns, task_join_path
from postprocess.split import analysis_rows, split_train_val


def _with_row_id(df: pd.DataFrame) -> pd.DataFrame:
    out = df.reset_index(drop=True).copy()
    out.insert(0, names.ROW_ID, np.arange(1, len(out) + 1, dtype="int64"))
    return out


def split_columns_into_tables(train_v1: pd.DataFrame, n_tables: int, rng: np.random.Generator) -> tuple[pd.DataFrame, ...]:
    """The sqlite form of train_v1: columns shuffled over `n_tables` tables joined by row_id."""
    with_id = _with_row_id(train_v1)
    columns = [train_v1.columns[i] for i in rng.permutation(len(train_v1.columns))]
    n_tables = max(1, min(n_tables, len(columns)))
    chunks = np.array_split(np.arange(len(columns)), n_tables)
    return tuple(with_id[[names.ROW_ID] + [columns[i] for i in chunk]] for chunk in chunks)


def build_package(record: DatasetRecord, spec: TaskSpec, table: pd.DataFrame, rng: np.random.Generator) -> TaskPackage:
    targets = list(spec.target)
    rows = analysis_rows(table, spec, rng)
    train, val = split_train_val(rows, spec, rng)
    if_columns = targets + list(spec.not_filtered_related_features)
    join_path = task_join_path(record, spec)
    noisy = None
    if join_path:  # relational: the join keys ride along; noise stays on fact columns (noisy_columns says why)
        if_columns, noisy = relational_columns(spec, join_path), noisy_columns(spec, join_path)
    clean = train[if_columns].reset_index(drop=True)
    train_v1 = inject_noise(clean, spec, rng, noisy)
    v2_columns = [c for c in table.columns if c not in spec.v2_dropped_columns]
    frames = {
        names.TRAIN_V1: train_v1,
        names.TRAIN_V1_NO_ERR: clean,
        names.VAL_V1: _with_row_id(val[list(spec.not_filtered_related_features)]),
        names.TRAIN_V2: train[v2_columns].reset_index(drop=True),
        names.VAL_V2: _with_row_id(val[[c for c in v2_columns if c not in targets]]),
    }
    ground_truth = _with_row_id(val[targets])
    tables = split_columns_into_tables(train_v1, spec.n_split_tables, rng)
    return TaskPackage(record=record, spec=spec, frames=frames, train_v1_tables=tables,
                       ground_truth=ground_truth, n_noise_rows=len(train_v1) - len(clean))
