"""A curator's pin replaces the designer's choice of target, never its checks: a pinned target that fails
one is a rejection naming that check, and nothing else stands in for it."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.core.curation import Pin
from pipeline.core.records import DatasetRejected
from pipeline.core.seeding import rng_for
from task_design.config import DesignConfig
from task_design.pinned import design_pinned, without_columns
from task_design.profile import profile_table
from tests.factories import REF, build_record, build_table


def _pinned(table, config: DesignConfig | None = None, **pin):
    return design_pinned(build_record(), profile_table(table), table, rng_for(0, REF, "design"),
                         config or DesignConfig(), Pin(ref=REF, **pin))


def test_an_undocumented_column_becomes_the_target_when_pinned():
    # no description names any outcome: the heuristic would find no target with evidence
    table = build_table(price=lambda n: 10 * np.arange(n) % 97 + build_table(n)["x"].to_numpy())
    spec = _pinned(table, target="label")
    assert spec.target == ("label",) and spec.problem_type == "classification"
    assert spec.target_evidence_kind == "curator"
    assert "label" not in spec.related_features


def test_a_pinned_problem_type_the_column_supports_is_used():
    table = build_table(score=lambda n: np.random.default_rng(1).normal(size=n) + build_table(n)["x"].to_numpy())
    assert _pinned(table, target="score", problem_type="regression").problem_type == "regression"
    with pytest.raises(DatasetRejected, match="pinned target 'score' cannot be a classification target"):
        _pinned(table, target="score", problem_type="classification")


def test_a_pinned_target_that_is_noise_fails_learnability_with_that_reason():
    table = build_table(noise=lambda n: np.random.default_rng(7).normal(size=n))
    with pytest.raises(DatasetRejected) as err:
        _pinned(table, target="noise")
    assert str(err.value).startswith("pinned target 'noise' (curator) not learnable: nothing to learn")


def test_a_pinned_identifier_is_refused_with_its_role():
    table = build_table(customer_id=lambda n: np.arange(n))
    with pytest.raises(DatasetRejected, match="pinned target 'customer_id' cannot be a target"):
        _pinned(table, target="customer_id")


def test_a_pin_on_a_table_below_the_size_floor_is_refused_by_the_floor():
    with pytest.raises(DatasetRejected, match="below the size floor|too few rows"):
        _pinned(build_table(n=60), target="label")


def test_dropped_columns_leave_the_dataset():
    table = build_table()
    profile, smaller = without_columns(profile_table(table), table, ("colour",))
    assert "colour" not in smaller.columns and "colour" not in profile.names
    assert "colour" in table.columns  # the input is not mutated


def test_a_pinned_problem_type_alone_picks_that_types_best_documented_target():
    table = build_table(price=lambda n: 5 * build_table(n)["x"].to_numpy() + np.random.default_rng(2).normal(size=n))
    record = build_record(column_descriptions={"label": "The outcome: whether the customer bought.",
                                               "price": "Sale price of the item."})
    spec = design_pinned(record, profile_table(table), table, rng_for(0, REF, "design"), DesignConfig(),
                         Pin(ref=REF, problem_type="regression"))
    assert (spec.problem_type, spec.target) == ("regression", ("price",))
