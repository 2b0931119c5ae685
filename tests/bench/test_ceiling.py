"""`bench_designers.py heldout --ceiling`: which labelled datasets without a task are pinned, outcome by outcome,
and how each list's ceiling is counted (the heuristic's yield, what a pin adds, what no pin can gain)."""

from __future__ import annotations

from bench.bench_designers import ceiling_left, ceiling_pins, ceiling_summary
from bench.intended_targets import Intended, TreeContents, TreeTask


def _item(ref: str, outcomes: str, kind: str = "regression") -> Intended:
    return Intended(ref, tuple(o for o in outcomes.split("|") if o), kind, 500, 'Format: "a quote"')


LISTS = {"list_a.csv": [_item("r/a/with_task", "y"), _item("r/a/survival", "time"),
                        _item("r/a/no_evidence", "deny|approve", kind="classification"),
                        _item("r/a/no_question", "", kind="none")],
         "list_b.csv": [_item("r/b/unlearnable", "visits"), _item("r/b/series", "value", kind="time_series"),
                        _item("r/b/no_load", "x")]}
HEURISTIC = TreeContents(
    (TreeTask("a_with_task_reg", "r/a/with_task", ("y",)),),
    {"r/a/survival": "design: a survival study: its outcome is the censored duration 'time' (status 'status')",
     "r/a/no_evidence": "design: no target with evidence: no source hint, documented response ...",
     "r/a/no_question": "design: no target with evidence: ...",
     "r/b/unlearnable": "design: top-ranked outcome 'visits' (outcome_description) not learnable: ...",
     "r/b/series": "postprocess: every reference baseline (XF and CF) scores R² 0",
     "r/b/no_load": "source: cannot load: the wheel ships a different table under this name"})


def test_only_labelled_datasets_a_pin_could_change_are_left_for_the_ceiling() -> None:
    # Not the one with a task, not the survival study (no pin makes a censored duration a regression), not the
    # dataset that does not load, and not the one with no defensible question.
    assert list(ceiling_left(LISTS, HEURISTIC)) == ["r/a/no_evidence", "r/b/unlearnable", "r/b/series"]


def test_each_round_pins_the_next_labelled_outcome_of_the_datasets_still_without_a_task() -> None:
    left = ceiling_left(LISTS, HEURISTIC)
    first = ceiling_pins(left, {}, 0)
    assert [(p.ref, p.target, p.problem_type) for p in first] == [
        ("r/a/no_evidence", ("deny",), "classification"), ("r/b/unlearnable", ("visits",), "regression"),
        ("r/b/series", ("value",), "time_series_analysis")]
    # The second round pins the second outcome, and only where the first gave no task.
    assert [(p.ref, p.target) for p in ceiling_pins(left, {}, 1)] == [("r/a/no_evidence", ("approve",))]
    assert ceiling_pins(left, {"r/a/no_evidence": "deny"}, 1) == []


def test_the_summary_counts_each_lists_ceiling_and_buckets_what_no_pin_gains() -> None:
    reasons = {"r/b/unlearnable": "design: pinned target 'visits' (curator) not learnable: nothing to learn: "
                                  "out-of-fold R² 0.01 ...",
               "r/b/series": "design: pinned a forecast: the dataset has no time axis to forecast along"}
    text = ceiling_summary(LISTS, HEURISTIC, {"r/a/no_evidence": "deny"}, reasons)
    assert ("list_a.csv: heuristic 1 of 3 labelled; a pin of the labelled outcome adds 1: ceiling 2; 1 ruled out "
            "before any pin (a survival study, no load); 0 skipped by a gate even when pinned") in text
    assert "gained by a pin: r/a/no_evidence (deny)" in text
    assert ("list_b.csv: heuristic 0 of 3 labelled; a pin of the labelled outcome adds 0: ceiling 0; 1 ruled out "
            "before any pin (a survival study, no load); 2 skipped by a gate even when pinned") in text
    assert "gained by a pin: none" in text
    assert "    1  pinned target not learnable" in text
    assert "    1  pinned a forecast" in text
