"""The ranked fallback reads a table as a domain expert would when nothing documents the outcome:
R puts the response first, the title names what is studied, a column computed from others or a
demographic attribute of the unit is rarely the outcome, and a count is a regression target."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design_frame
from task_design.profile import profile_table
from task_design.targets import is_natural, rank_targets
from tests.factories import build_record


def _ranked(columns: dict, **record):
    table = normalize_table(pd.DataFrame(columns))
    rec, profile = build_record(**record), profile_table(table)
    frame = design_frame(rec, profile, table, DesignConfig(min_rows=3, min_mm_val_rows=1))
    return rank_targets(rec, profile, frame.roles, list(frame.problem_types), rng_for(0, rec.ref, "design")), frame


def _frame(n: int = 40, seed: int = 0) -> dict:
    rng = np.random.default_rng(100 + seed)  # not the tests' own streams: equal draws read as copies
    return {"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)}


def test_the_first_measured_column_after_the_keys_leads_the_fallback() -> None:
    rng = np.random.default_rng(0)
    cols = {"rownames": np.arange(1, 41), "mpg": rng.normal(25, 5, 40), **_frame(), "last_but": rng.normal(size=40),
            "z": rng.normal(size=40)}
    ranked, _ = _ranked(cols, column_descriptions={"mpg": "miles per gallon"})
    assert ranked[0].column == "mpg"
    # Its place alone (first or last) is no evidence for a second task on the dataset.
    placed_only = next(r for r in ranked if r.column == "z")
    assert placed_only.placed == 1.0 and not is_natural(placed_only)


def test_the_title_names_the_studied_outcome() -> None:
    rng = np.random.default_rng(1)
    cols = {**_frame(seed=1), "choice": rng.choice(["hunts", "heinz", "del monte"], 40), "amount": rng.normal(size=40)}
    ranked, _ = _ranked(cols, title="Choice of Brand for Ketchup")
    assert ranked[0].column == "choice"


def test_a_column_computed_from_others_and_a_demographic_rank_low() -> None:
    rng = np.random.default_rng(2)
    n = 40
    cols = {"sex": rng.choice(["f", "m"], n), "voteA": rng.uniform(20, 80, n), "expendA": rng.uniform(1, 9, n),
            "expendB": rng.uniform(1, 9, n), "shareA": rng.uniform(0, 100, n)}
    docs = {"voteA": "percent vote for A", "shareA": "100*(expendA/(expendA+expendB))", "sex": "gender"}
    ranked, _ = _ranked(cols, column_descriptions=docs)
    order = [r.column for r in ranked]
    assert order.index("shareA") > order.index("voteA") and order[-1] in ("shareA", "sex")
    assert order.index("sex") > order.index("voteA")


def test_a_count_with_a_rare_tail_is_a_regression_target() -> None:
    # AER/DoctorVisits' `visits`: 0..9 with one 9, too rare a class, still the modelled count.
    visits = np.array([0] * 20 + [1] * 10 + [2] * 5 + [3, 3, 4, 5, 9] + [6, 7])
    cols = {"visits": visits, **_frame(n=len(visits))}
    _, frame = _ranked(cols)
    assert frame.problem_types["visits"] == "regression"
    # A 0/1 flag is no count: it stays a class target.
    _, frame = _ranked({"flag": np.tile([0, 1], 21), **_frame(n=42)})
    assert frame.problem_types["flag"] == "classification"
