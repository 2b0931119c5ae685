"""The last resort of the fallback: when no column reads as an outcome by its own words, the description
may still say what was measured (a looser response sentence, "measurements on ...", an opening sentence
that spells one column's own entry, a title listing one measure beside who the unit is, an experiment's
one measure beside its arm). Each reading singles out one column or abstains, and none displaces a column
with any other evidence."""

from __future__ import annotations

import pandas as pd

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.heuristic import design_pair
from task_design.profile import profile_table
from task_design.study_subject import described_subject, title_measure
from task_design.targets import has_evidence
from tests.factories import UNIT_CONFIG, build_record
from tests.task_design.test_study_subject import _ranked  # a small table's ranked targets

_PIMA = ("A population of women who were at least 21 years old, of Pima Indian heritage and living near Phoenix, "
         "Arizona, was tested for diabetes according to World Health Organization criteria. The data were "
         "collected by the US National Institute of Diabetes and Digestive and Kidney Diseases.")
_PIMA_COLUMNS = {"npreg": "number of pregnancies.", "bmi": "body mass index (weight in kg/(height in m)^2).",
                 "glu": "plasma glucose concentration in an oral glucose tolerance test.",
                 "type": "Yes or No, for diabetic according to WHO criteria.", "age": "age in years."}


def test_an_opening_that_spells_one_entry_names_that_column() -> None:
    # MASS/Pima.tr: what the women were tested for is `type`'s own entry, in three of its four words.
    rec = build_record(title="Diabetes in Pima Indian Women", description=_PIMA, column_descriptions=_PIMA_COLUMNS)
    subject = described_subject(rec, ["npreg", "glu", "bmi", "type", "age"])
    assert subject is not None and subject.column == "type"
    assert "accord" in subject.why and "diabet" in subject.why
    # ISLR/OJ: the purchases between two brands are `Purchase`'s entry; the week of purchase shares one word.
    rec = build_record(title="Orange Juice Data", description=(
        "The data contains 1070 purchases where the customer either purchased Citrus Hill or Minute Maid Orange "
        "Juice. A number of characteristics of the customer and product are recorded."), column_descriptions={
        "Purchase": "A factor with levels CH and MM indicating whether the customer purchased Citrus Hill or "
                    "Minute Maid Orange Juice", "WeekofPurchase": "Week of purchase", "PriceCH": "Price charged for CH"})
    assert described_subject(rec, ["Purchase", "WeekofPurchase", "PriceCH"]).column == "Purchase"


def test_an_opening_about_the_unit_or_the_design_abstains() -> None:
    # Two words name the unit, not a measure (mstate/ebmt4: "2279 patients transplanted" and the age class).
    rec = build_record(title="Data", description="A data frame of 2279 patients transplanted at the EBMT.",
                       column_descriptions={"agecl": "Patient age at transplant", "year": "Year of transplant",
                                            "srv": "Time in days to death"})
    assert described_subject(rec, ["agecl", "srv", "year"]) is None
    # boot/cane: a sentence about the design names its factor.
    rec = build_record(title="Sugar-cane Disease Data", description=(
        "The data frame represents a randomized block design with 45 varieties of sugar-cane and 4 blocks."),
        column_descriptions={"var": "The cane variety", "r": "The number of diseased shoots",
                             "n": "The total number of shoots"})
    assert described_subject(rec, ["var", "r", "n"]) is None
    # Two columns spelled by one opening: it describes the unit (heart and body weights of cats).
    rec = build_record(title="Anatomical Data from Domestic Cats", description=(
        "The heart and body weights of samples of male and female cats used for digitalis experiments."),
        column_descriptions={"Bwt": "body weight in kg.", "Hwt": "heart weight in g.", "Sex": "A factor"})
    assert described_subject(rec, ["Bwt", "Hwt"]) is None


def test_a_looser_response_sentence_and_measurements_name_their_column() -> None:
    # survival/solder: "The response, measured by eye, is the number of visible solder skips".
    rec = build_record(title="Data from a soldering experiment", description=(
        "In 1988 an experiment was designed. The experiment varied a number of factors relevant to the process. "
        "The response, measured by eye, is the number of visible solder skips."),
        column_descriptions={"Mask": "type and thickness of the material used for the solder mask",
                             "skips": "the number of skips"})
    assert described_subject(rec, ["Mask", "skips"]).column == "skips"
    # MASS/Sitka: "repeated measurements on the log-size of 79 Sitka spruce trees".
    rec = build_record(title="Growth Curves for Sitka Spruce Trees in 1988", description=(
        "The Sitka data frame has 395 rows and 4 columns. It gives repeated measurements on the log-size of 79 "
        "Sitka spruce trees, 54 of which were grown in ozone-enriched chambers."),
        column_descriptions={"size": "measured size (height times diameter squared) of tree, on log scale.",
                             "Time": "time of measurement in days since 1 January 1988."})
    assert described_subject(rec, ["size", "Time"]).column == "size"
    # Measurements that name two columns name the unit's measures, none singled out.
    rec = build_record(title="Plants", description="Measurements of leaf length and leaf width of 40 plants.",
                       column_descriptions={"length": "Leaf length", "width": "Leaf width"})
    assert described_subject(rec, ["length", "width"]) is None


