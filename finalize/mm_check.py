"""MM feasibility: the free-modelling variant (train_v2 / val_v2) must be learnable, and not trivially.

Two failure modes make an MM task worthless as a benchmark item, and both are
caught here from the files an agent and the grader see:

- **nothing to learn**: the fixed-seed reference models (task_design.learnable's, and the best
  single-feature probe) do not beat the trivial
  baseline (for macro-F1 the better of the majority class and guessing at the
  class frequencies; for R² the training mean) by MIN_MARGIN, so every agent
  lands in the same noise band around the baseline;
- **leakage**: one feature alone reaches LEAK_SCORE, so the task is a lookup.

Scores use DARE-bench's MM metrics (macro-F1; R² clipped to [0, 1]) through the very
functions `daregen score` uses (pipeline/core/metrics.py), and are rounded, so the
`daregen.mm_baselines` block they feed is byte-stable and agrees with a later score.
Cost is bounded for the build: rows are capped at MAX_ROWS (a seeded sample),
the reference is two fits, and each single-feature probe is one depth-limited tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from finalize.checks import Problem
from finalize.task_files import TaskFiles
from pipeline.core import names
from pipeline.core.metrics import Metric, macro_f1, metric_for
from task_design.learnable import reference_models
from task_design.leakage import tree_fit_predict

# Macro-F1 and clipped R² both live on [0, 1]. A reference that gains less than 0.05 over the
# trivial answer is inside the spread of scores that split noise alone produces on the few hundred
# validation rows most tasks have, so the task cannot rank agents. 0.05 keeps honest but hard
# tasks (a weak signal still clears it with a gradient-boosted model) and drops the hopeless ones.
MIN_MARGIN = 0.05
# One column reaching this alone is a leak (an encoded target, a unit conversion of it, a bound of it),
# not a signal: with 0.95 of the metric in one column there is nothing left for an agent to model.
LEAK_SCORE = 0.95
# Below this many scored rows a validation score alone says little either way (rockart: 11 val rows,
# several columns separate its two classes by chance), so each column is also judged by a 3-fold
# cross-validation on the training rows, and either verdict makes it a leak: no small-sample exemption.
LEAK_CV_BELOW_ROWS = 100
LEAK_CV_FOLDS = 3
MAX_ROWS = 20_000  # rows of train_v2 used for fitting; a seeded sample above it
SEED = 0  # the reference model's and the row sample's seed; fixed so the recorded scores are stable
_DIGITS = 4


@dataclass(frozen=True)
class MMAssessment:
    """Scores for all_metadata.json's daregen.mm_baselines, and the problems they imply."""
    scores: dict[str, float] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    # Per target: the scored rows' row_id (as text) and the predictions behind reference_<metric>, so
    # anyone can score them as `daregen score` would (tests/pipeline/review/test_score_matches_mm_baseline.py).
    reference_predictions: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)


def _trivial_macro_f1(y_fit: np.ndarray, y_val: np.ndarray) -> float:
    """The better of two answers that ignore the features: always the majority class, and guessing
    each class at its training frequency. Macro-F1 punishes the majority answer (every other class
    scores 0), so guessing beats it (1/k on average) and a model that learnt nothing lands there;
    the guess is scored by its expectation, F1_c = 2 p_c q_c / (p_c + q_c), so no RNG is involved."""
    train_freq = pd.Series(y_fit).value_counts(normalize=True)
    majority = train_freq.sort_index(kind="stable").idxmax()
    always = macro_f1(y_val, np.full(len(y_val), majority, dtype=object))
    val_freq = pd.Series(y_val).value_counts(normalize=True)
    classes = sorted(set(train_freq.index) | set(val_freq.index))
    f1 = [2 * p * q / (p + q) if p + q > 0 else 0.0
          for p, q in ((val_freq.get(c, 0.0), train_freq.get(c, 0.0)) for c in classes)]
    return max(always, float(np.mean(f1)))


