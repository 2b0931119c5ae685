"""The unchecked single-feature tree path predicts exactly what scikit-learn's checked fit/predict does, and
inputs the checked path refuses are still refused."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from task_design.leakage import tree_fit_predict


def _checked(model, x_fit, y_fit, x_pred):
    return model.fit(x_fit, y_fit).predict(x_pred)


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_same_predictions_as_the_checked_path(kind):
    rng = np.random.default_rng(3)
    # Values that float32 rounds (1e-9 steps, large magnitudes): the cast must be the same one.
    x = np.concatenate([rng.normal(size=150), 1e7 + rng.integers(0, 50, 150) * 1e-3]).reshape(-1, 1)
    y = (x[:, 0] > 0.3).astype(str) if kind == "classification" else x[:, 0] * 2.5 + rng.normal(size=300)
    make = (lambda: DecisionTreeClassifier(max_depth=8, random_state=0)) if kind == "classification" else \
        (lambda: DecisionTreeRegressor(max_depth=8, random_state=0))
    fast = tree_fit_predict(make(), x[:200], y[:200], x[200:])
    slow = _checked(make(), x[:200], y[:200], x[200:])
    assert fast.dtype == slow.dtype and np.array_equal(fast, slow)


@pytest.mark.parametrize("bad", [np.inf, 1e300])  # 1e300 is finite as float64, infinite as float32
def test_values_the_checked_path_refuses_are_still_refused(bad):
    x = np.arange(20, dtype=float).reshape(-1, 1)
    x[3, 0] = bad
    y = np.arange(20, dtype=float)
    with pytest.raises(ValueError):
        _checked(DecisionTreeRegressor(max_depth=8, random_state=0), x, y, x)
    with pytest.raises(ValueError):
        tree_fit_predict(DecisionTreeRegressor(max_depth=8, random_state=0), x, y, x)


def test_an_infinite_target_is_still_refused():
    x = np.arange(20, dtype=float).reshape(-1, 1)
    y = np.arange(20, dtype=float)
    y[5] = np.inf
    with pytest.raises(ValueError):
        tree_fit_predict(DecisionTreeRegressor(max_depth=8, random_state=0), x, y, x)
