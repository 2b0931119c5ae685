"""Designing around a curator's pin (pipeline.core.curation.Pin).

A pin replaces the designer's choice of target, and of problem type, never its checks: the
dataset still goes through design_frame (row and size floors, contingency tables, time in the
table) and the pinned target through try_targets (size floor, leak and identity screens,
learnability), as a documented outcome would. A pin that fails one of them is a rejection with
that check's reason; nothing else stands in for it. Several pinned targets make one
classification task over them when task_design.multi_target's rule allows it, else a rejection.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from pipeline.core.curation import Pin
from pipeline.core.records import DatasetProfile, DatasetRecord, DatasetRejected, TaskSpec
from task_design.config import DesignConfig
from task_design.heuristic import (class_target_problem, design_frame, ranked_targets, regression_target_problem,
                                   try_targets)
from task_design.multi_target import with_documented_outcomes
from task_design.targets import PINNED_EVIDENCE, RankedTarget


def without_columns(profile: DatasetProfile, table: pd.DataFrame,
                    drop: tuple[str, ...]) -> tuple[DatasetProfile, pd.DataFrame]:
    """The dataset with the pin's dropped columns gone, as if the source had never had them."""
    kept = tuple(c for c in profile.columns if c.name not in drop)
    return profile.model_copy(update={"columns": kept}), table.drop(columns=[c for c in drop if c in table.columns])


def design_pinned(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
                  config: DesignConfig, pin: Pin) -> TaskSpec:
    """The task of the pinned target(s), or of the pinned problem type's best target with evidence (a pin
    that names only a problem type), or DatasetRejected naming the failed check."""
    frame = design_frame(record, profile, table, config)
    if pin.problem_type == "time_series_analysis":
        raise DatasetRejected("pinned a forecast: the dataset has no time axis to forecast along", "pinned_no_time_axis")
    if not pin.target:
        kind = pin.problem_type
        ranked = ranked_targets(record, profile, frame, [c for c, k in frame.problem_types.items() if k == kind], rng)
        return try_targets(record, profile, table, rng, config, frame, ranked, only=kind)
    target = pin.target[0]
    kind = frame.problem_types.get(target)
    if pin.problem_type is not None and kind != pin.problem_type and target not in frame.exclusions:
        col = profile.column(target)
        why = (class_target_problem(col, table, config) if pin.problem_type == "classification"
               else regression_target_problem(col, config))
        if why is not None:
            raise DatasetRejected(f"pinned target {target!r} cannot be a {pin.problem_type} target: {why}",
                                  "pinned_wrong_type")
        kind = pin.problem_type
    if kind is None:
        why = frame.excluded_targets.get(target) or frame.exclusions.get(target) or "not a target candidate"
        raise DatasetRejected(f"pinned target {target!r} cannot be a target: {why}", "pinned_not_target")
    frame = replace(frame, problem_types={**frame.problem_types, target: kind})
    spec = try_targets(record, profile, table, rng, config, frame,
                       [RankedTarget(target, PINNED_EVIDENCE, 0, "curator")])
    if len(pin.target) > 1:
        spec = with_documented_outcomes(spec, record.model_copy(update={"outcome_columns": pin.target}))
        if spec.target != pin.target:
            raise DatasetRejected(f"pinned targets {list(pin.target)} cannot be one task: each must be a categorical "
                                  "classification target, the model one that predicts several labels, and a "
                                  "feature must remain", "pinned_not_one_task")
    return spec
