"""The IF instruction names every choice the reference solution depends on, in plain words."""

from __future__ import annotations

import pytest

from finalize.instructions import question_v1, question_v2, spec_references
from pipeline.core import names
from pipeline.core.column_refs import description_phrase, named_text
from tests.factories import build_record, build_table, spec_where


@pytest.mark.parametrize("doc, phrase", [
    ("Wage (in dollars per hour).", "Wage (in dollars per hour) (`c`)"),
    ("a factor with levels: female; male", "`c`"),
    ("volunteeing, a factor with levels: no; yes", "volunteeing (`c`)"),
    ("Factor. Does the individual live in the South?", "Does the individual live in the South? (`c`)"),
    ("a numeric vector", "`c`"),
    ("numeric vector giving the age of the child in years", "the age of the child in years (`c`)"),
    ("Number of factories in the region", "Number of factories in the region (`c`)"),
    ("", "`c`"),
    ("GDP per capita. Source: the World Bank.", "GDP per capita (`c`)"),
])
def test_column_phrase(doc, phrase):
    assert named_text("c", description_phrase("c", doc)) == phrase


def test_a_long_description_is_left_to_metadata_txt_never_cut():
    """A phrase cut at a word says less than it seems to ("admission with a long bone…"): a description
    too long for a feature list is not shown, and the reference is the column name."""
    assert named_text("c", description_phrase("c", "word " * 60)) == "`c`"


@pytest.mark.parametrize("file_type", ["csv", "sqlite", "parquet"])
def test_question_v1_spells_out_every_step(file_type):
    from task_design.config import DesignConfig

    table = build_table()
    record = build_record(column_descriptions={"x": "The x measurement.", "colour": "Colour of the item."})
    spec = spec_where(table, lambda s: True, config=DesignConfig(file_types=(file_type,)),
                      column_descriptions=record.column_descriptions)
    text = question_v1(record, spec)
    refs = spec_references(spec, {c: record.column_descriptions.get(c, "") for c in table.columns})
    train, val = names.data_file("train_v1", file_type), names.data_file("val_v1", file_type)
    assert f"`{train}`" in text and f"`{val}`" in text and "`prediction.csv`" in text
    assert ("joined on `row_id`" in text) == (file_type == "sqlite")
    # the tables an agent reads are named, and so are the row order and the validation file's missing values
    assert ("`table_1`" in text and "`val_set`" in text) == (file_type == "sqlite")
    assert ("ascending `row_id` order" in text) == (file_type == "sqlite")
    assert "so that its missing values follow the same rule" in text
    for col, allowed in spec.expected_ranges.items():
        assert refs[col].phrase in text
        if spec.column_type_inference[col] == "numerical":
            assert f"between {allowed[0]!r} and {allowed[1]!r} inclusive" in text
        else:
            assert all(f'"{v}"' in text for v in allowed)
    for col in spec.selected_features:  # documented ones by description alone, the others by name
        assert (f"`{col}`" in text) == (refs[col].by == "name")
    assert spec.model_type in text and f'"{spec.imputer_type}"' in text
    assert "handle_unknown" in text and "sparse_output set to False" in text
    seeded = spec.model_type not in ("GaussianNB", "LinearRegression")
    assert (f"random_state set to {spec.random_state}" in text) == seeded
    assert "x measurement" in text or "x" not in spec.expected_ranges


def test_question_v2_names_files_and_target():
    spec = spec_where(build_table(), lambda s: True)
    text = question_v2(spec)
    ext = spec.save_file_type
    assert f"`train_v2.{ext}`" in text and f"`val_v2.{ext}`" in text and f"`{spec.target[0]}`" in text


