"""Detect features that give the target away.

A feature is a leak when it alone predicts the target almost perfectly: a copy
of the target, a recoding of it (e.g. R's `lwage` beside `wage`), or an id that
happens to be sorted by it. Such a feature would make both variants trivial, so
it is excluded from the IF features and dropped from the MM files. So is a feature
that decides the class on nearly every row (a rare class it misses keeps its balanced
accuracy low), and one that the target determines (screen_encodings: a threshold, a
one-class dummy or a sentinel value of the target).
"""

from __future__ import annotations

from dataclasses import dataclass

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


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """sklearn's balanced_accuracy_score, the same float: the mean recall over the classes of `y_true` in
    sorted order (a class only predicted has no recall, and sklearn drops it too), from the same integer
    counts. sklearn's input validation and confusion matrix cost 10-15 ms a call, and the leak and
    encoding screens score thousands of single-feature fits; anything unusual (no rows, mixed label
    types) takes sklearn's path, so it fails (or not) exactly as before."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if len(y_true) == 0 or len(y_true) != len(y_pred) or y_true.ndim != 1 or y_pred.ndim != 1 or not (
            _plain_labels(y_true) and _plain_labels(y_pred) and _same_kind(y_true, y_pred)):
        return float(balanced_accuracy_score(y_true, y_pred))
    classes, index = np.unique(y_true, return_inverse=True)
    support = np.bincount(index, minlength=len(classes))
    hits = np.bincount(index[y_true == y_pred], minlength=len(classes))
    return float(np.mean(hits / support))


def _plain_labels(y: np.ndarray) -> bool:
    """Labels the fast path reads as sklearn does: all str (object or unicode arrays) or all integers."""
    if y.dtype.kind in "iuU":
        return True
    return y.dtype.kind == "O" and all(type(v) is str for v in y)


def _same_kind(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.dtype.kind in "iu") == (b.dtype.kind in "iu")


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


def _fold_predictions(x: np.ndarray, y: pd.Series, problem_type: ProblemType
                      ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]] | None:
    """(y as an array, [(test rows, predictions)]) of a single-feature tree by 3-fold CV, or None when
    `y` is too short or too narrow to score (fewer than 6 rows, a class of one row, no variance)."""
    if len(y) < 6:
        return None
    if problem_type == "classification":
        y = y.astype("str").to_numpy()
        _, counts = np.unique(y, return_counts=True)
        folds = int(min(3, counts.min()))
        if folds < 2:
            return None
        cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=_CV_SEED)
        model = DecisionTreeClassifier(max_depth=8, random_state=_CV_SEED)
    else:
        y = y.astype("float64").to_numpy()
        if np.std(y) == 0:
            return None
        cv = KFold(n_splits=3, shuffle=True, random_state=_CV_SEED)
        model = DecisionTreeRegressor(max_depth=8, random_state=_CV_SEED)
    # The folds by hand, not cross_val_score: its joblib dispatch warns on every call when the design
    # step runs in a worker thread, and one feature's three small fits gain nothing from it.
    return y, [(test, tree_fit_predict(model, x[train], y[train], x[test])) for train, test in cv.split(x, y)]


@dataclass(frozen=True)
class SingleFeatureFit:
    """A single-feature tree's out-of-fold record: its score, and for a class target its errors."""

    score: float  # balanced accuracy or R², in [0, 1]
    error_share: float | None = None  # classification: the share of rows it gets wrong
    majority_error_share: float | None = None  # ... and the majority class's share of wrong rows

    def decides_the_class(self) -> bool:
        """It classifies nearly every row (a deterministic class map), whatever a rare class scores."""
        return (self.error_share is not None and self.majority_error_share is not None
                and self.error_share <= CLASS_MAP_ERROR
                and self.error_share <= CLASS_MAP_ERROR_SHARE * self.majority_error_share)


def single_feature_fit(feature: pd.Series, target: pd.Series, problem_type: ProblemType) -> SingleFeatureFit:
    """A single-feature tree by 3-fold CV on the rows where the target is known."""
    mask = target.notna().to_numpy()
    found = _fold_predictions(_encode(feature)[mask], target[mask], problem_type)
    if found is None:
        return SingleFeatureFit(0.0)
    y, folds = found
    metric = balanced_accuracy if problem_type == "classification" else r2_score
    score = float(np.clip(np.mean([metric(y[test], pred) for test, pred in folds]), 0.0, 1.0))
    if problem_type != "classification":
        return SingleFeatureFit(score)
    _, counts = np.unique(y, return_counts=True)
    errors = sum(int((y[test] != pred).sum()) for test, pred in folds) / len(y)
    return SingleFeatureFit(score, errors, 1.0 - counts.max() / len(y))


