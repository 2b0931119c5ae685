"""The relational form of a task from a relational source (sourcing/sqlite_source.py).

A relational source hands over one flat analysis table (fact table LEFT JOIN its
dimension tables, many-to-one) plus the join path (DatasetRecord.join_path). The
IF training files give the agent the tables back: the fact table and the
dimension tables the task's columns come from, so the instruction's joins are
needed to rebuild the training data. Everything here is pure: frames in, frames out.
"""

from __future__ import annotations

import pandas as pd

from pipeline.core.records import DatasetRecord, DatasetRejected, JoinStep, TaskSpec


def if_columns(spec: TaskSpec) -> list[str]:
    """The analysis-table columns of the IF training data: the target, then the ranged features."""
    return list(spec.target) + list(spec.not_filtered_related_features)


def task_join_path(record: DatasetRecord, spec: TaskSpec) -> list[JoinStep]:
    """The steps of the source's join path this task needs, each carrying only the columns the
    task uses (its IF columns, plus the keys of later steps); empty for a flat task.

    A step is kept when its table brings an IF column or is on the way to one that does
    (a chain fact -> orders -> customers needs orders for its customer key)."""
    used = set(if_columns(spec))
    needed: list[JoinStep] = []
    wanted = set(used)
    for step in reversed(record.join_path):  # later steps hang off earlier ones: walk back
        keep = [c for c in step.columns if c in wanted]
        if keep:
            needed.append(step.model_copy(update={"columns": tuple(keep)}))
            wanted.add(step.left_on)
    return list(reversed(needed))


def relational_columns(spec: TaskSpec, path: list[JoinStep]) -> list[str]:
    """IF columns plus the join keys the relational files must carry, in a stable order."""
    cols = if_columns(spec)
    return cols + [s.left_on for s in path if s.left_on not in cols]


def noisy_columns(spec: TaskSpec, path: list[JoinStep]) -> list[str]:
    """The ranged columns IF noise may alter in a relational task: fact-table columns that are
    not join keys.

    A noise row is a copy of a clean row with an out-of-range value. Were that value a
    dimension attribute, it would have to live in the dimension row its key points to,
    which clean rows share, so it would corrupt them (or need a made-up key). Were it a
    join key, it would point at no dimension row and the row's dimension values would
    vanish on the join. Keeping noise on the fact side's own columns leaves every
    dimension row consistent and the range filter still removes exactly the noise rows."""
    on_dims = {c for s in path for c in s.columns} | {s.left_on for s in path}
    cols = [c for c in spec.expected_ranges if c not in on_dims]
    if not cols:
        raise DatasetRejected("relational task has no fact-table feature with an expected range to carry IF noise",
                              "relational_no_noise_feature")
    return cols


def split_relational(flat: pd.DataFrame, path: list[JoinStep]) -> dict[str, pd.DataFrame]:
    """Fact table first, then one table per step (its key, renamed to `right_on`, and columns).

    Dimension rows are the distinct (key, columns) the flat rows hold; a key with two
    different rows would make the join ambiguous, so it rejects the dataset."""
    on_dims = {c for s in path for c in s.columns}
    tables = {path[0].left: flat[[c for c in flat.columns if c not in on_dims]].reset_index(drop=True)}
    for step in path:
        dim = flat[[step.left_on, *step.columns]].dropna(subset=[step.left_on]).drop_duplicates()
        if dim[step.left_on].duplicated().any():
            raise DatasetRejected(f"table {step.right!r}: a key {step.right_on!r} maps to two different rows",
                                  "relational_key_not_unique")
        try:
            dim = dim.sort_values(step.left_on, kind="mergesort")
        except TypeError:  # mixed key types cannot be ordered; first appearance is deterministic too
            pass
        tables[step.right] = dim.rename(columns={step.left_on: step.right_on}).reset_index(drop=True)
    return tables


def join_tables(tables: dict[str, pd.DataFrame], path: list[JoinStep]) -> pd.DataFrame:
    """Rebuild the flat frame: LEFT JOIN each step's table on left_on = right_on, dropping the
    right key (it equals left_on). The key is renamed first, since a fact column may share its name."""
    joined = tables[path[0].left]
    for step in path:
        right = tables[step.right].rename(columns={step.right_on: "\x00key"})
        joined = joined.merge(right, left_on=step.left_on, right_on="\x00key", how="left").drop(columns="\x00key")
    return joined