def test_instruction_check_passes_our_text_and_names_what_a_rewording_dropped():
    from finalize.checks import check_instruction
    from finalize.layout import question_block

    table = build_table()
    record = build_record(column_descriptions={"x": "The x measurement of the probe."})
    spec = spec_where(table, lambda s: s.model_type not in ("GaussianNB", "LinearRegression")
                      and "x" in s.selected_features and s.categorical_features)
    q = question_block(spec)
    text = question_v1(record, spec)
    documented = {c: record.column_descriptions.get(c, "") for c in table.columns}
    assert "x measurement" in text and "`x`" not in text  # documented well enough: by description alone
    assert check_instruction("t", text, q, documented, strict=True) == []
    # a paraphrase that lost the seed, a category value and the x feature (its description)
    value = str(spec.expected_ranges[spec.categorical_features[0]][0])
    reworded = (text.replace(f"random_state set to {spec.random_state}", "a fixed seed")
                .replace(f'"{value}"', "the usual value").replace("x measurement", "first signal"))
    [problem] = check_instruction("t", reworded, q, documented)
    assert problem.severity == "error"
    for part in (f"random_state {spec.random_state}", f"range value {value}", "feature 'x'"):
        assert part in problem.message, problem.message


def test_the_mm_instruction_of_a_short_panel_says_its_validation_rows_are_later() -> None:
    table = build_table(n=200)
    spec = spec_where(table, lambda s: s.problem_type == "regression")
    assert "comes after" not in question_v2(spec)
    text = question_v2(spec.model_copy(update={"split_time_column": "year"}))
    assert text.endswith("comes after every row of `" + names.data_file(names.TRAIN_V2, spec.save_file_type)
                         + "` in `year`: the predictions are for the later time points.")


def test_steps_for_absent_feature_kinds_and_missing_values_are_not_spelled_out_as_work() -> None:
    # Issue 49: 5 of 6 IF questions asked for categorical imputing and encoding on data with no categorical feature,
    # and for imputation on data with no missing value. Only the wording of such no-op steps changes: the
    # question names the steps the reference runs (a ColumnTransformer of the kinds present) and says the
    # imputation changes nothing; the instruction check asks for the facts of the kinds present only.
    from finalize.checks import check_instruction
    from finalize.layout import question_block

    table = build_table()
    record = build_record(column_descriptions={"x": "The x measurement of the probe."})
    spec = spec_where(table, lambda s: s.categorical_features and s.numerical_features
                      and s.imputer_type != "most_frequent")
    documented = {c: record.column_descriptions.get(c, "") for c in table.columns}
    both = question_v1(record, spec)
    assert "one-hot encoder" in both and "standard scaler" in both and "changes no value" not in both
    cats = set(spec.categorical_features)
    numeric_only = spec.model_copy(update={
        "categorical_features": (), "selected_features": tuple(c for c in spec.selected_features if c not in cats),
        "expected_ranges": {c: v for c, v in spec.expected_ranges.items() if c not in cats}})
    text = question_v1(record, numeric_only, has_missing=False)
    assert "one-hot" not in text and "most_frequent" not in text and "handle_unknown" not in text
    assert "there is no categorical feature, hence no categorical imputer and no encoder" in text
    assert "so the imputation changes no value" in text and f'"{spec.imputer_type}"' in text
    assert check_instruction("t", text, question_block(numeric_only), documented, strict=True) == []
    # the facts of a kind the question has are still required
    [problem] = check_instruction("t", text.replace("standard scaler", "scaler"), question_block(numeric_only),
                                  documented, strict=True)
    assert "the encoding step 'standard scaler'" in problem.message


@pytest.mark.parametrize("file_type, rule", [("csv", 'treating only empty strings ("") as missing values'),
                                             ("parquet", "a missing value is a Parquet null"),
                                             ("sqlite", "a missing value is an SQL NULL")])
def test_the_validation_files_missing_value_rule_is_stated_for_every_format(file_type: str, rule: str) -> None:
    # Issue 49: "read it as the training data is read, so that its missing values follow the same rule" stated no
    # rule for a Parquet or SQLite file.
    from task_design.config import DesignConfig

    spec = spec_where(build_table(), lambda s: True, config=DesignConfig(file_types=(file_type,)))
    assert f"so that its missing values follow the same rule ({rule}" in question_v1(build_record(), spec)
