"""The fallback reads a table as a domain expert would when nothing documents the outcome: the title
names what is studied, a column computed from others or a demographic attribute of the unit is rarely
the outcome, a count is a regression target; and a column is evidence only by its own words (its
description reading as a measured outcome, above the score floor), never by its place in the table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design_frame
from task_design.profile import profile_table
from task_design.targets import FALLBACK_FLOOR, fallback_score, has_evidence, rank_targets
from tests.factories import build_record


def _ranked(columns: dict, **record):
    table = normalize_table(pd.DataFrame(columns))
    rec, profile = build_record(**record), profile_table(table)
    frame = design_frame(rec, profile, table, DesignConfig(min_rows=3, min_mm_val_rows=1))
    return rank_targets(rec, profile, frame.roles, list(frame.problem_types), rng_for(0, rec.ref, "design")), frame


def _frame(n: int = 40, seed: int = 0) -> dict:
    rng = np.random.default_rng(100 + seed)  # not the tests' own streams: equal draws read as copies
    return {"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)}


def test_a_place_is_no_evidence_and_a_description_reading_as_an_outcome_is() -> None:
    # The old first/last-column bonus broke ties toward covariates (cpus' `estperf` over `perf`):
    # `z`, last, and `first`, first, rank by their words alone and carry no evidence of their own.
    rng = np.random.default_rng(0)
    cols = {"rownames": np.arange(1, 41), "first": rng.normal(size=40), "mpg": rng.normal(25, 5, 40), **_frame(),
            "z": rng.normal(size=40)}
    ranked, _ = _ranked(cols, column_descriptions={"mpg": "miles per gallon", "first": "engine displacement"})
    assert ranked[0].column == "mpg" and ranked[0].kind == "outcome_description" and has_evidence(ranked[0])
    for name in ("z", "first"):
        r = next(r for r in ranked if r.column == name)
        assert r.kind == "ranked_fallback" and not has_evidence(r) and r.score < FALLBACK_FLOOR


def test_a_generic_or_design_description_is_no_outcome_reading() -> None:
    # DavisThin's seven items, each "a numeric vector"; nsw's `treat`, read in the title's words.
    rng = np.random.default_rng(3)
    cols = {"DT1": rng.normal(size=40), "DT7": rng.normal(size=40), "treat": rng.choice([0, 1], 40)}
    docs = {"DT1": "a numeric vector", "DT7": "a numeric vector", "treat": "In the Job Training Program"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Job Training Program")
    assert ranked and not any(has_evidence(r) for r in ranked)


def test_the_title_names_the_studied_outcome() -> None:
    rng = np.random.default_rng(1)
    cols = {**_frame(seed=1), "choice": rng.choice(["hunts", "heinz", "del monte"], 40), "amount": rng.normal(size=40)}
    ranked, _ = _ranked(cols, title="Choice of Brand for Ketchup", column_descriptions={"amount": "ounces bought"})
    assert ranked[0].column == "choice" and ranked[0].kind == "outcome_name"
    # A described column is read by its description: a name that merely appears in the title is a topic
    # of the study, often a covariate (Stat2Data/Pulse's `Exercise`, "Typical hours of exercise").
    ranked, _ = _ranked({**_frame(seed=1), "Exercise": rng.normal(size=40), "Active": rng.normal(size=40)},
                        title="Pulse Rates and Exercise",
                        column_descriptions={"Exercise": "Typical hours of exercise (per week)",
                                             "Active": "Pulse rate (beats per minute) after exercise"})
    # (The head of `Active`'s description, "Pulse rate", is the title's words: the study's subject.)
    assert ranked[0].column == "Active" and ranked[0].kind == "study_subject"
    assert next(r for r in ranked if r.column == "Exercise").kind == "ranked_fallback"


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


def test_a_difference_of_two_columns_spelled_with_a_spaced_minus_scores_as_computed() -> None:
    # statsmodels' macrodata: `realint` is "Real interest rate (tbilrate - infl)". A hyphen ("3-month")
    # is no minus, and a spaced dash that names no other column computes nothing.
    others = ["realint", "tbilrate", "infl", "unemp"]

    def score(doc: str) -> float:
        return fallback_score("realint", build_record(column_descriptions={"realint": doc}), others)

    plain = score("Real interest rate")
    assert score("Real interest rate (tbilrate - infl)") == plain - 1.5
    assert score("Real interest rate - quarterly, 3-month bills") == plain


def test_a_count_with_a_rare_tail_is_a_regression_target() -> None:
    # AER/DoctorVisits' `visits`: 0..9 with one 9, too rare a class, still the modelled count.
    visits = np.array([0] * 20 + [1] * 10 + [2] * 5 + [3, 3, 4, 5, 9] + [6, 7])
    cols = {"visits": visits, **_frame(n=len(visits))}
    _, frame = _ranked(cols)
    assert frame.problem_types["visits"] == "regression"
    # A 0/1 flag is no count: it stays a class target.
    _, frame = _ranked({"flag": np.tile([0, 1], 21), **_frame(n=42)})
    assert frame.problem_types["flag"] == "classification"


def test_the_title_reads_a_column_only_when_it_names_that_one_alone() -> None:
    # Cowles' "Data on Volunteering" and `volunteer`: the title names one column, which is the outcome.
    rng = np.random.default_rng(4)
    cols = {**_frame(seed=2), "volunteer": rng.choice(["no", "yes"], 40), "extraversion": rng.normal(size=40)}
    docs = {"volunteer": "volunteering, a factor", "extraversion": "extraversion scale"}
    ranked, _ = _ranked(cols, title="Data on Volunteering", column_descriptions=docs)
    volunteer = next(r for r in ranked if r.column == "volunteer")
    assert volunteer.kind == "outcome_description" and "title names it and no other" in volunteer.evidence
    # A word that several names share (Ketchup's `Ketchup.` prefix) names none of them.
    ranked, _ = _ranked({"Ketchup.price": rng.normal(size=40), "Ketchup.disp": rng.normal(size=40), **_frame()},
                        title="Ketchup Purchases")
    assert not any(has_evidence(r) for r in ranked)


def test_a_quantity_every_study_records_reads_as_the_outcome_only_under_a_title_naming_it() -> None:
    # carData/BEPS: `Europe`, "High scores represent 'Eurosceptic' sentiment", is an attitude recorded
    # beside the vote the election study is about; AER/CASchools' "California Test Score Data" is about
    # its scores.
    rng = np.random.default_rng(4)
    n = 40
    cols = {"Europe": rng.integers(1, 12, n).astype(float) + rng.normal(size=n), "Hague": rng.normal(size=n)}
    docs = {"Europe": "an 11-point scale that measures respondents' attitudes toward European integration. "
                      "High scores represent 'Eurosceptic' sentiment.", "Hague": "Assessment of the leader, 1 to 5."}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="British Election Panel Study")
    assert not any(has_evidence(r) for r in ranked)
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Euro Attitude Scores")
    assert ranked[0].column == "Europe" and ranked[0].kind == "outcome_description"
    # ISLR/Auto: `weight` reads by its name only where the title is about weight; `mpg` is read anyway.
    cols = {"weight": rng.normal(3000, 500, n), "mpg": rng.normal(25, 5, n)}
    docs = {"weight": "Vehicle weight (lbs.)", "mpg": "miles per gallon"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Auto Data Set")
    assert [r.column for r in ranked if has_evidence(r)] == ["mpg"]


def test_another_units_quantity_and_a_bracket_of_a_quantity_are_no_outcomes() -> None:
    # Ecdat/Mroz: "family income" beside a woman's hours of work; AER/CollegeDistance: the state's wage
    # beside a student's schooling; mediation/jobs: `income`, five brackets of a household's income.
    rng = np.random.default_rng(5)
    n = 60
    cols = {"income": rng.normal(20, 5, n), "wage": rng.normal(9, 1, n), "hours": rng.normal(size=n)}
    docs = {"income": "family income, in 1975 dollars", "wage": "State hourly wage in manufacturing in 1980",
            "hours": "hours worked"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Labor Supply Data")
    assert not any(has_evidence(r) for r in ranked)
    # A person's own income is a study's outcome often enough (openintro/census' total_personal_income).
    ranked, _ = _ranked(cols, column_descriptions={**docs, "income": "total personal income"}, title="Census data")
    assert [r.column for r in ranked if has_evidence(r)] == ["income"]
    brackets = {"income": rng.choice(["low", "mid", "high"], n), "x": rng.normal(size=n)}
    ranked, _ = _ranked(brackets, column_descriptions={"income": "Factor with five categories for level of income."},
                        title="JOBS II data")
    assert not any(has_evidence(r) for r in ranked)


def test_a_title_names_its_outcome_in_an_inflected_word() -> None:
    # reshape2/tips, "Tipping data", `tip` with no description; pscl/vote92, "Reports of voting in the 1992
    # election", `vote`; never a word of another root (openintro/evals' `cls_profs`, "Professor evaluations").
    rng = np.random.default_rng(6)
    n = 40
    cols = {"tip": rng.gamma(2, 1.5, n), "total_bill": rng.gamma(5, 4, n), "size": rng.integers(1, 6, n)}
    ranked, _ = _ranked(cols, title="Tipping data")
    assert ranked[0].column == "tip" and ranked[0].kind == "outcome_name"
    votes = {"vote": rng.choice(["Perot", "Clinton", "Bush"], n), "dem": rng.choice([0, 1], n).astype(float)}
    ranked, _ = _ranked(votes, title="Reports of voting in the 1992 U.S. Presidential election.",
                        column_descriptions={"vote": "a factor with levels Perot Clinton Bush",
                                             "dem": "1 if the respondent identifies with the Democrats"})
    assert ranked[0].column == "vote" and has_evidence(ranked[0])
    styles = {"House_Style": rng.choice(["1Story", "2Story"], n), "Lot_Area": rng.normal(size=n)}
    ranked, _ = _ranked(styles, title="The Ames Housing Data")
    assert not any(has_evidence(r) for r in ranked)
    profs = {"cls_profs": rng.choice(["single", "multiple"], n), "bty": rng.normal(size=n)}
    ranked, _ = _ranked(profs, title="Professor evaluations and beauty",
                        column_descriptions={"cls_profs": "Number of professors teaching sections in course",
                                             "bty": "average beauty rating"})
    assert not any(has_evidence(r) for r in ranked if r.column == "cls_profs")


def test_a_class_the_units_were_classed_into_is_an_outcome_and_a_grade_span_is_not() -> None:
    # MASS/fgl: "The fragments were originally classed into seven types"; AER/CASchools' `grades`,
    # "factor indicating grade span of district", is an attribute of the district.
    rng = np.random.default_rng(7)
    n = 60
    cols = {"type": rng.choice(["WinF", "WinNF", "Head"], n), "RI": rng.normal(size=n)}
    ranked, _ = _ranked(cols, title="Measurements of Forensic Glass Fragments", column_descriptions={
        "type": "The fragments were originally classed into seven types.", "RI": "refractive index"})
    assert ranked[0].column == "type" and ranked[0].kind == "outcome_description"
    cols = {"grades": rng.choice(["KK-06", "KK-08"], n), "students": rng.normal(size=n)}
    ranked, _ = _ranked(cols, title="California Schools", column_descriptions={
        "grades": "factor indicating grade span of district.", "students": "Total enrollment."})
    assert not any(has_evidence(r) for r in ranked)
