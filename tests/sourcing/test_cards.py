"""Every card format a user's folder may hold is read into the same record fields: the title, the
description, the licence, each column's description (from a features table, a `- **col**: ...` list,
a Kaggle column list, a DESCR attribute list) and only a target the card's structure declares (a
Hugging Face col_mapping, a DESCR `:Target:`), never one guessed from prose. The formats are those the
real tools write: kagglesdk's own serialiser, scikit-learn's own DESCR files."""

from __future__ import annotations

import importlib.resources
import json

import pytest

from sourcing.cards import FORMATS, decode_card, fit_card, read_card
from tests.sourcing.card_data import FIXTURES


def _fixture(kind: str, name: str, file: str) -> str:
    return (FIXTURES / kind / name / file).read_text(encoding="utf-8")


def test_the_registry_reads_each_format_by_its_file_and_text() -> None:
    assert [f.name for f in FORMATS] == ["kaggle", "huggingface", "sklearn_descr", "markdown"]
    assert read_card("dataset-metadata.json", "{}").format == "kaggle"
    assert read_card("README.md", _fixture("huggingface", "coffee-roast-quality", "README.md")).format == "huggingface"
    assert read_card("README.md", _fixture("markdown", "fuel-economy", "README.md")).format == "markdown"
    assert read_card("metadata.txt", "---\nlicense: mit\n---\n# x").format == "markdown"  # YAML header only in .md


def test_a_kaggle_metadata_file_as_kagglesdk_writes_it() -> None:
    """`kaggle datasets metadata` writes the GetDatasetMetadata response's JSON: built here by kagglesdk."""
    from kagglesdk.datasets.types.dataset_api_service import ApiGetDatasetMetadataResponse
    from kagglesdk.datasets.types.dataset_types import (DatasetInfo, DatasetSettingsFile, DatasetSettingsFileColumn,
                                                        SettingsLicense)

    def column(name: str, description: str) -> DatasetSettingsFileColumn:
        c = DatasetSettingsFileColumn()
        c.name, c.description, c.type = name, description, "numeric"
        return c

    files = []
    for name, cols in (("red.csv", [column("alcohol", "Alcohol, % by volume"), column("quality", "Sensory score 0-10")]),
                       ("white.csv", [column("alcohol", "Alcohol content"), column("sugar", "Residual sugar, g/l")])):
        f = DatasetSettingsFile()
        f.name, f.description, f.columns = name, f"The {name[:-4]} wines.", cols
        files.append(f)
    info = DatasetInfo()
    info.owner_user, info.dataset_slug, info.title = "vinho", "wine-quality", "Wine Quality"
    info.subtitle, info.description, info.keywords = "Physicochemical tests", "Portuguese vinho verde.", ["wine"]
    licence = SettingsLicense()
    licence.name = "CC-BY-4.0"
    info.licenses, info.data = [licence], files
    response = ApiGetDatasetMetadataResponse()
    response.info = info
    card = read_card("dataset-metadata.json", response.to_json(response.info))
    fields, notes = fit_card(card, "red.csv", ["alcohol", "quality", "sugar"])
    assert fields == {"title": "Wine Quality", "subtitle": "Physicochemical tests",
                      "description": "Portuguese vinho verde.", "license": "CC-BY-4.0",
                      "url": "https://www.kaggle.com/datasets/vinho/wine-quality", "owner": "vinho",
                      "tags": ("wine",), "about_file": "The red wines.",
                      # the table's own file entry wins; another file fills what it lacks
                      "column_descriptions": {"alcohol": "Alcohol, % by volume", "quality": "Sensory score 0-10",
                                              "sugar": "Residual sugar, g/l"}}
    assert notes == ()


def test_a_data_package_metadata_file_and_the_features_table_in_its_description() -> None:
    card = read_card("dataset-metadata.json", _fixture("kaggle_download", "used-bicycle-prices", "dataset-metadata.json"))
    columns = ["listing_id", "frame_size_cm", "age_years", "groupset", "weight_kg", "price_eur"]
    fields, notes = fit_card(card, "listings.csv", columns)
    assert fields["title"] == "Used Bicycle Prices" and fields["license"] == "CC0-1.0"
    assert fields["tags"] == ("cycling", "regression", "tabular") and fields["about_file"] == "One row per listing."
    # the blank schema entry of listing_id is filled from the description's features table
    assert fields["column_descriptions"]["listing_id"] == "Identifier of the listing on the site"
    assert fields["column_descriptions"]["price_eur"] == "Asking price in euros"
    assert "target_hint" not in fields
    assert notes == ("the card describes column 'condition', which the table does not have: ignored",)


def test_a_hugging_face_card_gives_its_licence_name_fields_and_declared_target() -> None:
    card = read_card("README.md", _fixture("huggingface", "coffee-roast-quality", "README.md"))
    fields, notes = fit_card(card, "train.csv", ["moisture", "density", "roast_minutes", "origin", "grade"])
    assert (fields["title"], fields["license"], fields["target_hint"]) == ("Coffee Roast Quality", "cc-by-4.0", "grade")
    assert fields["tags"] == ("agriculture", "coffee", "tabular-classification")
    assert fields["column_descriptions"]["grade"] == "cupping grade, standard or specialty"
    assert fields["about_file"] == "Features: moisture, density, roast_minutes, origin, grade."
    assert fields["description"].startswith("# Dataset Card for Coffee Roast Quality") and notes == ()


