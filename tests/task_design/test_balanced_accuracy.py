"""The leak screens' balanced accuracy is scikit-learn's, the same float, on the labels the screens score;
inputs its fast path does not read go through scikit-learn itself."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from task_design.leakage import balanced_accuracy


def _cases():
    rng = np.random.default_rng(5)
    for trial in range(200):
        k, n = int(rng.integers(2, 9)), int(rng.integers(6, 300))
        labels = np.array([f"c{i}" for i in range(k + 2)], dtype=object)
        y = labels[rng.integers(0, k, n)]
        # Some predictions name classes that never occur in y (sklearn drops those from the mean).
        pred = labels[rng.integers(0, k + (2 if trial % 3 else 0), n)]
        pred = np.where(rng.random(n) < 0.6, y, pred) if trial % 2 else pred
        yield y, pred
        yield y.astype(str), pred.astype(str)
        yield np.unique(y, return_inverse=True)[1], np.unique(pred, return_inverse=True)[1]


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
def test_the_same_float_as_scikit_learn():
    for y, pred in _cases():
        assert balanced_accuracy(y, pred) == float(balanced_accuracy_score(y, pred))


def test_labels_it_does_not_read_go_through_scikit_learn():
    # Mixed label types: scikit-learn refuses them, and so does the fast path's fallback, with the same error.
    y, pred = np.array(["a", 1, "b"], dtype=object), np.array(["a", "b", 1], dtype=object)
    with pytest.raises(Exception) as theirs:
        balanced_accuracy_score(y, pred)
    with pytest.raises(type(theirs.value)):
        balanced_accuracy(y, pred)
    # Floats are scored by scikit-learn itself.
    y = np.array([0.0, 1.0, 1.0, 2.0])
    assert balanced_accuracy(y, y[::-1]) == float(balanced_accuracy_score(y, y[::-1]))
