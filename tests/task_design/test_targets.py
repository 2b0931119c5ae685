"""The fallback reads a table as a domain expert would when nothing documents the outcome: the title
names what is studied, a column computed from others or a demographic attribute of the unit is rarely
the outcome, a count is a regression target; and a column is evidence only by its own words (its
description reading as a measured outcome, above the score floor), never by its place in the table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design_frame
from task_design.profile import profile_table
from task_design.targets import FALLBACK_FLOOR, fallback_score, has_evidence, rank_targets
from tests.factories import build_record, reading


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


def test_a_column_whose_own_entry_says_who_the_unit_is_is_no_outcome() -> None:
    # mlmRev/Socatt: `class`, "Self assessed social class - a factor", read X as the target of a survey
    # whose response is `numpos`; its name alone reads as a conventional outcome.
    rng = np.random.default_rng(6)
    n = 60
    cols = {"class": rng.choice(["middle", "upper working", "lower working"], n), "age": rng.integers(18, 80, n),
            "party": rng.choice(["con", "lab", "lib"], n), "numpos": rng.integers(0, 8, n)}
    docs = {"class": "Self assessed social class - a factor. Levels are middle, upper working, and lower working.",
            "age": "Age in years", "party": "Political party chosen - a factor."}
    ranked, _ = _ranked(cols, column_descriptions=docs)
    assert "class" not in [r.column for r in ranked if has_evidence(r)]
    # Without the entry, `class` is the conventional outcome name it was.
    ranked, _ = _ranked(cols, column_descriptions={k: v for k, v in docs.items() if k != "class"})
    assert [r.column for r in ranked if has_evidence(r)][:1] == ["class"]


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
    # A person's own income reads as the outcome only under a title naming it: blind readers judged it a
    # covariate of most studies that record it (crime1's `inc86` beside arrests, smoke's `income` beside
    # cigarettes smoked).
    ranked, _ = _ranked(cols, column_descriptions={**docs, "income": "total personal income"}, title="Census data")
    assert not any(has_evidence(r) for r in ranked)
    ranked, _ = _ranked(cols, column_descriptions={**docs, "income": "total personal income"},
                        title="Personal Income Survey")
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


# ---------------------------------------------------------------- documentation that names no outcome


def test_a_plots_formula_names_no_outcome_beside_a_model_of_another_column() -> None:
    # AER/TravelMode fits `mlogit(choice ~ ...)` and plots `xyplot(travel ~ ...)`: travel time is an
    # attribute of each alternative, not a second outcome.
    rng = np.random.default_rng(7)
    cols = {"choice": rng.choice(["no", "yes"], 40), "travel": rng.normal(100, 20, 40), "wait": rng.normal(size=40)}
    documented = {"choice": reading("fitted_model", "model response in mlogit(choice ~ …) in Examples"),
                  "travel": reading("plot_formula", "formula response in xyplot(travel ~ …) in Examples")}
    ranked, _ = _ranked(cols, documented_outcomes=documented,
                        column_descriptions={"travel": "Travel time in the vehicle."})
    assert [r.column for r in ranked if r.documented] == ["choice"]
    # Alone, a plot still documents the column it shows.
    ranked, _ = _ranked(cols, documented_outcomes={"travel": documented["travel"]})
    assert ranked[0].column == "travel" and ranked[0].documented


def test_a_plot_of_what_the_study_gave_names_no_outcome() -> None:
    # nlme/Remifentanil plots `sunflowerplot(Rate ~ Time)`: the infusion rate was set, the concentration
    # measured; nothing else names `conc`, so no column has evidence.
    rng = np.random.default_rng(8)
    cols = {"Time": rng.uniform(0, 100, 40), "conc": rng.gamma(2, 3, 40), "Rate": rng.choice([0.0, 20.0, 40.0], 40),
            "Age": rng.integers(20, 80, 40)}
    docs = {"Time": "time from beginning of infusion in minutes (numeric).", "Rate": "infusion rate in [µg / min].",
            "conc": "remifentanil concentration in [ng / ml] (numeric).", "Age": "age of the patient in years."}
    ranked, _ = _ranked(cols, documented_outcomes={"Rate": reading("plot_formula", "formula response in sunflowerplot(Rate ~ …) in Examples")},
                        column_descriptions=docs, title="Pharmacokinetics of Remifentanil")
    assert "Rate" not in [r.column for r in ranked] and not any(has_evidence(r) for r in ranked)


def test_response_as_a_noun_of_the_data_is_no_response() -> None:
    # wooldridge/charity: "response rate to mailings" and "weeks since last response" describe donors'
    # replies; stevedata/PPGE's index comes from "an item response model". None is the study's response.
    rng = np.random.default_rng(9)
    cols = {"propresp": rng.uniform(size=40), "weekslast": rng.integers(1, 100, 40), "gift": rng.gamma(2, 5, 40),
            "v2": rng.normal(size=40), "y": rng.normal(size=40)}
    docs = {"propresp": "response rate to mailings", "weekslast": "number of weeks since last response",
            "gift": "amount of gift, Dutch guilders",
            "v2": "an estimate generated by way of a Bayesian item response model", "y": "the response variable"}
    evidence = reading("format_entry", "documented as 'response' in Format")
    ranked, _ = _ranked(cols, column_descriptions=docs,
                        documented_outcomes={c: evidence for c in ("propresp", "weekslast", "v2", "y")})
    assert [r.column for r in ranked if r.documented] == ["y"]
    assert not any(has_evidence(r) for r in ranked if r.column != "y")


def test_a_response_word_that_many_entries_share_is_what_the_rows_are_not_a_role() -> None:
    # openintro/mn_police_use_of_force: every row is a police response, and five entries say so ("Whether
    # response was iniated by call to 911", read X blind as a target). The statistician's "outcome
    # variable" in three entries still names each of them (mediation/boundsdata's two designs).
    rng = np.random.default_rng(19)
    cols = {"is_911_call": rng.choice(["Yes", "No"], 60), "problem": rng.choice(["a", "b", "c"], 60),
            "precinct_n": rng.integers(1, 6, 60), "age": rng.integers(18, 70, 60)}
    docs = {"is_911_call": "Whether response was iniated by call to 911.",
            "problem": "Problem that required police response.", "precinct_n": "Precinct number of the response.",
            "age": "Age of subject."}
    evidence = reading("format_entry", "documented as 'response' in Format")
    ranked, _ = _ranked(cols, column_descriptions=docs,
                        documented_outcomes={c: evidence for c in ("is_911_call", "problem", "precinct_n")})
    assert not any(has_evidence(r) for r in ranked)
    # Two entries are not yet the rows' subject: a response each may be (medicaldata/strep_tb).
    two = {k: v for k, v in docs.items() if k != "problem"}
    ranked, _ = _ranked({k: v for k, v in cols.items() if k != "problem"}, column_descriptions=two,
                        documented_outcomes={c: evidence for c in ("is_911_call", "precinct_n")})
    assert {r.column for r in ranked if r.documented} == {"is_911_call", "precinct_n"}
    outcomes = {"out": rng.integers(0, 2, 60), "out.enc": rng.integers(0, 2, 60), "out.third": rng.integers(0, 2, 60),
                "age": rng.integers(18, 70, 60)}
    docs = {c: f"The binary outcome variable under design {c}." for c in ("out", "out.enc", "out.third")}
    ranked, _ = _ranked(outcomes, column_descriptions=docs,
                        documented_outcomes={c: reading("format_entry", "documented as 'outcome variable' in Format") for c in docs})
    assert {r.column for r in ranked if r.documented} == set(docs)


def test_a_statsmodels_endog_the_title_contradicts_is_no_evidence() -> None:
    # statsmodels/engel's loader takes its first column, `income`, as endog; the title, "Engel (1857) food
    # expenditure data", names `foodexp`, the Engel curve's response (`income` read X blind). A curated hint
    # (scikit-learn's target, a sidecar's target_hint) and an endog the title does not contradict stand.
    rng = np.random.default_rng(20)
    cols = {"income": rng.gamma(3, 300, 60), "foodexp": rng.gamma(3, 200, 60)}
    docs = {"income": "annual household income (Belgian francs)",
            "foodexp": "annual household food expenditure (Belgian francs)"}
    title = "Engel (1857) food expenditure data"
    ranked, _ = _ranked(cols, ref="statsmodels/engel", target_hint="income", column_descriptions=docs, title=title)
    assert not any(r.kind == "source_hint" for r in ranked)
    ranked, _ = _ranked(cols, ref="sklearn/engel", target_hint="income", column_descriptions=docs, title=title)
    assert ranked[0].column == "income" and ranked[0].kind == "source_hint"
    ranked, _ = _ranked(cols, ref="statsmodels/engel", target_hint="income", column_descriptions=docs,
                        title="Engel (1857) household budgets")
    assert ranked[0].column == "income" and ranked[0].kind == "source_hint"


def test_a_measure_of_a_manova_beside_a_class_column_yields_to_the_class() -> None:
    # heplots/peng: `lm(cbind(bill_length, bill_depth, flipper_length, body_mass) ~ species)` compares
    # four measures across species; the question is the species. A binomial `cbind(dead, alive)` is
    # no multivariate response.
    rng = np.random.default_rng(10)
    cols = {"species": rng.choice(["Adelie", "Gentoo", "Chinstrap"], 60), "bill_length": rng.normal(44, 5, 60),
            "bill_depth": rng.normal(17, 2, 60), "flipper_length": rng.normal(200, 14, 60),
            "body_mass": rng.normal(4200, 800, 60)}
    evidence = reading("fitted_model", "model response in lm(cbind(bill_length, bill_depth, flipper_length, body_mass) ~ …) in Examples", joint=('bill_length', 'bill_depth', 'flipper_length', 'body_mass'))
    ranked, _ = _ranked(cols, documented_outcomes={c: evidence for c in list(cols)[1:]},
                        column_descriptions={"species": 'a factor denoting penguin species ("Adélie", ...)'})
    assert ranked[0].column == "species" and has_evidence(ranked[0]) and not any(r.documented for r in ranked)
    # heplots/NeuroCog's six cognitive domain scores are compared across `Dx`, the diagnostic group (a
    # domain score as the target was read ? blind: the study's question is the group).
    domains = {"Dx": cols["species"], **{f"d{i}": rng.normal(50, 10, 60) for i in range(3)}}
    evidence = reading("fitted_model", "model response in lm(cbind(d0, d1, d2) ~ …) in Examples", joint=('d0', 'd1', 'd2'))
    ranked, _ = _ranked(domains, documented_outcomes={c: evidence for c in list(domains)[1:]},
                        column_descriptions={"Dx": "Diagnostic group, a factor"})
    assert ranked[0].column == "Dx" and has_evidence(ranked[0]) and not any(r.documented for r in ranked)
    # heplots/Diabetes: `group`, "diagnostic group", beside a MANOVA of four blood measures (`glufast` as the
    # target read ? blind); a `group` that is a treatment arm stays a design factor.
    chem = {"group": cols["species"], **{f"m{i}": rng.normal(100, 20, 60) for i in range(3)}}
    evidence = reading("fitted_model", "model response in lm(cbind(m0, m1, m2) ~ …) in Examples", joint=('m0', 'm1', 'm2'))
    ranked, _ = _ranked(chem, documented_outcomes={c: evidence for c in list(chem)[1:]},
                        column_descriptions={"group": "diagnostic group, a factor with levels Normal Chemical Overt"})
    assert ranked[0].column == "group" and has_evidence(ranked[0]) and not any(r.documented for r in ranked)
    ranked, _ = _ranked(chem, documented_outcomes={c: evidence for c in list(chem)[1:]},
                        column_descriptions={"group": "treatment group, a factor with levels A B C"})
    assert ranked[0].documented and ranked[0].column != "group"
    binomial = {"dead": rng.integers(0, 10, 60), "alive": rng.integers(0, 10, 60), "species": cols["species"]}
    ranked, _ = _ranked(binomial, documented_outcomes={"dead": reading(
        "fitted_model", "model response in glm(cbind(dead, alive) ~ …) in Examples", joint=("dead", "alive"))})
    assert ranked[0].column == "dead" and ranked[0].documented


def test_the_descriptions_response_sentence_picks_the_column_it_describes() -> None:
    # HSAUR/schooldays: "the number of days absent from school is the response variable"; the title
    # ("Days not Spent at School") names `school`, the school type, which is no outcome.
    rng = np.random.default_rng(11)
    cols = {"school": rng.choice(["F0", "F1", "F2", "F3"], 60), "learner": rng.choice(["slow", "average"], 60),
            "absent": rng.poisson(15, 60)}
    docs = {"school": "the school type, a factor with levels F0 (primary), F1 (first), F2 (second) and F3 (third form).",
            "learner": "how good is the child in learning things, a factor with levels average and slow.",
            "absent": "number of days absent from school."}
    description = "Data from a sociological study, the number of days absent from school is the response variable."
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Days not Spent at School", description=description)
    assert ranked[0].column == "absent" and ranked[0].kind == "outcome_description"
    assert [r.column for r in ranked if has_evidence(r)] == ["absent"]


@pytest.mark.parametrize("name, doc", [("momed", "mean grade level of mother"),  # Ecdat/RetSchool
                                       ("hgc", "highest grade completed"),  # HLMdiag/wages
                                       ("dir", "debt payments to total income ratio"),  # Ecdat/Hdma
                                       ("salary", "avg. teacher salary, $")])  # wooldridge/meap93
def test_schooling_a_ratios_terms_and_staff_pay_are_no_outcome_reading(name: str, doc: str) -> None:
    rng = np.random.default_rng(12)
    cols = {name: rng.normal(10, 2, 60), "other": rng.normal(size=60)}
    ranked, _ = _ranked(cols, column_descriptions={name: doc, "other": "a measurement"}, title="Panel data")
    assert not any(has_evidence(r) for r in ranked)


def test_an_undescribed_ratio_ranks_below_the_series_it_is_computed_from() -> None:
    # DAAG/whoops: `ratio` (of whooping-cough deaths to all deaths) beside the two counts.
    rng = np.random.default_rng(13)
    cols = {"wcough": rng.poisson(50, 60), "ratio": rng.uniform(size=60), "alldeaths": rng.poisson(900, 60)}
    ranked, _ = _ranked(cols)
    assert ranked[-1].column == "ratio"


def test_a_model_of_a_covariate_is_a_side_fit_beside_a_documented_outcome() -> None:
    # HistData/GaltonFamilies: `abline(lm(father ~ mother))` over `scatterplot(childHeight ~ midparentHeight)`;
    # the father's height is a parent's measure, the child's height the question.
    rng = np.random.default_rng(14)
    cols = {"father": rng.normal(69, 2, 60), "mother": rng.normal(64, 2, 60), "childHeight": rng.normal(66, 3, 60)}
    documented = {"father": reading("fitted_model", "model response in lm(father ~ …) in Examples"),
                  "childHeight": reading("plot_formula", "formula response in scatterplot(childHeight ~ …) in Examples")}
    docs = {"father": "height of father", "mother": "height of mother", "childHeight": "height of child"}
    ranked, _ = _ranked(cols, documented_outcomes=documented, column_descriptions=docs)
    assert [r.column for r in ranked if r.documented] == ["childHeight"]
    # Alone, the documentation still overrules the role it names.
    ranked, _ = _ranked(cols, documented_outcomes={"father": documented["father"]}, column_descriptions=docs)
    assert ranked[0].column == "father" and ranked[0].documented


def test_a_school_year_named_grade_is_no_outcome_by_its_name() -> None:
    # Stat2Data/YouthRisk: `grade`, "Year in high school: 9, 10, 11, or 12", is who the respondent is, beside
    # the risk behaviour the survey studies; the name "grade" alone is no outcome reading (a mark or a
    # grade of disease says so in its description).
    rng = np.random.default_rng(6)
    n = 60
    cols = {"grade": rng.choice([9.0, 10.0, 11.0, 12.0, np.nan], n), "smoke": rng.integers(0, 2, n),
            "x": rng.normal(size=n)}
    docs = {"grade": "Year in high school: 9, 10, 11, or 12", "smoke": "1=smoked in past 30 days or 0=did not",
            "x": "a measurement"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Annual survey of health-risk youth behaviors")
    assert "grade" not in [r.column for r in ranked if has_evidence(r)]


def test_a_column_called_the_outcome_outranks_the_titles_study_subject() -> None:
    # A local table titled "Clinic visits": the title names `visits`, but `label`'s own entry says it is the
    # outcome, which is the stronger reading.
    rng = np.random.default_rng(7)
    n = 80
    cols = {"visits": rng.poisson(3, n).astype(float), "label": rng.choice(["a", "b"], n), "x": rng.normal(size=n)}
    docs = {"visits": "Number of visits to the clinic.", "label": "the outcome", "x": "a probe measurement"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Clinic visits")
    assert ranked[0].column == "label" and ranked[0].kind != "study_subject"
    ranked, _ = _ranked(cols, column_descriptions={**docs, "label": "a group code"}, title="Clinic visits")
    assert ranked[0].column == "visits" and ranked[0].kind == "study_subject"


@pytest.mark.parametrize("doc", ["Percentage of 10th grade students receiving free lunch",
                                 "a factor indicating if the class is a mixed-grade class"])
def test_a_school_year_in_a_description_is_no_grade_outcome(doc: str) -> None:
    rng = np.random.default_rng(9)
    n = 60
    cols = {"free": rng.choice(["0-5", "6-10", "11-20", "21-30"], n), "x": rng.normal(size=n)}
    ranked, _ = _ranked(cols, column_descriptions={"free": doc, "x": "a measurement"}, title="Student data")
    assert "free" not in [r.column for r in ranked if has_evidence(r)]
    ranked, _ = _ranked(cols, column_descriptions={"free": "final grade in the course", "x": "a measurement"},
                        title="Student data")
    assert "free" in [r.column for r in ranked if has_evidence(r)]


def test_a_price_among_the_prices_a_table_lists_is_no_outcome_reading() -> None:
    # A farm's output price beside its seed and fertiliser prices (and a wage): prices the farm faces,
    # regressors of its production. Under a title naming prices the price is the subject.
    rng = np.random.default_rng(6)
    n = 60
    cols = {"price": rng.normal(100, 5, n), "pseed": rng.normal(50, 5, n), "purea": rng.normal(9, 1, n),
            "wage": rng.normal(20, 2, n), "output": rng.normal(size=n)}
    docs = {"price": "price of rough rice per kg", "pseed": "price of seed per kg", "purea": "price of urea per kg",
            "wage": "labor wage per hour", "output": "gross output of rice"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Production of Rice")
    assert not any(has_evidence(r) for r in ranked if r.column in ("price", "wage"))
    ranked, _ = _ranked(cols, column_descriptions={**docs, "pseed": "seed in kg", "purea": "urea in kg"},
                        title="Production of Rice")
    assert ranked[0].column == "price" and has_evidence(ranked[0])
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Rice Prices by Farm")
    assert ranked[0].column == "price" and has_evidence(ranked[0])


def test_a_title_that_describes_two_columns_reads_neither_as_the_outcome() -> None:
    # "Thermometer Ratings for Donald Trump and Barack Obama": each rating is the title's words.
    rng = np.random.default_rng(7)
    cols = {"ft_a": rng.normal(50, 20, 60), "ft_b": rng.normal(50, 20, 60)}
    docs = {"ft_a": "a thermometer rating for Donald Trump", "ft_b": "a thermometer rating for Barack Obama"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Thermometer Ratings for Donald Trump and Barack Obama")
    assert not any(has_evidence(r) for r in ranked)
    ranked, _ = _ranked(cols, column_descriptions={**docs, "ft_a": "age of the respondent"},
                        title="Thermometer Ratings for Barack Obama")
    assert [r.column for r in ranked if has_evidence(r)] == ["ft_b"]
    # Two related columns in the title's words (a linkage and the days to it) are no parallel measures.
    docs = {"ft_a": "post-detox linkage to primary care", "ft_b": "time (in days) to linkage to primary care"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Linkage to Primary Care")
    assert all(has_evidence(r) for r in ranked)


def test_a_wage_beside_its_own_log_and_its_starting_twin_is_the_outcome_not_a_price_the_unit_faces() -> None:
    # wooldridge/engin: `lwage`, "log(wage)", is wage's own transform, not another price of a table of prices;
    # `swage`, "starting wage", was taken before the current wage (read X blind as the target).
    rng = np.random.default_rng(11)
    wage = rng.lognormal(9, 0.4, 60)
    cols = {"wage": wage, "swage": wage * rng.uniform(0.5, 0.9, 60), "lwage": np.log(wage),
            "exper": rng.integers(0, 30, 60), "educ": rng.integers(8, 20, 60)}
    docs = {"wage": "monthly salary, Thai baht", "swage": "starting wage", "lwage": "log(wage)",
            "exper": "years on current job", "educ": "highest grade completed"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="engin")
    assert ranked[0].column == "wage" and ranked[0].kind == "outcome_description"
    assert next(r for r in ranked if r.column == "swage").kind == "ranked_fallback"
    # Without a current twin, a starting wage is the table's wage, and reads as one.
    alone, _ = _ranked({k: v for k, v in cols.items() if k not in ("wage", "lwage")},
                       column_descriptions={k: v for k, v in docs.items() if k not in ("wage", "lwage")}, title="engin")
    assert alone[0].column == "swage" and alone[0].kind == "outcome_description"


def test_an_entry_shared_by_a_family_of_columns_reads_as_none_of_them() -> None:
    # ggplot2movies/movies: one Format entry documents seven genre flags; "classified" singles out none.
    rng = np.random.default_rng(12)
    genres = ("Action", "Animation", "Comedy", "Drama")
    cols = {g: rng.choice([0, 1], 60) for g in genres} | {"length": rng.normal(100, 20, 60), "votes": rng.integers(5, 900, 60)}
    shared = "Binary variables representing if movie was classified as belonging to that genre."
    docs = {g: shared for g in genres} | {"votes": "Number of IMDB users who rated this movie."}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Movie information from IMDB.com.")
    assert not any(r.column in genres and has_evidence(r) for r in ranked)
    # The same words as one column's own entry still read as its outcome.
    one, _ = _ranked(cols, column_descriptions={"Drama": shared}, title="Movie information from IMDB.com.")
    assert one[0].column == "Drama" and one[0].kind == "outcome_description"


def test_a_score_the_title_qualifies_as_another_measure_is_not_the_subject() -> None:
    # mlmRev/bdf, "Language Scores of 8-Graders": `IQ.verb`, "verbal IQ scores", is no language score; a plain
    # qualifier ("California Test Score Data", "Average reading score") names no other measure.
    rng = np.random.default_rng(13)
    cols = {"IQ.verb": rng.normal(12, 2, 60), "ses": rng.normal(size=60), "size": rng.integers(10, 30, 60)}
    docs = {"IQ.verb": "a numeric vector of verbal IQ scores", "ses": "socioeconomic status",
            "size": "class size"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Language Scores of 8-Graders in The Netherlands")
    assert not any(has_evidence(r) for r in ranked)
    read, _ = _ranked({"read": cols["IQ.verb"], "ses": cols["ses"], "size": cols["size"]},
                      column_descriptions={"read": "Average reading score", "ses": "socioeconomic status",
                                           "size": "class size"}, title="California Test Score Data")
    assert read[0].column == "read" and read[0].kind == "outcome_description"


def test_a_column_the_title_names_as_an_influence_is_not_what_it_studies() -> None:
    # DAAG/nassCDS, "Airbag and other influences on accident fatalities": `airbag` is the exposure.
    rng = np.random.default_rng(14)
    cols = {"airbag": rng.choice(["none", "airbag"], 60), "speed": rng.normal(40, 10, 60), "age": rng.integers(16, 90, 60)}
    docs = {"airbag": "a factor with levels none airbag", "speed": "estimated impact speed"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Airbag and other influences on accident fatalities")
    assert not any(r.column == "airbag" and has_evidence(r) for r in ranked)
    named, _ = _ranked(cols, column_descriptions=docs, title="Airbag deployment in accidents")
    assert named[0].column == "airbag" and has_evidence(named[0])


def test_entries_differing_by_a_number_and_an_occasion_are_no_outcome_readings() -> None:
    # openintro/exam_grades: "Exam 1 grade" ... "Exam 3 grade" are a family; "Overall course grade" is what a
    # course sets out to grade; "Semester when grades were recorded" is when, not what (both read X blind).
    rng = np.random.default_rng(15)
    exams = {f"exam{i}": rng.normal(75, 10, 60) for i in (1, 2, 3)}
    cols = exams | {"course_grade": sum(exams.values()) / 3 + rng.normal(0, 5, 60),
                    "semester": rng.choice(["2000-1", "2000-2", "2001-1"], 60), "sex": rng.choice(["m", "w"], 60)}
    docs = {f"exam{i}": f"Exam {i} grade." for i in (1, 2, 3)} | {
        "course_grade": "Overall course grade.", "semester": "Semester when grades were recorded."}
    ranked, _ = _ranked(cols, column_descriptions=docs, title="Exam and course grades for statistics students")
    assert ranked[0].column == "course_grade" and has_evidence(ranked[0])
    assert not any(has_evidence(r) for r in ranked if r.column in (*exams, "semester"))
    # Entries differing by a year are the year rule's: wooldridge/jtrain3's `re78`, "'78 earnings, $1000s '82",
    # beside `re74` and `re75`, is the later year and the outcome.
    earn = {f"re{y}": rng.gamma(2, 3, 60) for y in (74, 75, 78)}
    ranked, _ = _ranked(earn | {"educ": rng.integers(8, 18, 60)}, title="jtrain3",
                        column_descriptions={f"re{y}": f"'{y} earnings, $1000s '82" for y in (74, 75, 78)})
    assert ranked[0].column == "re78" and has_evidence(ranked[0])


@pytest.mark.parametrize("hostile", ["a(b", "x+y*", "[z]", "w\\d", "'; import os #", "wage)", ".*"])
def test_column_names_and_descriptions_reach_the_new_readings_only_as_literals(hostile: str) -> None:
    # Names and descriptions are untrusted: every reading that puts a name in a pattern escapes it (the starting
    # twin, a column's own transform, a shared or numbered entry, a title's influence, a qualified quantity).
    rng = np.random.default_rng(16)
    wage = rng.lognormal(9, 0.4, 60)
    cols = {hostile: wage, "swage": rng.lognormal(8, 0.4, 60), "l": np.log(wage),
            "e1": rng.normal(size=60), "e2": rng.normal(size=60), "e3": rng.normal(size=60)}
    docs = {hostile: f"monthly wage of {hostile}", "swage": "starting wage", "l": f"log({hostile})",
            "e1": f"Exam 1 grade {hostile}", "e2": f"Exam 2 grade {hostile}", "e3": f"Exam 3 grade {hostile}"}
    ranked, _ = _ranked(cols, column_descriptions=docs, title=f"Effects of {hostile} on Scores")
    evidenced = [r for r in ranked if has_evidence(r)]
    assert [r.column for r in evidenced] == [hostile] and evidenced[0].kind == "outcome_description"
