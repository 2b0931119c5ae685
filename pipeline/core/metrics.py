"""DARE-bench's four metrics, defined once: exact match, allclose, macro-F1 and clipped R², and their registry.

`daregen score`, the MM feasibility check, the design-time learnability estimate, the time-series
baselines, the reports and the DSAgentBench evaluator all look a metric up by name in METRICS (a
`Metric`: function, many-predictions scorer, direction, solved threshold, edge-case policy), and
take the metric of a (problem type, variant) from DEFAULT_METRICS, so a baseline recorded at build
time and a score given later agree. A new metric is one METRICS entry plus its choice there.

Each metric takes the reference and the prediction for one target column, aligned row for row.
Values may be the raw text a CSV holds (read with dtype=str, which keeps "1" vs "1.0" and
timestamps under our control instead of pandas' inference) or numbers.

Each metric's edge cases are its `policy` in METRICS (the ones `daregen score` has always applied,
because that is what users see).

The block between the two `self-contained` markers imports only the standard library, numpy, pandas
and scikit-learn: finalize/dsagent/build.py copies its text into each DSAgentBench evaluator, which
must run without daregen installed. Keep everything the metrics need inside it.
"""

from __future__ import annotations

from pipeline.core import names  # outside the block: the evaluator has no daregen to import

# ---- self-contained metrics: begin (copied verbatim into the DSAgentBench evaluator) ----
from typing import NamedTuple
from collections.abc import Callable

import numpy as np
import pandas as pd


class UnscorablePrediction(Exception):
    """The solver's file cannot be scored; the message is the one-line reason."""


def _series(values) -> pd.Series:
    return values if isinstance(values, pd.Series) else pd.Series(np.asarray(values))


def finite_numbers(values) -> pd.Series:
    """Floats where the value is (or its text spells) a finite number, NaN elsewhere."""
    values = _series(values)
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        values = values.astype(str).str.strip()
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    return numbers.where(np.isfinite(numbers))


def _float_text(value: float) -> str:
    return repr(float(value) + 0.0)  # + 0.0 turns -0.0 into 0.0


def canonical_labels(reference, prediction) -> tuple[pd.Series, pd.Series]:
    """Make labels comparable: numerically when the reference is numeric, else as stripped text.

    A reference written as `1` and a prediction written as `1.0` (pandas writes an int column
    with a missing value as floats) must count as the same class. When the reference is all
    numbers, each prediction that parses as a number becomes the text of its float; one that
    does not stays as text, so it is a wrong label rather than a reason to compare the whole
    column as strings.
    """
    ref = _series(reference).astype(str).str.strip()
    pred = _series(prediction).astype(str).str.strip()
    ref_num = finite_numbers(ref)
    if ref_num.notna().all():
        pred_num = finite_numbers(pred)
        pred_canon = pred.where(pred_num.isna(), pred_num.map(_float_text, na_action="ignore"))
        return ref_num.map(_float_text), pred_canon.astype(str)
    return ref, pred


def numeric_prediction(prediction) -> np.ndarray:
    """The prediction as floats; UnscorablePrediction names the first value that is not a finite number."""
    prediction = _series(prediction)
    numbers = finite_numbers(prediction)
    bad = numbers.isna()
    if bad.any():
        example = prediction[bad].iloc[0]
        raise UnscorablePrediction(
            f"column {prediction.name!r} has {int(bad.sum())} missing or non-numeric value(s), e.g. {example!r}"
        )
    return numbers.to_numpy()


def numeric_reference(reference) -> np.ndarray:
    reference = _series(reference)
    numbers = finite_numbers(reference)
    if numbers.isna().any():
        raise ValueError(f"reference column {reference.name!r} has missing or non-numeric values")
    return numbers.to_numpy()


def exact_match(reference, prediction) -> float:
    ref, pred = canonical_labels(reference, prediction)
    return float((ref.to_numpy() == pred.to_numpy()).all())