def leak_score(feature: pd.Series, target: pd.Series, problem_type: ProblemType) -> float:
    """Cross-validated score of a single-feature tree (balanced accuracy or R²), in [0, 1]."""
    return single_feature_fit(feature, target, problem_type).score


# A feature the target determines is a function of the target, not a predictor of it: wooldridge/alcohol's
# `employ` and `inwf` are 1[status = 3] and 1[status > 1], vote2's `win90` is 1[vote90 > 50],
# medicaldata/covid_testing's `ct_result` is 45 (no threshold reached) unless the result is positive.
# The target alone tells such a feature's value (its level, or whether it holds its dominant value) with
# this balanced accuracy out of fold; a merely related feature stays far below it, and one value of a
# feature shared by rows of several classes breaks it.
ENCODING_SCORE = 0.99
MAX_CODE_LEVELS = 20  # a feature with more distinct values is coded by its dominant value, if it has one
MIN_DOMINANT_SHARE = 0.5
MIN_LEVEL_ROWS = 5  # a rarer value is left out of the code: a level of two rows is no evidence either way
# A feature that decides the class on nearly every row: a single-feature tree's out-of-fold errors are at
# most this share of rows and of the majority class's errors. Balanced accuracy (screen_leaks) misses it
# when a rare class is the one it gets wrong.
CLASS_MAP_ERROR = 0.01
CLASS_MAP_ERROR_SHARE = 0.1


def _code(feature: pd.Series) -> pd.Series | None:
    """The feature as class labels (its values, or whether it holds its dominant value), missing where
    the feature is or the value is rarer than MIN_LEVEL_ROWS; None when it has no such code."""
    known = feature.dropna()
    counts = known.value_counts()
    if len(counts) < 2:
        return None
    if len(counts) <= MAX_CODE_LEVELS:
        code = feature.astype("object").where(feature.notna()).map(lambda v: None if v is None else str(v))
        rare = {str(v) for v, n in counts.items() if n < MIN_LEVEL_ROWS}
        code = code.where(~code.isin(rare))
    elif pd.api.types.is_numeric_dtype(feature) and counts.iloc[0] >= MIN_DOMINANT_SHARE * len(known):
        dominant = counts.index[0]
        code = feature.map(lambda v: None if pd.isna(v) else "dominant" if v == dominant else "other")
    else:
        return None
    return code if code.dropna().nunique() >= 2 else None


def encoding_problem(feature: pd.Series, target: pd.Series, problem_type: ProblemType) -> str | None:
    """Why `feature` is a function of the target (the target alone tells its code), or None."""
    code = _code(feature)
    if code is None:
        return None
    rows = (code.notna() & target.notna()).to_numpy()
    code, target = code[rows], target[rows]
    if problem_type == "classification":
        # Each class's most common code is the best guess the class allows; few classes, so no folds.
        guess = pd.crosstab(target.astype(str), code).idxmax(axis=1)
        score = balanced_accuracy(code.to_numpy(), guess.loc[target.astype(str)].to_numpy())
    else:
        score = leak_score(target, code, "classification")
    if score < ENCODING_SCORE:
        return None
    return (f"encodes the target: the target alone tells its value (balanced accuracy {score:.3f}), so it is "
            f"a function of the target, not a predictor")


def screen_encodings(target: str, columns: list[str], table: pd.DataFrame, problem_type: ProblemType,
                     config: DesignConfig) -> dict[str, str]:
    """{column: why} for the columns of `columns` that encode the target (encoding_problem), on the
    leak screen's sample of rows."""
    sample = table if len(table) <= config.leak_sample_rows else table.sample(
        n=config.leak_sample_rows, random_state=0)
    sample = sample[sample[target].notna()]
    out = {}
    for c in columns:
        if (why := encoding_problem(sample[c], sample[target], problem_type)) is not None:
            out[c] = why
    return out


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
        fit = single_feature_fit(sample[f], y, problem_type)
        if fit.score >= config.leak_threshold - config.leak_screen_margin:
            leaks[f] = f"leaks the target (alone scores {fit.score:.3f})"
        elif fit.decides_the_class():
            leaks[f] = (f"decides the class: alone it classifies {1 - (fit.error_share or 0):.1%} of rows out "
                        f"of fold (the majority class {1 - (fit.majority_error_share or 0):.1%})")
        else:
            clean.append(f)
    return clean, leaks