def test_a_title_lists_one_measure_beside_who_the_unit_is() -> None:
    rec = build_record(title="Vocabulary and Education", column_descriptions={
        "vocabulary": "Vocabulary test score", "education": "Education, in years.", "year": "Year of the survey."})
    assert title_measure(rec, ["vocabulary", "education", "year"], ["education"]).column == "vocabulary"
    rec = build_record(title="Measurements of African Elephants", description="Age and height of African elephants")
    assert title_measure(rec, ["Age", "Height"], ["Age"]).column == "Height"
    # Two measures, or a topic naming no column, single out none.
    assert title_measure(build_record(title="Age, height and weight of elephants"), ["Height", "Weight"],
                         ["Age"]) is None
    assert title_measure(build_record(title="Beauty and evaluations"), ["score", "bty_avg"], []) is None


def test_the_last_resort_leads_only_when_nothing_else_reads_as_an_outcome() -> None:
    n = 60
    columns = {"npreg": [i % 7 for i in range(n)], "glu": [80 + (i * 7) % 90 for i in range(n)],
               "bmi": [20 + (i * 3) % 20 for i in range(n)], "age": [21 + i % 40 for i in range(n)],
               "type": ["Yes" if i % 3 == 0 else "No" for i in range(n)]}
    ranked = _ranked(columns, title="Diabetes in Pima Indian Women", description=_PIMA,
                     column_descriptions=_PIMA_COLUMNS)
    assert ranked[0].column == "type" and ranked[0].kind == "study_subject" and has_evidence(ranked[0])
    assert "none of them reading as an outcome" in ranked[0].evidence
    # A column whose own entry reads as an outcome keeps its place: the last resort never displaces it.
    ranked = _ranked(columns, title="Diabetes in Pima Indian Women", description=_PIMA,
                     column_descriptions={**_PIMA_COLUMNS, "glu": "the outcome: plasma glucose concentration"})
    assert ranked[0].column == "glu" and ranked[0].kind != "study_subject"


def test_an_experiment_of_one_arm_and_one_measure_measured_that_column() -> None:
    n = 60
    columns = {"group": ["control" if i % 2 else "treatment" for i in range(n)],
               "self_reported_improvement": ["yes" if i % 3 else "no" for i in range(n)]}
    ranked = _ranked(columns, title="Sinusitis and antibiotic experiment", description=(
        "Researchers studying the effect of antibiotic treatment for acute sinusitis to one of two groups: "
        "treatment or control."), column_descriptions={"group": "a factor with levels control and treatment",
                                                      "self_reported_improvement": "a factor with levels no and yes"})
    assert ranked[0].column == "self_reported_improvement" and has_evidence(ranked[0])
    # Without the experiment's wording, a table of two columns says nothing of which one was measured.
    ranked = _ranked(columns, title="Two factors", description="Some data.", column_descriptions={})
    assert not any(has_evidence(r) for r in ranked)


def test_a_second_task_never_rests_on_the_last_resort() -> None:
    # `glu` reads as the outcome by its own entry; the opening still spells `type`'s entry, but the last
    # resort is for datasets none of whose columns reads as an outcome: no second task on `type`.
    n = 200
    table = normalize_table(pd.DataFrame({
        "npreg": [i % 7 for i in range(n)], "bmi": [20 + (i * 3) % 20 for i in range(n)],
        "glu": [80 + (i * 7) % 90 + (i % 7) * 5 for i in range(n)],
        "type": ["Yes" if (i % 7) > 3 else "No" for i in range(n)]}))
    record = build_record(title="Diabetes in Pima Indian Women", description=_PIMA, column_descriptions={
        **_PIMA_COLUMNS, "glu": "the outcome: plasma glucose concentration"})
    rngs = {k: rng_for(0, record.ref, f"design-{k}") for k in ("classification", "regression")}
    specs = design_pair(record, profile_table(table), table, rng_for(0, record.ref, "design"), rngs, UNIT_CONFIG)
    assert [s.target for s in specs] == [("glu",)]


def test_words_of_the_time_frame_name_no_measure() -> None:
    # AER/NYSESW: the opening and the column's entry share "daily" and "series" only.
    rec = build_record(title="Daily NYSE Composite Index", description=(
        "A daily time series from 1990 to 2005 of the New York Stock Exchange composite index."),
        column_descriptions={"nysesw": "A daily univariate time series from 1990-01-02 to 2005-11-11"})
    assert described_subject(rec, ["nysesw"]) is None
    # Stat2Data/CO2Hawaii: the readings are of the column's own quantity.
    rec = build_record(title="Carbon Dioxide at Mauna Loa", description=(
        "Monthly carbon dioxide readings at Mauna Loa, Hawaii"),
        column_descriptions={"CO2": "Atmospheric carbon dioxide level (ppm)"})
    assert described_subject(rec, ["CO2"]).column == "CO2"