def _probe_predict(probe, x_fit: np.ndarray, y_fit: np.ndarray, x_val: np.ndarray) -> np.ndarray:
    return tree_fit_predict(probe(), x_fit, y_fit, x_val)  # the design's leak screen's fast exact path


def _cv_score(x: np.ndarray, y: np.ndarray, metric, probe) -> float:
    """Out-of-fold score of a single-column probe on the training rows (folds in a fixed-seed order)."""
    if len(y) < 2 * LEAK_CV_FOLDS:
        return 0.0
    order = np.random.default_rng(SEED).permutation(len(y))
    pred = np.empty(len(y), dtype=object if y.dtype == object else float)
    for fold in np.array_split(order, LEAK_CV_FOLDS):
        rest = np.setdiff1d(order, fold)
        pred[fold] = _probe_predict(probe, x[rest], y[rest], x[fold])
    return metric(y, pred.astype(y.dtype))


def _ordinal_codes(column: pd.Series, categories: list[str]) -> np.ndarray:
    """Each value's position in `categories` as a float, looked up by str(value); missing values and
    values not in `categories` are NaN. A column of text (the usual case) is looked up in one
    vectorised pass, str(v) being v itself; any other (sqlite's mixed types) value by value."""
    index = pd.Index(categories, dtype=object)
    present = column.notna().to_numpy()
    out = np.full(len(column), np.nan)
    values = column.to_numpy(dtype=object)[present]
    if pd.api.types.infer_dtype(values, skipna=False) != "string":
        values = np.array([str(v) for v in values], dtype=object)
    positions = index.get_indexer(values).astype(float)
    positions[positions < 0] = np.nan
    out[present] = positions
    return out