def allclose_match(reference, prediction) -> float:
    return float(np.allclose(numeric_reference(reference), numeric_prediction(prediction)))


def macro_f1(reference, prediction) -> float:
    from sklearn.metrics import f1_score  # imported on first use: loading scikit-learn takes a second

    ref, pred = canonical_labels(reference, prediction)
    return float(f1_score(ref.to_numpy(), pred.to_numpy(), average="macro", zero_division=0))


def clipped_r2(reference, prediction) -> float:
    from sklearn.metrics import r2_score

    ref = numeric_reference(reference)
    if len(ref) < 2:
        raise ValueError(f"R² is undefined on {len(ref)} reference row(s)")
    value = float(r2_score(ref, numeric_prediction(prediction)))
    return min(1.0, max(0.0, value))


def macro_f1_scorer(reference):
    """`macro_f1(reference, p)` for many predictions `p` of one reference, the same float bit for bit.

    The MM check scores one prediction per feature against one validation column; on a wide table
    macro_f1's canonicalisation and scikit-learn's sort of text labels were most of its cost. Here the
    reference is canonicalised once and a prediction's distinct values once each (canonical_labels
    treats each prediction value alone once it knows whether the reference is all numbers; `witness`
    tells it that). f1_score then counts integer codes numbered in the order of the sorted labels, so
    it sees the same labels in the same order with the same counts: the same per-label arithmetic and
    the same macro average.
    """
    from sklearn.metrics import f1_score

    ref = _series(reference)
    ref_canon = canonical_labels(ref, ref.iloc[:0])[0].to_numpy(dtype=object)
    numeric = finite_numbers(ref.astype(str).str.strip()).notna().to_numpy()
    witness = ref.iloc[:1] if numeric.all() else ref.iloc[np.flatnonzero(~numeric)[:1]]
    ref_labels, ref_codes = np.unique(ref_canon, return_inverse=True)
    seen: dict = {}  # a prediction value's canonical label: the probes predict from the same few classes

    def score(prediction) -> float:
        pred = _series(prediction).astype(str)
        if len(pred) != len(ref):
            raise ValueError(f"{len(pred)} predictions for {len(ref)} reference values")
        value_codes, values = pd.factorize(pred, use_na_sentinel=False)
        new = [v for v in values if not isinstance(v, str) or v not in seen]
        if new:
            seen.update(zip(new, canonical_labels(witness, pd.Series(new, dtype=object))[1].tolist()))
        value_canon = np.array([seen[v] for v in values], dtype=object)
        labels = np.unique(np.concatenate([ref_labels, value_canon]))
        true = np.searchsorted(labels, ref_labels)[ref_codes]
        predicted = np.searchsorted(labels, value_canon)[value_codes]
        return float(f1_score(true, predicted, average="macro", zero_division=0))

    return score


def clipped_r2_scorer(reference):
    """`clipped_r2(reference, p)` for many predictions `p` of one reference, the same float: the reference
    is converted and checked once, and a prediction that is already an array of finite floats (a fitted
    regressor's) goes to R² as it is, which is what numeric_prediction would return for it."""
    from sklearn.metrics import r2_score

    ref = numeric_reference(reference)
    if len(ref) < 2:
        raise ValueError(f"R² is undefined on {len(ref)} reference row(s)")

    def score(prediction) -> float:
        ready = isinstance(prediction, np.ndarray) and prediction.dtype == np.float64 and prediction.ndim == 1 \
            and bool(np.isfinite(prediction).all())
        value = float(r2_score(ref, prediction if ready else numeric_prediction(prediction)))
        return min(1.0, max(0.0, value))

    return score


# A score at or above this counts as solved, for every metric (DARE-bench's rule); the DSAgentBench
# evaluators and `daregen score` both read it from here.
SOLVED_THRESHOLD = 0.95


def one_at_a_time(function):
    """The scorer of a metric with no faster path: `function(reference, p)` for each prediction `p`."""
    def scorer(reference):
        return lambda prediction: function(reference, prediction)

    return scorer


