"""The four DARE-bench metrics have one edge-case policy (pipeline/core/metrics.py): labels compare as numbers
when the reference is numeric, a prediction that is not a finite number is unscorable, a broken reference or
an undefined R² is a ValueError, a constant reference scores 1 only when matched exactly; every registry entry
is complete and its scorer gives its function's float bit for bit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from pipeline.core.metrics import (
    DEFAULT_METRICS,
    METRICS,
    SOLVED_THRESHOLD,
    Metric,
    UnscorablePrediction,
    against_baseline,
    allclose_match,
    canonical_labels,
    clipped_r2,
    clipped_r2_scorer,
    exact_match,
    macro_f1,
    macro_f1_scorer,
    margin_label,
    metric_for,
    metric_named,
    one_at_a_time,
    self_contained_source,
)
from pipeline.core.names import TASK_SUFFIX, VARIANTS


def _text(*values) -> pd.Series:
    return pd.Series([str(v) for v in values], name="y")


def test_numeric_labels_match_however_they_are_spelled() -> None:
    assert exact_match(_text(1, 2, 0), _text("1.0", " 2 ", "-0.0")) == 1.0
    assert macro_f1(_text(1, 2, 0), _text("1.0", "2", "0")) == 1.0
    ref, pred = canonical_labels(_text(1, 2), _text("1.0", "two"))
    assert ref.tolist() == ["1.0", "2.0"] and pred.tolist() == ["1.0", "two"]  # a non-number stays a wrong label


def test_text_labels_are_compared_as_stripped_text() -> None:
    assert exact_match(_text("yes", "no"), _text(" yes", "no ")) == 1.0
    assert exact_match(_text("yes", "no"), _text("Yes", "no")) == 0.0
    # A text reference keeps `1` and `1.0` apart: the numeric reading applies only to a numeric reference.
    assert exact_match(_text("a", "1"), _text("a", "1.0")) == 0.0


def test_macro_f1_counts_every_label_and_a_never_predicted_one_scores_zero_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # zero_division is explicit, so no UndefinedMetricWarning
        one_class = macro_f1(_text("a", "a", "a"), _text("a", "a", "a"))
        majority = macro_f1(_text("a", "a", "b"), _text("a", "a", "a"))
    assert one_class == 1.0
    assert majority == pytest.approx((0.8 + 0.0) / 2)  # F1(a) = 2*2/(2*2+1), F1(b) = 0
    # A label only the prediction uses is a class too, with F1 0.
    assert macro_f1(_text("a", "a"), _text("a", "z")) == pytest.approx((2 / 3 + 0.0) / 2)


def test_clipped_r2_is_clipped_and_handles_a_constant_reference() -> None:
    ref = _text(1, 2, 3, 4)
    assert clipped_r2(ref, _text(1, 2, 3, 4)) == 1.0
    assert clipped_r2(ref, _text(4, 3, 2, 1)) == 0.0  # R² = -3, clipped
    assert 0.0 < clipped_r2(ref, _text(1.1, 2.2, 2.9, 3.8)) < 1.0
    constant = _text(5, 5, 5)
    assert clipped_r2(constant, _text(5, 5, 5)) == 1.0  # matched exactly
    assert clipped_r2(constant, _text(5, 5, 5.001)) == 0.0


def test_r2_on_fewer_than_two_rows_is_undefined() -> None:
    with pytest.raises(ValueError, match="undefined"):
        clipped_r2(_text(1), _text(1))


@pytest.mark.parametrize("metric", [clipped_r2, allclose_match])
@pytest.mark.parametrize("bad", ["", "nan", "inf", "abc"])
def test_a_prediction_that_is_not_a_finite_number_is_unscorable(metric, bad) -> None:
    with pytest.raises(UnscorablePrediction, match="missing or non-numeric"):
        metric(_text(1, 2, 3), _text(1, bad, 3))


@pytest.mark.parametrize("metric", [clipped_r2, allclose_match])
def test_a_reference_that_is_not_numbers_is_the_pipelines_bug(metric) -> None:
    with pytest.raises(ValueError, match="reference column"):
        metric(_text(1, "nan", 3), _text(1, 2, 3))


def test_allclose_uses_numpys_default_tolerances_relative_to_the_prediction() -> None:
    assert allclose_match(_text(100000.0), _text(100000.9)) == 1.0  # |diff| <= 1e-8 + 1e-5 * 100000.9
    assert allclose_match(_text(100000.0), _text(100002)) == 0.0
    assert allclose_match(_text(0.0), _text(1e-9)) == 1.0


def test_numbers_and_their_text_score_alike() -> None:
    """The MM check passes arrays of floats; `daregen score` passes the CSV's text. Both must agree."""
    rng = np.random.default_rng(0)
    y, p = rng.normal(size=50), rng.normal(size=50) * 0.3
    y_text, p_text = pd.Series([repr(float(v)) for v in y]), pd.Series([repr(float(v)) for v in p])
    assert clipped_r2(y, y + p) == clipped_r2(y_text, pd.Series([repr(float(v)) for v in y + p]))
    assert allclose_match(y, p) == allclose_match(y_text, p_text)
    labels = rng.choice(["1", "2", "3"], size=50)
    guesses = rng.choice(["1.0", "2", "3"], size=50)
    assert macro_f1(labels, guesses) == macro_f1(pd.Series(labels), pd.Series(guesses))


