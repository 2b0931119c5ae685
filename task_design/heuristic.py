"""The deterministic heuristic designer.

design(record, profile, table, rng, config) -> TaskSpec, or DatasetRejected with
a one-line reason. Every random choice draws from `rng`, which the caller seeds
from (global seed, dataset ref), so a dataset's task never depends on which
other datasets are in the build. The LLM designer implements the same call.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from pipeline.core.records import (
    MODELS_BY_PROBLEM,
    ColumnProfile,
    DatasetProfile,
    DatasetRecord,
    DatasetRejected,
    ProblemType,
    TaskSpec,
)
from task_design.config import DesignConfig
from task_design.leakage import screen_leaks

DESIGNER_NAME = "heuristic"
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
IMPUTERS = ("mean", "median", "most_frequent")
MAX_SPLIT_TABLES = 4
SQLITE_MAX_COLUMNS = 2000  # SQLite's default SQLITE_MAX_COLUMN; wider tables go to csv or parquet


def feature_exclusion(col: ColumnProfile, profile: DatasetProfile, config: DesignConfig) -> str | None:
    """Why a column cannot be a feature, or None when it can."""
    if col.kind in ("id", "text", "constant", "datetime"):
        return {"id": "id-like", "text": "free text", "constant": "constant or all missing",
                "datetime": "datetime"}[col.kind]
    if profile.missing_frac(col.name) > config.max_feature_missing:
        return f"{profile.missing_frac(col.name):.0%} missing"
    if col.kind == "categorical" and (col.categories is None or col.n_unique > config.max_feature_categories):
        return f"{col.n_unique} categories (more than {config.max_feature_categories})"
    if col.kind == "categorical" and any(_NUMBER.match(c) for c in col.categories or ()):
        # A csv holding only the numeric-looking levels reads back as numbers in one
        # file and as strings in another, so the same value would compare unequal.
        return "numeric-looking category labels"
    return None


def class_target_problem(col: ColumnProfile, table: pd.DataFrame, config: DesignConfig) -> str | None:
    if col.kind == "categorical":
        if col.n_unique > config.max_classes:
            return f"{col.n_unique} classes"
    elif col.kind == "numerical":
        if not col.is_integer or col.n_unique > config.max_integer_classes:
            return "not class-like"
    else:
        return col.kind
    counts = table[col.name].dropna().value_counts()
    if len(counts) < 2:
        return "single class"
    if counts.min() < config.min_class_count:
        return f"class {counts.idxmin()!r} has {counts.min()} rows (< {config.min_class_count})"
    return None


def regression_target_problem(col: ColumnProfile, config: DesignConfig) -> str | None:
    if col.kind != "numerical":
        return col.kind
    if col.n_unique < config.min_regression_unique or (col.is_integer and col.n_unique <= config.max_integer_classes):
        return f"{col.n_unique} distinct values"
    return None


def target_candidates(profile: DatasetProfile, table: pd.DataFrame, config: DesignConfig) -> dict[ProblemType, list[str]]:
    """Columns that could be a classification or regression target, in column order."""
    out: dict[ProblemType, list[str]] = {"classification": [], "regression": []}
    for col in profile.columns:
        if col.kind not in ("numerical", "categorical"):
            continue
        if profile.missing_frac(col.name) > config.max_target_missing or col.top_share > config.max_top_share:
            continue
        if class_target_problem(col, table, config) is None:
            out["classification"].append(col.name)
        elif regression_target_problem(col, config) is None:
            out["regression"].append(col.name)
    return out


def _no_target_reason(profile: DatasetProfile, config: DesignConfig) -> str:
    usable = [c for c in profile.columns if c.kind in ("numerical", "categorical")]
    if not usable:
        return "no numerical or categorical column to predict"
    if all(c.top_share > config.max_top_share or c.n_unique < 2 for c in usable):
        return "degenerate target: every candidate column is (nearly) constant"
    return "no column qualifies as a target (too many classes, rare classes or too few distinct values)"


def _screen_features(target: str, features: list[str], table: pd.DataFrame, profile: DatasetProfile,
                     problem_type: ProblemType, config: DesignConfig,
                     rng: np.random.Generator) -> tuple[list[str], dict[str, str]]:
    """Up to max_related_features non-leaky features (in column order, visited in a seeded
    order) and the leaks found."""
    visit = [features[i] for i in rng.permutation(len(features))]
    clean, leaks = screen_leaks(target, visit, table, profile, problem_type, config,
                                max_clean=config.max_related_features)
    order = {f: i for i, f in enumerate(features)}
    return sorted(clean, key=order.__getitem__), leaks


def _expected_range(col: ColumnProfile) -> list:
    if col.kind == "numerical":
        return [col.min, col.max]
    return list(col.categories or ())


def design(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
           rng: np.random.Generator, config: DesignConfig) -> TaskSpec:
    n_complete = profile.n_rows
    if n_complete < config.min_rows:
        raise DatasetRejected(f"too few rows ({n_complete} < {config.min_rows})")

    exclusions = {c.name: r for c in profile.columns if (r := feature_exclusion(c, profile, config))}
    usable = [c.name for c in profile.columns if c.name not in exclusions]
    if not usable:
        raise DatasetRejected("no usable features: every column is id-like, free text, constant or mostly missing")

    candidates = target_candidates(profile, table, config)
    candidates = {k: [c for c in v if c in usable] for k, v in candidates.items()}
    all_candidates = [c for c in profile.names if c in candidates["classification"] + candidates["regression"]]
    if not all_candidates:
        raise DatasetRejected(_no_target_reason(profile, config))

    # Try the problem types in a seeded order (so the corpus mixes both), and
    # within a type the candidates in a seeded order; a hinted target goes first.
    types = [t for t in ("classification", "regression") if candidates[t]]
    types = [types[i] for i in rng.permutation(len(types))]
    hinted = [t for t in types if record.target_hint in candidates[t]]
    types = hinted + [t for t in types if t not in hinted]
    last_problem = ""
    for problem_type in types:
        order = [candidates[problem_type][i] for i in rng.permutation(len(candidates[problem_type]))]
        if record.target_hint in order:
            order.remove(record.target_hint)
            order.insert(0, record.target_hint)
        for target in order:
            target_rows = int(table[target].notna().sum())
            if target_rows < config.min_rows:
                last_problem = f"too few rows with a known target ({target_rows} < {config.min_rows})"
                continue
            features, leaks = _screen_features(target, [c for c in usable if c != target], table, profile,
                                               problem_type, config, rng)
            if not features:
                last_problem = (f"no usable features for target {target!r} once leaks are removed" if leaks
                                else f"no usable feature besides the target {target!r}")
                continue
            return spec_from_choices(record, profile, problem_type, target, all_candidates, features,
                                     {**exclusions, **leaks}, tuple(leaks), rng, config)
    raise DatasetRejected(last_problem or "no feasible target")


def spec_from_choices(record: DatasetRecord, profile: DatasetProfile, problem_type: ProblemType, target: str,
                      all_candidates: list[str], features: list[str], excluded: dict[str, str],
                      leaks: tuple[str, ...], rng: np.random.Generator, config: DesignConfig) -> TaskSpec:
    """The rest of a TaskSpec once target and features are chosen (by this designer or the LLM's):
    feature selection, model, imputer, seed, split, file type and ranges, all from `rng`."""
    related = list(features)
    for f in profile.names:
        if f not in related and f not in excluded and f != target:
            excluded[f] = f"not sampled (more than {config.max_related_features} usable features)"
    ranged = list(related)  # every related feature has a range, so all are filterable
    k = int(rng.integers(math.ceil(len(ranged) / 2), len(ranged) + 1))
    selected = [ranged[i] for i in rng.permutation(len(ranged))[:k]]
    kinds = {c.name: ("numerical" if c.dtype.startswith(("int", "float", "uint")) else "categorical")
             for c in profile.columns}
    numerical = [f for f in selected if kinds[f] == "numerical"]
    categorical = [f for f in selected if kinds[f] == "categorical"]
    file_types = [t for t in config.file_types if t != "sqlite" or len(profile.columns) < SQLITE_MAX_COLUMNS]
    file_type = str(rng.choice(file_types))
    if record.join_path:  # a relational task's IF files are its tables, which only sqlite holds
        file_type = "sqlite"
    n_if_columns = 1 + len(ranged)
    n_tables = int(min(n_if_columns, rng.integers(2, MAX_SPLIT_TABLES + 1)))
    return TaskSpec(
        ref=record.ref,
        slug=record.slug,
        designer=DESIGNER_NAME,
        problem_type=problem_type,
        target=(target,),
        target_candidates=tuple(all_candidates),
        related_features=tuple(related),
        not_filtered_related_features=tuple(ranged),
        selected_features=tuple(numerical + categorical),
        numerical_features=tuple(numerical),
        categorical_features=tuple(categorical),
        column_type_inference=kinds,
        expected_ranges={f: _expected_range(profile.column(f)) for f in ranged},
        model_type=str(rng.choice(list(MODELS_BY_PROBLEM[problem_type]))),
        imputer_type=str(rng.choice(list(IMPUTERS))),
        random_state=int(rng.integers(0, 100)),
        train_test_ratio=float(rng.choice(list(config.train_test_ratios))),
        save_file_type=file_type,
        n_split_tables=max(1, n_tables),
        noise_fraction=config.noise_fraction,
        max_rows=config.max_rows,
        v2_dropped_columns=leaks,
        excluded_features=dict(sorted(excluded.items())),
    )