def _encode(train: pd.DataFrame, val: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Numbers stay numbers (NaN kept: the models below handle it); anything else becomes an ordinal
    code learnt on train, with unseen and missing values as NaN. Simple on purpose: the reference only
    has to show the task is learnable, not be a strong solution."""
    cols_train, cols_val = [], []
    for c in train.columns:
        a, b = train[c], val[c]
        if pd.api.types.is_bool_dtype(a) or pd.api.types.is_numeric_dtype(a):
            cols_train.append(pd.to_numeric(a, errors="coerce").astype(float).to_numpy())
            cols_val.append(pd.to_numeric(b, errors="coerce").astype(float).to_numpy())
            continue
        categories = sorted(set(a.dropna().astype(str)))
        cols_train.append(_ordinal_codes(a, categories))
        cols_val.append(_ordinal_codes(b, categories))
    if not cols_train:
        return np.empty((len(train), 0)), np.empty((len(val), 0))
    return np.column_stack(cols_train), np.column_stack(cols_val)


def assess_frames(train: pd.DataFrame, val: pd.DataFrame, truth: pd.DataFrame, target: list[str],
                  problem_type: str, where: str, verdict_only: bool = False) -> MMAssessment:
    """Pure: the MM files as frames (val and truth aligned on row_id here) -> scores and problems.

    `verdict_only` (verify wants the problems, not the scores): the boosted reference is fitted only
    when the verdict depends on it. The reference score of a target is the better of the boosted
    fit and the best single-feature probe, and rounding and the mean over targets never decrease, so
    once the probes alone clear MIN_MARGIN the reference does too: the problems are the same, and
    the scores and predictions, which need the fit, are left out."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
    from threadpoolctl import threadpool_limits

    classification = problem_type == "classification"
    mm_metric = metric_for(problem_type, "v2")
    metric = mm_metric.function
    problems: list[Problem] = []
    missing = [t for t in target if t not in train.columns or t not in truth.columns]
    if missing or names.ROW_ID not in val.columns or names.ROW_ID not in truth.columns:
        return MMAssessment(problems=(Problem(where, f"MM files lack the target {missing} or {names.ROW_ID}"),))
    features = [c for c in train.columns if c in val.columns and c != names.ROW_ID and c not in target]
    # A fresh frame, not val.assign: wide val files come back from sqlite fragmented.
    val_ids = pd.concat([val[names.ROW_ID].astype(str).rename("_id"), val[features]], axis=1)
    merged = truth.assign(_id=truth[names.ROW_ID].astype(str))[["_id", *target]].merge(
        val_ids, on="_id", how="inner")
    baseline, best_single = [], []
    boosted = []  # per assessed target: what its boosted reference fit needs, fitted after the probes
    leaks: list[str] = []
    # Multi-threaded histogram sums may round differently on another core count: one thread.
    with threadpool_limits(limits=1):
        for t in target:
            fit = train.dropna(subset=[t])
            if len(fit) > MAX_ROWS:
                fit = fit.sample(n=MAX_ROWS, random_state=SEED).sort_index()
            scored = merged.dropna(subset=[t])
            if len(fit) < 2 or scored.empty:
                problems.append(Problem(where, f"MM data too small to assess {t!r} "
                                               f"({len(fit)} training rows, {len(scored)} scored rows)"))
                continue
            x_fit, x_val = _encode(fit[features], scored[features])
            if classification:
                y_fit, y_val = fit[t].astype(str).to_numpy(), scored[t].astype(str).to_numpy()
                base = _trivial_macro_f1(y_fit, y_val)
                probe = lambda: DecisionTreeClassifier(max_depth=8, random_state=SEED)  # noqa: E731
            else:
                y_fit = pd.to_numeric(fit[t], errors="coerce").to_numpy(float)
                y_val = pd.to_numeric(scored[t], errors="coerce").to_numpy(float)
                keep_fit, keep_val = ~np.isnan(y_fit), ~np.isnan(y_val)
                x_fit, y_fit, x_val, y_val = x_fit[keep_fit], y_fit[keep_fit], x_val[keep_val], y_val[keep_val]
                if len(y_fit) < 2 or len(y_val) == 0:
                    problems.append(Problem(where, f"MM target {t!r} is not numeric"))
                    continue
                if len(y_val) < 2:  # R² is undefined on one row (pipeline/core/metrics.py)
                    problems.append(Problem(where, f"MM data too small to assess {t!r} (1 scored row)"))
                    continue
                base = metric(y_val, np.full(len(y_val), float(np.mean(y_fit))))  # the training mean
                probe = lambda: DecisionTreeRegressor(max_depth=8, random_state=SEED)  # noqa: E731
            baseline.append(base)
            probe_score = mm_metric.scorer(y_val)  # = metric(y_val, ·), bit for bit
            # DecisionTree refuses NaN in old scikit-learn releases; a fill value outside the data keeps
            # "missing" a distinct, splittable value.
            single, single_pred = [], None
            for j, col in enumerate(features):
                col_fit, col_val = x_fit[:, j:j + 1], x_val[:, j:j + 1]
                fill = (np.nanmin(col_fit) - 1.0) if np.isfinite(col_fit).any() else 0.0
                col_fit, col_val = np.nan_to_num(col_fit, nan=fill), np.nan_to_num(col_val, nan=fill)
                pred = _probe_predict(probe, col_fit, y_fit, col_val)
                score = probe_score(pred)
                if not single or score > max(single):
                    single_pred = pred
                single.append(score)
                if score >= LEAK_SCORE:
                    leaks.append(f"{col!r} ({score:.3f})")
                elif len(y_val) < LEAK_CV_BELOW_ROWS and (cv := _cv_score(col_fit, y_fit, metric, probe)) >= LEAK_SCORE:
                    leaks.append(f"{col!r} ({cv:.3f} by {LEAK_CV_FOLDS}-fold CV on train)")
            best_single.append(max(single, default=0.0))
            ids = scored["_id"] if classification else scored["_id"][keep_val]
            boosted.append((t, reference_models(problem_type), metric, x_fit, y_fit, x_val, y_val, base, single_pred, ids))
        if not boosted:
            return MMAssessment(problems=tuple(problems))
        if verdict_only and _round(best_single) >= _round(baseline) + MIN_MARGIN:
            return MMAssessment(problems=tuple(problems + _leak_problems(where, leaks, mm_metric)))
        reference = []
        reference_predictions: dict[str, pd.DataFrame] = {}
        for (t, models, metric, x_fit, y_fit, x_val, y_val, base, single_pred, ids), single_best in zip(
                boosted, best_single):
            # HistGradientBoosting cannot bin a column with no known value in the fitted rows (an
            # all-missing column, which the MM files keep as the source has it): fit on the rest.
            usable = np.isfinite(x_fit).any(axis=0)
            ref, ref_pred = base, None
            if usable.any():
                # The best of the design's reference models (task_design.learnable), boosting first: a
                # later one counts only when it scores higher.
                for model in models:
                    pred = model.fit(x_fit[:, usable], y_fit).predict(x_val[:, usable])
                    score = metric(y_val, pred)
                    if ref_pred is None or score > ref:
                        ref, ref_pred = score, pred
            # Boosting's 20-row leaves underfit the smallest datasets, where one well-chosen split
            # does better: the reference is the better of the two, both fixed-seed fits.
            reference.append(max(ref, single_best))
            chosen = ref_pred if ref >= single_best else single_pred
            if chosen is not None:
                reference_predictions[t] = pd.DataFrame({names.ROW_ID: ids.to_numpy(), t: chosen})
    metric_name = mm_metric.name
    scores = {f"trivial_{metric_name}": _round(baseline),
              f"reference_{metric_name}": _round(reference),
              f"best_single_feature_{metric_name}": _round(best_single)}
    base, ref = scores[f"trivial_{metric_name}"], scores[f"reference_{metric_name}"]
    if ref < base + MIN_MARGIN:
        problems.append(Problem(where, f"MM infeasible: the reference models (HistGradientBoosting, "
                                       f"class-weighted or ridge, single-feature trees) score {metric_name} {ref:.3f}, not {MIN_MARGIN} "
                                       f"above the trivial baseline's {base:.3f}", code="mm_infeasible"))
    problems += _leak_problems(where, leaks, mm_metric)
    return MMAssessment(scores, tuple(problems), reference_predictions)


def _round(per_target: list[float]) -> float:
    """The recorded score: the mean over targets, rounded so all_metadata.json is byte-stable."""
    return round(float(np.mean(per_target)), _DIGITS)


def _leak_problems(where: str, leaks: list[str], metric: Metric) -> list[Problem]:
    if not leaks:
        return []
    return [Problem(where, f"MM leakage: a single feature alone reaches {metric.name} >= {LEAK_SCORE}: "
                           + ", ".join(sorted(leaks)[:5]), code="mm_leakage")]


def assess_task(task_dir: Path, question: dict, verdict_only: bool = False,
                files: TaskFiles | None = None) -> MMAssessment:
    """Read train_v2, val_v2 and verify/ground_truth.csv of `task_dir` (through `files`, shared with
    other checks, if given) and assess them (see assess_frames)."""
    where = task_dir.name
    ftype = question["save_file_type"]
    if files is None or files.task_dir != task_dir or files.file_type != ftype:
        files = TaskFiles(task_dir, ftype)
    paths = {stem: files.source_path(stem) for stem in (names.TRAIN_V2, names.VAL_V2)}
    truth_path = task_dir / names.VERIFY_DIR / names.GROUND_TRUTH
    missing = [p.name for p in (*paths.values(), truth_path) if not p.is_file()]
    if missing:
        return MMAssessment(problems=(Problem(where, f"MM check: missing {', '.join(missing)}"),))
    train = files.source(names.TRAIN_V2)
    val = files.source(names.VAL_V2)
    truth = files.verify_csv(names.GROUND_TRUTH)
    return assess_frames(train, val, truth, list(question["target"]), question["problem_type"], where, verdict_only)


def check_mm_feasibility(task_dir: Path, question: dict, severity: str = "error",
                         files: TaskFiles | None = None) -> list[Problem]:
    """assess_task's problems, at `severity` (foreign trees get warnings: their tasks are published)."""
    return [Problem(p.where, p.message, severity)
            for p in assess_task(task_dir, question, verdict_only=True, files=files).problems]