def test_empty_columns_are_an_exact_match() -> None:
    assert exact_match(_text(), _text()) == 1.0


def test_the_self_contained_block_defines_every_metric_without_daregen() -> None:
    source = self_contained_source()
    assert "pipeline" not in source.replace("pipeline/core/metrics.py", "")
    scope: dict = {}
    exec(compile("from __future__ import annotations\n" + source, "metrics_block", "exec"), scope)  # noqa: S102
    for name in ("exact_match", "allclose_match", "macro_f1", "clipped_r2", "UnscorablePrediction"):
        assert name in scope
    assert scope["clipped_r2"](_text(1, 2, 3), _text(1, 2, 3)) == 1.0
    assert not math.isnan(scope["macro_f1"](_text("a", "b"), _text("a", "a")))


@pytest.mark.parametrize("pool", [
    ["yes", "no", " yes", "No"],  # text: stripped, case kept
    ["1", "2", "10", "1.0", " 2", "-0.0", "0"],  # numbers spelled several ways; "10" sorts before "2" as text
    ["1", "2", "x", "3.5", "nan", "inf", ""],  # a numeric reference, predictions that are not numbers
    ["a", "1", "1.0", "b"],  # a text reference keeps 1 and 1.0 apart
])
def test_macro_f1_scorer_gives_macro_f1_bit_for_bit(pool) -> None:
    """The MM check's probes score through macro_f1_scorer: any difference would change a recorded baseline."""
    rng = np.random.default_rng(0)
    seen = set()
    for n in (1, 2, 7, 60, 500):
        for ref_pool in (pool[:2], pool[:3], pool):
            reference = pd.Series(rng.choice(ref_pool, n), name="y")
            score = macro_f1_scorer(reference)
            for _ in range(4):
                prediction = rng.choice(pool, n).astype(object)
                expected = macro_f1(reference, prediction)
                assert score(prediction) == expected  # ==, not approx
                seen.add(expected)
    assert len(seen) > 10  # the cases score differently, not all 0 or 1
    with pytest.raises(ValueError):
        macro_f1_scorer(_text("a", "b"))(np.array(["a"], dtype=object))


def test_clipped_r2_scorer_gives_clipped_r2() -> None:
    """The MM check's regression probes score through clipped_r2_scorer: the same float, the same errors."""
    rng = np.random.default_rng(0)
    reference = rng.normal(size=300)
    score = clipped_r2_scorer(reference)
    for k in range(50):
        prediction = reference * rng.random() + rng.normal(size=300) * rng.random() * 3
        assert score(prediction) == clipped_r2(reference, prediction)
        assert score(list(prediction)) == clipped_r2(reference, prediction)  # not an array: converted as before
    assert score(reference.copy()) == 1.0
    with pytest.raises(UnscorablePrediction):
        score(np.where(np.arange(300) == 7, np.nan, reference))
    constant = clipped_r2_scorer(np.full(5, 2.0))
    assert constant(np.full(5, 2.0)) == clipped_r2(np.full(5, 2.0), np.full(5, 2.0)) == 1.0
    assert constant(np.arange(5.0)) == clipped_r2(np.full(5, 2.0), np.arange(5.0)) == 0.0
    with pytest.raises(ValueError):
        clipped_r2_scorer([1.0])


# ------------------------------------------------------------------ the registry

