"""A card's plain statement of its target names ONE column, by its name or its own description, wherever the
card says it (overview, use cases, a features table's row, DESCR's "Target: Column N"); a statement that fits
two columns, or two statements that disagree, name none; and a column's name alone is never a statement. A
stated target is documented evidence, tried through the same gates as any other (a leak still fails it).

The cards here are written for these tests in the way Kaggle, OpenML and Hugging Face show cards; none is
copied from a yardstick."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.heuristic import design
from task_design.profile import profile_table
from task_design.stated_target import stated_target
from tests.factories import UNIT_CONFIG, build_record

_HOUSING = {"sqft": "Living area in square feet", "bedrooms": "Number of bedrooms",
            "sale_price": "Price the house sold for, in dollars", "year_built": "Year the house was built"}
_NAMES = list(_HOUSING)


def _stated(description: str, columns: dict[str, str] | None = None, title: str = "Housing sales",
            classes: dict[str, int] | None = None):
    columns = _HOUSING if columns is None else columns
    rec = build_record(title=title, description=description, column_descriptions=columns)
    return stated_target(rec, list(columns), classes)


def test_the_target_is_names_the_column_by_its_name() -> None:
    hit = _stated("A Kaggle dataset of home sales. The target variable is sale_price, in dollars.")
    assert hit is not None and hit.column == "sale_price" and hit.rule_id == "stated.target-is"
    assert "stated.target-is" in hit.evidence
    # Markdown and spaces for the name's separators: "**Sale Price**".
    assert _stated("## Target\n- Target column: **Sale Price**").column == "sale_price"
    assert _stated("Each row is a sale, with the continuous target variable `sale_price`.").column == "sale_price"


def test_the_target_is_names_the_column_by_its_description() -> None:
    # No name in the sentence: the column whose own entry it repeats.
    hit = _stated("Use it for regression: the target is the price the house sold for.")
    assert hit is not None and hit.column == "sale_price"


def test_a_statement_fitting_two_columns_abstains() -> None:
    assert _stated("The target is sqft or bedrooms, as you like.") is None
    # Two statements of equal strength that disagree.
    assert _stated("The target variable is sqft. Later versions: the target variable is sale_price.") is None


def test_a_name_alone_or_a_title_word_is_no_statement() -> None:
    # A column named `y` and a title naming a column: nothing in the card's words states a target.
    cols = {"x": "first coordinate", "y": "second coordinate"}
    assert _stated("Two interleaved half circles, a toy set for clustering.", cols, title="Moons y") is None
    assert _stated("Sales of homes in one county, 2010-2015.") is None
    # "target" as an ordinary word.
    assert _stated("The target audience is first-time buyers; prices met the annual target.") is None


def test_a_column_entry_calling_itself_the_target() -> None:
    cols = {"tenure": "Months with the company", "monthly": "Monthly charge in dollars",
            "Churn": "(Target Variable) Whether the customer left (1 = Yes, 0 = No)"}
    hit = _stated("Telecom customers of one quarter.", cols, title="Customer churn")
    assert hit is not None and hit.column == "Churn" and hit.rule_id == "stated.target-entry"
    # Two entries saying so name none by the entries.
    cols["tenure"] = "Target: months with the company"
    assert _stated("Telecom customers of one quarter.", cols) is None


def test_descr_target_column_n_is_the_nth_column() -> None:
    cols = {f"s{i}": f"blood serum measurement {i}" for i in range(1, 4)} | {"age": "age in years",
                                                                             "prog": "progression one year later"}
    descr = (":Number of Instances: 442\n:Number of Attributes: First 4 columns are numeric predictive values\n"
             ":Target: Column 5 is a quantitative measure of disease progression one year after baseline")
    hit = _stated(descr, cols, title="Diabetes dataset")
    assert hit is not None and hit.column == "prog" and hit.rule_id == "stated.column-position"
    assert _stated(":Target: Column 9 is out of range", cols) is None


def test_as_the_target_and_classification_target_in_brackets() -> None:
    cols = {"sepal_len": "sepal length in cm", "petal_len": "petal length in cm", "species": "the iris species"}
    assert _stated("Use cases: multi-class classification with species as the target.", cols).column == "species"
    hit = _stated("Three flowers measured; a classic classification target (species) for beginners.", cols)
    assert hit is not None and hit.column == "species" and hit.rule_id == "stated.as-target"


def test_the_goal_is_to_predict() -> None:
    cols = {"cases": "confirmed cases per 100k", "death_rate": "deaths per confirmed case",
            "county": "county name"}
    hit = _stated("The goal of this dataset is to predict the death rate of each county.", cols)
    assert hit is not None and hit.column == "death_rate" and hit.rule_id == "stated.goal-predict"
    hit = _stated("This data set is intended to predict the sale price of a house from its features.")
    assert hit is not None and hit.column == "sale_price"


def test_k_classes_names_the_one_class_column_with_k_values() -> None:
    cols = {"region_centroid": "centroid of the region", "hue_mean": "mean hue", "class": "the segment's label",
            "sky": "1 if the region shows sky"}
    text = "Instances were drawn from outdoor images; features describe image segments into 7 classes."
    hit = _stated(text, cols, classes={"class": 7, "sky": 2})
    assert hit is not None and hit.column == "class" and hit.rule_id == "stated.k-classes"
    assert _stated(text, cols, classes={"class": 7, "hue_mean": 7}) is None  # two columns with 7 values
    assert _stated(text, cols) is None  # no class counts given: not read


def test_the_response_variable_represents_the_number_of() -> None:
    cols = {"visits": "number of doctor visits in the past two weeks", "age": "age in years",
            "income": "annual income in dollars"}
    hit = _stated("Australian health survey. The response variable represents the number of doctor visits.",
                  cols)
    assert hit is not None and hit.column == "visits" and hit.rule_id == "stated.response-represents"


def _design(table: pd.DataFrame, **doc):
    table = normalize_table(table)
    rec = build_record(**doc)
    return design(rec, profile_table(table), table, rng_for(0, rec.ref, "design"), UNIT_CONFIG)


def test_a_stated_target_is_built_with_documented_evidence() -> None:
    rng = np.random.default_rng(0)
    n = 300
    weight = rng.normal(20, 5, n)
    activity = rng.normal(2, 1, n)
    table = pd.DataFrame({"weight_kg": weight, "activity_hours": activity, "breed_size": rng.choice(["S", "M", "L"], n),
                          "score_z": weight * 0.3 + activity + rng.normal(0, 1, n),
                          "vet_visits": rng.poisson(2, n)})
    table["Healthy"] = np.where(table["score_z"] + rng.normal(0, 0.5, n) > 8, "Yes", "No")
    table = table.drop(columns=["score_z"])
    spec = _design(table, title="Canine wellness (synthetic)", description=(
        "Synthetic records of dogs. It is designed for binary classification, where the target variable is whether "
        "a dog is considered healthy."), column_descriptions={
        "weight_kg": "body weight in kg", "activity_hours": "daily activity in hours", "breed_size": "size of breed",
        "vet_visits": "visits to the vet in a year", "Healthy": "whether the dog is considered healthy (Yes/No)"})
    assert list(spec.target) == ["Healthy"]
    assert spec.target_evidence_kind == "documented_response"
    assert "stated.target-is" in spec.target_evidence


def test_a_stated_target_still_passes_the_leak_screen() -> None:
    rng = np.random.default_rng(1)
    n = 300
    table = pd.DataFrame({"income": rng.normal(50, 10, n), "debt": rng.normal(10, 3, n),
                          "age": rng.integers(20, 70, n)})
    table["default"] = np.where(table["debt"] / table["income"] + rng.normal(0, 0.05, n) > 0.2, "yes", "no")
    table["default_flag"] = (table["default"] == "yes").astype(int)  # the target again, as a number
    spec = _design(table, title="Loan defaults", description="Binary target column: default (yes/no).",
                   column_descriptions={"income": "yearly income", "debt": "current debt", "age": "age in years",
                                        "default_flag": "1 if the loan defaulted"})
    assert list(spec.target) == ["default"] and "stated.target-is" in spec.target_evidence
    assert "default_flag" not in spec.selected_features and "default_flag" in spec.excluded_features


def test_a_features_list_line_marking_its_column_as_the_target() -> None:
    cols = {"hours_alone": "", "stage_fear": "", "Personality": ""}
    card = "Features:\n- hours_alone: hours spent alone daily\n- Personality: Target variable (Extrovert/Introvert)."
    hit = _stated(card, cols)
    assert hit is not None and hit.column == "Personality" and hit.rule_id == "stated.target-line"
    cols = {"cgpa": "", "placed": ""}
    assert _stated("1) cgpa - grade point average\n2) placed (Label) - placement status", cols).column == "placed"
    assert _stated("- Campaign: target audience of the mailing", {"Campaign": "", "spend": ""}) is None


def test_a_use_case_predicting_a_column_in_the_plural() -> None:
    cols = {"study_hours": "", "attendance": "", "final_grade": ""}
    hit = _stated("## Use cases\n- Predict student final grades using decision trees", cols)
    assert hit is not None and hit.column == "final_grade" and hit.rule_id == "stated.predicting"
    assert _stated("- Predict study_hours or attendance from the rest", cols) is None  # a list fits two


def test_what_is_predicted_ends_where_other_purposes_or_the_inputs_begin() -> None:
    cols = {"Age": "", "Risk": "", "Recurred": ""}
    # "risk" is a word of another purpose, not what is predicted; "recurrence" names no column.
    assert _stated("Useful for predicting cancer recurrence, understanding risk factors and outcomes.", cols) is None
    cols = {"rainfall": "", "yield": ""}
    assert _stated("The goal is to predict yield from rainfall.", cols).column == "yield"
    assert _stated("The goal is to predict the season's rainfall and yield.", cols).column == "rainfall"
