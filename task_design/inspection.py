"""What the heuristic designer decides about each column of a dataset, as a curator reads it before writing a pin.

Nothing here decides anything the designer does not: the roles (task_design.roles.column_roles), the feature
exclusions (heuristic.feature_exclusion), the target candidates and why the others are none
(heuristic.design_frame), and the ranking of the candidates with their evidence (heuristic.ranked_targets),
gathered per column. Pure: the same record, profile, table, config and rng give the same decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.core.records import DatasetProfile, DatasetRecord, DatasetRejected
from task_design.config import DesignConfig
from task_design.heuristic import (SHORT_PANEL_EVIDENCE, DesignFrame, design_frame, feature_exclusion, ranked_targets, short_panel_targets,
                                   target_problem)
from task_design.pinned import without_columns
from task_design.roles import column_roles
from task_design.targets import RankedTarget, has_evidence
from task_design.time_tables import regular_time_index


@dataclass(frozen=True)
class ColumnDecision:
    """One column as the designer sees it: its type, its documentation, its role, and as a feature and a target
    the evidence for (`target_evidence`, the ranking's) and against (`not_feature`, `not_target`)."""

    name: str
    kind: str  # the profile's kind: numerical, categorical, id, text, constant, datetime, ...
    dtype: str
    missing: float  # share of rows
    distinct: int
    documentation: str  # the source's own entry for the column, "" when it has none
    role: str
    role_evidence: str
    not_feature: str | None  # why it cannot be an IF feature; None: it can
    target_type: str | None  # the problem type it is feasible as a target, None when none
    not_target: str | None  # why it is no target candidate; None: a candidate (ranked or not)
    rank: int | None = None  # 1-based place in the designer's ranking of the candidates
    target_evidence: str = ""  # the ranking's evidence for it as a target
    evidence_kind: str = ""  # e.g. source_hint, documented_response, outcome_description, ranked_fallback
    documented: bool = False  # the source or its documentation names it as an outcome (not a fallback reading)


@dataclass(frozen=True)
class DatasetDecisions:
    columns: tuple[ColumnDecision, ...]
    # design_frame's reason when no task can exist at all (too few rows, a contingency table, ...), else None:
    # the roles and exclusions above are still the designer's, the ranking is then empty.
    frame_problem: str | None
    # The time column a pin must drop (`curate pin --drop`): with it the rows are a series the time-series
    # designer could not set, and design_frame refuses every target; without it, it refuses none.
    pin_drops: tuple[str, ...] = ()


def column_decisions(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, config: DesignConfig,
                     rng: np.random.Generator) -> DatasetDecisions:
    """Every column's decision, in column order. `rng` is the design's (its ties are drawn from it)."""
    try:
        frame = design_frame(record, profile, table, config)
    except DatasetRejected as exc:
        frame, problem = None, str(exc)
    else:
        problem = None
    roles = frame.roles if frame is not None else column_roles(record, profile, table)
    ranked = ranked_targets(record, profile, frame, list(frame.problem_types), rng) if frame is not None else []
    place = {r.column: (i + 1, r) for i, r in enumerate(ranked)}
    panel_asks = _short_panel_asks(record, frame, ranked)
    out = []
    for col in profile.columns:
        if frame is not None:
            kind = frame.problem_types.get(col.name)
            against = frame.excluded_targets.get(col.name) or frame.sparse_targets.get(col.name)
        else:
            kind, why = target_problem(col, profile, table, config)
            against = why or None
            if col.name in roles and not roles[col.name].may_be_target:
                against = f"{roles[col.name].role.replace('_', ' ')}: {roles[col.name].evidence}"
        if kind is not None and against is None and col.name not in place:
            against = "not among the ranked candidates (a soft role the documentation does not name as an outcome)"
        rank, choice = place.get(col.name, (None, None))
        if panel_asks is not None and choice is not None:
            # The verdict's own reading of a short panel (heuristic.short_panel_targets), not the ranking's.
            if col.name in panel_asks:
                choice = panel_asks[col.name]
            elif against is None:
                why = ("its formula is an aggregate's or a plot's, not a fitted model's" if choice.kind == "model_formula"
                       else f"its evidence ({choice.kind.replace('_', ' ')}) is none of these")
                against = f"not tried: a short panel's outcome is what a {SHORT_PANEL_EVIDENCE} names, and {why}"
        if choice is not None and against is None and not has_evidence(choice):
            # try_targets never tries it: without a better-evidenced column the dataset is skipped.
            against = "no evidence of its own: no source hint, documented response or outcome reading"
        out.append(ColumnDecision(
            name=col.name, kind=col.kind, dtype=col.dtype, missing=profile.missing_frac(col.name),
            distinct=col.n_unique, documentation=" ".join(record.column_descriptions.get(col.name, "").split()),
            role=roles[col.name].role, role_evidence=roles[col.name].evidence,
            not_feature=(frame.exclusions.get(col.name) if frame is not None
                         else feature_exclusion(col, profile, config, roles)),
            target_type=kind, not_target=against, rank=rank,
            target_evidence=choice.evidence if choice else "", evidence_kind=choice.kind if choice else "",
            documented=bool(choice and choice.documented)))
    return DatasetDecisions(tuple(out), problem, _pin_drops(record, profile, table, config) if problem else ())


def _pin_drops(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
               config: DesignConfig) -> tuple[str, ...]:
    """The time column whose drop lets design_frame accept the table (task_design.pinned.without_columns, as a
    pin's --drop removes it), or () when dropping it changes nothing."""
    if (index := regular_time_index(table)) is None:
        return ()
    try:
        design_frame(record, *without_columns(profile, table, (index[0],)), config)
    except DatasetRejected:
        return ()
    return (index[0],)


def _short_panel_asks(record: DatasetRecord, frame: DesignFrame | None,
                      ranked: list[RankedTarget]) -> dict[str, RankedTarget] | None:
    """For a short panel, the candidates its design may try, by column, with the evidence it tries them on
    (the title's head noun's reading replaces the ranking's); None for any other table."""
    if frame is None or frame.short_panel is None:
        return None
    return {r.column: r for r in short_panel_targets(record, [r for r in ranked if r.column not in frame.sparse_targets])}