_INPUTS = {  # (reference, predictions) a label metric and a number metric each accept
    "labels": (_text("a", "b", "a", "c", "b", "a"), [_text("a", "b", "b", "c", "b", "a"), _text("c", "c", "c", "c", "c", "c"),
                                                    _text("a", "b", "a", "c", "b", "a"), _text("a", "x", " a", "c", "b", "1")]),
    "numbers": (_text(1.5, 2, 3.25, 4, 5.5, 0), [_text(1.4, 2.2, 3, 4.1, 5.3, 0), _text(1.5, 2, 3.25, 4, 5.5, 0),
                                                 _text(9, 9, 9, 9, 9, 9), _text(5.5, 4, 3.25, 2, 1.5, 0)]),
    "integer labels": (_text(0, 1, 1, 2, 0, 1), [_text("0.0", 1, "1.0", 2, 0, 1), _text(2, 2, 1, 0, 0, 1),
                                                 _text(0, 1, 1, 2, 0, "one")]),
}


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_entry_is_complete_and_its_scorer_is_its_function_bit_for_bit(name) -> None:
    metric = METRICS[name]
    assert metric.name == name and metric.label and len(metric.policy) > 40
    assert metric.higher_is_better and metric.solved_threshold == SOLVED_THRESHOLD

    def outcome(call, *args):
        try:
            return call(*args)
        except (UnscorablePrediction, ValueError) as exc:  # the same refusal, whichever side raises it
            return type(exc)

    scored = []
    for reference, predictions in _INPUTS.values():
        score = outcome(metric.scorer, reference)
        for prediction in predictions:
            expected = outcome(metric.function, reference, prediction)
            got = score if isinstance(score, type) else outcome(score, prediction)
            assert got == expected  # ==: a recorded baseline must not move
            if isinstance(expected, float):
                assert 0.0 <= expected <= 1.0
                scored.append(expected)
    assert 1.0 in scored and min(scored) < 1.0  # the inputs reach both a perfect and an imperfect score


def test_every_problem_type_and_variant_has_a_registered_metric() -> None:
    assert set(DEFAULT_METRICS) == {(kind, v) for kind in TASK_SUFFIX for v in VARIANTS}
    assert {(k, v): metric_for(k, v).name for k, v in DEFAULT_METRICS} == {
        ("classification", "v1"): "exact_match", ("regression", "v1"): "allclose",
        ("classification", "v2"): "macro_f1", ("regression", "v2"): "r2",
        ("time_series_analysis", "v1"): "r2", ("time_series_analysis", "v2"): "r2"}
    with pytest.raises(ValueError, match="no metric"):
        metric_for("clustering", "v1")
    with pytest.raises(ValueError, match="unknown metric"):
        metric_named("accuracy")
    with pytest.raises(ValueError, match="threshold"):
        Metric("bad", "bad", exact_match, one_at_a_time(exact_match), True, 1.5, "never solved")


def test_the_self_contained_block_carries_the_registry() -> None:
    scope: dict = {"__name__": "dsagent_evaluator"}  # as the DSAgentBench validation runs it: no such module
    exec(compile("from __future__ import annotations\n" + self_contained_source(), "metrics_block", "exec"), scope)  # noqa: S102
    assert sorted(scope["METRICS"]) == sorted(METRICS) and scope["SOLVED_THRESHOLD"] == SOLVED_THRESHOLD
    reference, predictions = _INPUTS["labels"]
    assert scope["METRICS"]["macro_f1"].function(reference, predictions[0]) == macro_f1(reference, predictions[0])


def test_beating_a_baseline_is_strict_and_the_5pct_margin_is_a_separate_answer() -> None:
    r2 = METRICS["r2"]
    assert margin_label(r2) == "5%"
    assert against_baseline(r2, 0.99 * 0.8, 0.8) == (False, True)  # 1% below: within 5%, not better
    assert against_baseline(r2, 0.8, 0.8) == (False, True)  # a tie is not better either
    assert against_baseline(r2, 0.81, 0.8) == (True, True)
    assert against_baseline(r2, 0.7, 0.8) == (False, False)
    # a lower-is-better metric (an error) beats the baseline below it and keeps the same 5% margin
    error = r2._replace(name="error", higher_is_better=False)
    assert against_baseline(error, 0.9, 1.0) == (True, True)
    assert against_baseline(error, 1.04, 1.0) == (False, True)
    assert against_baseline(error, 1.1, 1.0) == (False, False)