def test_a_markdown_card_reads_a_features_table_and_a_bold_list_but_not_bold_prose() -> None:
    card = read_card("README.md", _fixture("markdown", "fuel-economy", "README.md"))
    assert card.title == "Fuel Economy of Compact Cars"
    assert card.columns == {"make": "Manufacturer", "engine_l": "Engine displacement in litres",
                            "cylinders": "Number of cylinders", "transmission": "manual or automatic",
                            "curb_weight_kg": "Curb weight in kilograms",
                            "mpg": "Combined fuel economy in miles per gallon"}


def test_a_kaggle_card_export_with_its_about_and_column_sections() -> None:
    card = read_card("metadata.txt", _fixture("kaggle_export", "lung-capacity", "metadata.txt"))
    assert card.title == "" and card.about_file == "Lung capacity and other measurements, one row per child."
    assert card.description.startswith("The dataset records the lung capacity") and "LungCap:" not in card.description
    assert card.columns["LungCap"] == "lung capacity in litres" and "" not in card.columns  # `: row number` skipped


def test_both_sections_of_a_card_describe_a_column_together() -> None:
    text = ("## Dogs\n\n| Column | Description |\n|---|---|\n| `Healthy` | **Target**: Yes or No |\n"
            "| `Age` | Age in years |\n\n=== Columns & descriptions ===\n\n"
            "Healthy: whether the dog is considered healthy\nAge: Age in years\n")
    assert read_card("metadata.txt", text).columns == {
        "Healthy": "whether the dog is considered healthy; Target: Yes or No", "Age": "Age in years"}


@pytest.mark.parametrize("descr, columns, expect", [
    ("diabetes.rst", ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6", "target"],
     {"title": "Diabetes dataset", "target_hint": "target", "bmi": "body mass index", "s5": "ltg, possibly log of "
      "serum triglycerides level", "sex": "sex"}),
    ("iris.rst", ["sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)", "class"],
     {"title": "Iris plants dataset", "sepal length (cm)": "sepal length in cm",
      "class": "Iris-Setosa; Iris-Versicolour; Iris-Virginica"}),
])
def test_scikit_learns_own_descr_text(descr: str, columns: list[str], expect: dict) -> None:
    text = (importlib.resources.files("sklearn.datasets") / "descr" / descr).read_text(encoding="utf-8")
    card = read_card(descr, text)
    assert card.format == "sklearn_descr"
    fields, _ = fit_card(card, "data.csv", columns)
    for key, value in expect.items():
        assert (fields.get(key) if key in ("title", "target_hint") else fields["column_descriptions"][key]) == value
    if "target_hint" not in expect:
        assert "target_hint" not in fields  # iris's DESCR declares no target


def test_a_declared_target_that_is_no_column_is_dropped_with_a_note() -> None:
    card = read_card("DESCR.rst", ":Attribute Information:\n    - a     first\n    - b     second\n\n"
                                  ":Target: Column 7 is the outcome\n")
    fields, notes = fit_card(card, "d.csv", ["a", "b"])
    assert "target_hint" not in fields
    assert notes == ("the card's declared target (column 7) is no column of the table: ignored",)


def test_a_kaggle_metadata_file_that_is_no_json_object_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^dataset-metadata.json: not valid JSON: Expecting value"):
        read_card("dataset-metadata.json", "title: not json")
    with pytest.raises(ValueError, match=r"^dataset-metadata.json: not a JSON object$"):
        read_card("dataset-metadata.json", json.dumps(["a"]))


def test_text_decoding_notes_latin_1_and_drops_control_characters() -> None:
    text, notes = decode_card("metadata.txt", "Größe\x1b[2J: body height\r\n".encode("latin-1"))
    assert text == "Größe[2J: body height\n"
    assert notes == ("metadata.txt is not UTF-8 (byte 0xf6 at 2): read as Latin-1",)
    assert decode_card("README.md", "\ufeffTitle".encode("utf-8")) == ("Title", ())


def test_a_yaml_header_with_aliases_is_not_expanded_and_the_body_is_still_read() -> None:
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nlicense: mit\n---\n" \
           "# Laughs\n\n- `x`: a column\n"
    card = read_card("README.md", bomb)
    assert (card.format, card.title, card.license, card.columns) == ("huggingface", "Laughs", "", {"x": "a column"})
    assert card.notes == ("README.md: the card's YAML header is not valid YAML (it uses an alias (*name), which a "
                          "card header is not read with): read as Markdown only",)


def test_a_card_naming_twenty_thousand_absent_columns_is_one_line_of_the_log() -> None:
    """A card may name any number of columns; the build log gets one summarised line per kind, not one a column."""
    fields = [{"name": f"ghost_{i}", "description": "not here"} for i in range(20_000)]
    fields += [{"name": "age", "description": "age in years"}, {"name": "AGE", "description": "age again"}]
    card = read_card("dataset-metadata.json", json.dumps({"title": "Ghosts", "resources": [
        {"path": "t.csv", "schema": {"fields": fields}}]}))
    fit, notes = fit_card(card, "t.csv", ["age", "score"])
    assert fit["column_descriptions"] == {"age": "age in years"}
    assert notes == ("the card describes 20000 columns the table does not have ('ghost_0', 'ghost_1', 'ghost_2', and "
                     "19997 more): ignored",
                     "the card describes column 'age' twice (as 'AGE'): the first entry is kept")
