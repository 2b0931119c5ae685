"""Detect features that give the target away.

A feature is a leak when it alone predicts the target almost perfectly: a copy
of the target, a recoding of it (e.g. R's `lwage` beside `wage`), or an id that
happens to be sorted by it. Such a feature would make both variants trivial, so
it is excluded from the IF features and dropped from the MM files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, r2_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from pipeline.core.records import DatasetProfile, ProblemType
from task_design.config import DesignConfig

_CV_SEED = 0  # fixed: leak detection must not depend on the dataset's design seed


def _encode(feature: pd.Series) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(feature):
        # Trees only see the order of values, so dense ranks lose nothing and keep
        # huge magnitudes (±1e300) from overflowing sklearn's float32 features.
        ranks = feature.astype("float64").rank(method="dense")
        return ranks.fillna(0.0).to_numpy().reshape(-1, 1)
    codes, _ = pd.factorize(feature, sort=True)  # missing -> -1, its own leaf
    return codes.astype("float64").reshape(-1, 1)


def tree_fit_predict(model, x_fit: np.ndarray, y_fit: np.ndarray, x_pred: np.ndarray) -> np.ndarray:
    """`model.fit(x_fit, y_fit).predict(x_pred)` for a scikit-learn decision tree, its input validation
    skipped where it could change nothing: a tree casts X to float32 and, finding no NaN or infinity,
    fits exactly as with check_input=False on that cast. The validation (a few ms per call) was most of
    a single-feature probe's cost, and the leak screens run thousands on a wide table. Anything
    non-finite (X after the cast, or y) takes the checked path, so it fails (or not) exactly as before."""
    fit32 = np.ascontiguousarray(x_fit, dtype=np.float32)
    pred32 = np.ascontiguousarray(x_pred, dtype=np.float32)
    y = np.asarray(y_fit)
    y_ok = bool(np.isfinite(y).all()) if y.dtype.kind in "fc" else not pd.isna(y).any()
    if not (y_ok and np.isfinite(fit32).all() and np.isfinite(pred32).all()):
        return model.fit(x_fit, y_fit).predict(x_pred)
    return model.fit(fit32, y_fit, check_input=False).predict(pred32, check_input=False)


def leak_score(feature: pd.Series, target: pd.Series, problem_type: ProblemType) -> float:
    """Cross-validated score of a single-feature tree (balanced accuracy or R²), in [0, 1]."""
    mask = target.notna().to_numpy()
    x = _encode(feature)[mask]
    y = target[mask]
    if len(y) < 6:
        return 0.0
    if problem_type == "classification":
        y = y.astype("str").to_numpy()
        _, counts = np.unique(y, return_counts=True)
        folds = int(min(3, counts.min()))
        if folds < 2:
            return 0.0
        cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=_CV_SEED)
        model, metric = DecisionTreeClassifier(max_depth=8, random_state=_CV_SEED), balanced_accuracy_score
    else:
        y = y.astype("float64").to_numpy()
        if np.std(y) == 0:
            return 0.0
        cv = KFold(n_splits=3, shuffle=True, random_state=_CV_SEED)
        model, metric = DecisionTreeRegressor(max_depth=8, random_state=_CV_SEED), r2_score
    # The folds by hand, not cross_val_score: its joblib dispatch warns on every call when the design
    # step runs in a worker thread, and one feature's three small fits gain nothing from it.
    scores = [metric(y[test], tree_fit_predict(model, x[train], y[train], x[test])) for train, test in cv.split(x, y)]
    return float(np.clip(np.mean(scores), 0.0, 1.0))


def screen_leaks(target: str, features: list[str], table: pd.DataFrame, profile: DatasetProfile,
                 problem_type: ProblemType, config: DesignConfig, max_clean: int | None = None
                 ) -> tuple[list[str], dict[str, str]]:
    """(clean features, leak reasons) for `features`, visited in the given order.

    The rank-correlation screen is vectorised and covers every numeric feature; the
    costlier single-feature tree runs on features in order and stops once `max_clean`
    clean ones are found, which keeps very wide tables cheap. Both designers use it.
    """
    sample = table if len(table) <= config.leak_sample_rows else table.sample(
        n=config.leak_sample_rows, random_state=0)
    y = sample[target]
    leaks: dict[str, str] = {}
    if profile.column(target).kind == "numerical":
        numeric = [f for f in features if profile.column(f).kind == "numerical"]
        if numeric:
            for f, r in sample[numeric].rank().corrwith(y.rank()).abs().items():
                if r == r and r >= config.leak_rank_corr:
                    leaks[f] = f"leaks the target (|Spearman| {r:.3f})"
    clean: list[str] = []
    for f in features:
        if f in leaks:
            continue
        if max_clean is not None and len(clean) >= max_clean:
            break
        score = leak_score(sample[f], y, problem_type)
        if score >= config.leak_threshold - config.leak_screen_margin:
            leaks[f] = f"leaks the target (alone scores {score:.3f})"
        else:
            clean.append(f)
    return clean, leaks