class _MetricFields(NamedTuple):
    name: str
    label: str  # for a reader: "macro-F1"
    function: Callable
    scorer: Callable
    higher_is_better: bool
    solved_threshold: float
    policy: str  # its edge cases, in one paragraph


class Metric(_MetricFields):
    """One metric, everything its consumers need. `name` is how task files spell it (expected.json's
    check.metric, the `<kind>_<name>` keys of daregen.mm_baselines); `daregen score` reports the
    function's own name. `scorer(reference)` returns `p -> function(reference, p)`, the same float bit
    for bit, for scoring many predictions of one reference.

    A named tuple, not a dataclass: the DSAgentBench validation execs the evaluator in a namespace
    that is no module, where a dataclass with postponed annotations cannot be created."""

    __slots__ = ()

    def __new__(cls, *fields, **named):
        metric = super().__new__(cls, *fields, **named)
        if not 0.0 < metric.solved_threshold <= 1.0:
            raise ValueError(f"metric {metric.name!r}: solved threshold {metric.solved_threshold} is outside (0, 1]")
        return metric


_LABELS_POLICY = ("labels compare as numbers when every reference value is a finite number (`1` and `1.0` are "
                  "one class; a prediction that is not a number stays a wrong label), otherwise as text with "
                  "surrounding blanks stripped")
_NUMBERS_POLICY = ("a prediction value that is missing, not a number or not finite is unscorable (score 0 with "
                   "the reason); such a reference value is a ValueError: the reference is broken, not the solver")

METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("exact_match", "exact match", exact_match, one_at_a_time(exact_match), True, SOLVED_THRESHOLD,
           f"1.0 when every row matches, else 0.0; {_LABELS_POLICY}; an empty pair of columns is a match."),
    Metric("allclose", "allclose", allclose_match, one_at_a_time(allclose_match), True, SOLVED_THRESHOLD,
           f"1.0 when numpy.allclose(reference, prediction) with numpy's default tolerances, else 0.0; "
           f"{_NUMBERS_POLICY}."),
    Metric("macro_f1", "macro-F1", macro_f1, macro_f1_scorer, True, SOLVED_THRESHOLD,
           f"averaged over every label in the reference or the prediction; a label never predicted, or "
           f"predicted but absent from the reference, has F1 0 (zero_division=0); {_LABELS_POLICY}."),
    Metric("r2", "R²", clipped_r2, clipped_r2_scorer, True, SOLVED_THRESHOLD,
           f"scikit-learn's R² clipped to [0, 1]; a constant reference scores 1.0 when matched exactly and "
           f"0.0 otherwise; fewer than two reference rows are a ValueError (R² is undefined); "
           f"{_NUMBERS_POLICY}."),
)}
# ---- self-contained metrics: end ----


BLOCK_BEGIN = "# ---- self-contained metrics: begin"
BLOCK_END = "# ---- self-contained metrics: end ----"


def marked_block(path, begin: str, end: str) -> str:
    """The lines of the file at `path` between the line that starts with `begin` and the marker `end`
    (both excluded): a self-contained block a generated file copies instead of importing daregen."""
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    start = text.index("\n", text.index(begin)) + 1
    return text[start:text.index(end)]


def self_contained_source() -> str:
    """The text of the self-contained block (markers excluded), for a file that cannot import daregen."""
    return marked_block(__file__, BLOCK_BEGIN, BLOCK_END)


# The metric DARE-bench scores each (problem type, variant) with: IF (v1) reproduces the reference
# pipeline exactly, MM (v2) and both forecasting variants are free modelling.
DEFAULT_METRICS: dict[tuple[str, str], str] = {
    ("classification", "v1"): "exact_match",
    ("regression", "v1"): "allclose",
    ("classification", "v2"): "macro_f1",
    ("regression", "v2"): "r2",
    (names.TIME_SERIES_PROBLEM, "v1"): "r2",
    (names.TIME_SERIES_PROBLEM, "v2"): "r2",
}


# What a question tells the solver about how its prediction.csv is scored, per metric: the metric by
# name and whatever the scorer checks that the workflow alone does not say (an IF regression's
# numbers must survive numpy.allclose, so rounding them to 2 decimals scores 0). One text for the
# DARE questions (finalize/instructions.py, finalize/timeseries.py), hence for the desktop variants,
# which quote them.
SCORING_SENTENCES: dict[str, str] = {
    "exact_match": ("Scoring: the predictions are compared row by row with those of the workflow described above; "
                    "the score is 1 only if every predicted label equals that workflow's (exact match), else 0, so "
                    "write each label as the target column of the training data writes it."),
    "allclose": ("Scoring: the predictions are compared with those of the workflow described above by "
                 "numpy.allclose with its default tolerances (rtol 1e-05, atol 1e-08); the score is 1 if every "
                 "prediction is within them, else 0, so write the predictions at full floating-point precision, "
                 "not rounded."),
    "macro_f1": ("Scoring: the macro-averaged F1 score (scikit-learn's f1_score with average=\"macro\") of the "
                 "predicted labels against the true labels of the validation rows, so write each label as the "
                 "target column of the training data writes it."),
    "r2": ("Scoring: R², the coefficient of determination (scikit-learn's r2_score), of the predictions against "
           "the true values of the validation rows, clipped to [0, 1]."),
}


def scoring_sentence(problem_type: str, variant: str, n_targets: int = 1) -> str:
    """The sentences a `problem_type` question of `variant` ends with: how its predictions are scored, and the
    score that solves it (the metric's solved threshold: a blind solver otherwise guesses the rule)."""
    metric = metric_for(problem_type, variant)
    text = SCORING_SENTENCES[metric.name]
    if n_targets > 1:
        text += " Each target column is scored so, and the scores are averaged."
    # Both scorers give a prediction file that repeats a row 0 (pipeline.review.score, the desktop evaluator);
    # a forecast's rows are its series' identifiers and time point.
    row = ("the same identifiers and time point" if problem_type == names.TIME_SERIES_PROBLEM and variant == "v2"
           else f"the same `{names.ROW_ID}`")
    return (text + f" Two predictions for one row ({row}) score 0. A score of {metric.solved_threshold} or more "
            "solves the task.")


def metric_named(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; known: {sorted(METRICS)}") from None


def metric_for(problem_type: str, variant: str) -> Metric:
    """The metric a task of `problem_type` is scored with on `variant` (v1 or v2)."""
    try:
        name = DEFAULT_METRICS[(problem_type, variant)]
    except KeyError:
        known = sorted({k for k, _ in DEFAULT_METRICS})
        raise ValueError(f"no metric for problem type {problem_type!r} variant {variant!r}; types: {known}") from None
    return metric_named(name)


class BaselineVerdict(NamedTuple):
    """A score against a recorded baseline, in two separate answers, so no label says more than it means:
    `beats` is strictly better than the baseline; `within_margin` is the DSAgentBench evaluators' bar
    (at least the metric's solved threshold times the baseline: within 5% of it, or better), which a
    forecast 1% below the baseline meets without beating it."""

    beats: bool
    within_margin: bool


def against_baseline(metric: Metric, score: float, baseline: float) -> BaselineVerdict:
    """How `score` compares with `baseline` under `metric`'s direction and solved threshold."""
    if metric.higher_is_better:
        return BaselineVerdict(score > baseline, score >= metric.solved_threshold * baseline)
    return BaselineVerdict(score < baseline, score * metric.solved_threshold <= baseline)


def margin_label(metric: Metric) -> str:
    """The margin `against_baseline` allows, as a reader sees it: "5%" for a threshold of 0.95."""
    return f"{1 - metric.solved_threshold:.0%}"
