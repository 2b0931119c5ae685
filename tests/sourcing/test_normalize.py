"""normalize_table returns a new frame with unique, non-empty column names (never our `row_id`) whose
values read back unchanged from csv, parquet and sqlite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.checks import canonical_rows
from pipeline.core.names import ROW_ID
from pipeline.core.records import DatasetRejected
from postprocess.formats import read_frame, write_frame
from postprocess.package import _with_row_id
from sourcing.normalize import normalize_table, unique_column_names

FORMATS = ("csv", "parquet", "sqlite")


def _frame(**overrides) -> pd.DataFrame:
    """A 5-row raw source table; overrides add or replace columns."""
    columns = {"a": [1, 2, 3, 4, 5], "b": ["p", "q", "r", "s", "t"]}
    columns.update(overrides)
    return pd.DataFrame(columns)


def _round_trip(df: pd.DataFrame, file_type: str, tmp_path: Path) -> pd.DataFrame:
    path = tmp_path / f"table.{file_type}"
    write_frame(df, path, file_type, "train_set")
    return read_frame(path, file_type)


def _nasty() -> pd.DataFrame:
    """Everything that has broken a format round trip somewhere: quotes, unicode, tiny and long numbers."""
    return pd.DataFrame({
        "naïve 名前": ["héllo", "wörld", "日本語", None, "emoji 🙂", "tab\there"],
        'say "hi"': ['he said "yes"', "it's", "a,b;c", "multi\nline", '""', "'"],
        'a"b': [1, 2, 3, 4, 5, 6],
        "floats": [0.1, 1e-300, 123456789.123456789, np.nan, -0.0, 0.1 + 0.2],
        "ints_with_gap": [1, None, 3, 4, 5, 2**40],
        "long": ["x" * 5000, "y" * 3000, "z", "w" * 10, "v", "é" * 2000],
        "numeric_strings": ["1", "2.5", "NA", "", "3", "1e3"],
        "flags": [True, False, True, False, True, True],
        "levels": pd.Categorical(["lo", "hi", "lo", None, "mid", "hi"]),
        "dates": pd.to_datetime(["2020-01-01", "2021-06-30", None, "1999-12-31", "2000-02-29", "2024-01-01"]),
        "padded": [" a", "b ", " c ", "d", "e", "f"],
        "big_int": [2**62, -(2**62), 0, 1, -1, 7],
    })


# ---------------------------------------------------------------- column names


def test_duplicate_names_become_unique() -> None:
    out = normalize_table(pd.DataFrame([[1, 2, 3, 4]], columns=["a", "a", "a_2", "a"]))
    assert list(out.columns) == ["a", "a_2", "a_2_2", "a_3"]
    assert out.iloc[0].tolist() == [1, 2, 3, 4]


def test_names_are_stripped_before_deduplication() -> None:
    assert unique_column_names([" a", "a ", "a"]) == ["a", "a_2", "a_3"]


def test_unicode_names_survive() -> None:
    names = ["naïve", "名前", "🙂 score", "Ωmega"]
    out = normalize_table(pd.DataFrame([[1, 2, 3, 4]], columns=names))
    assert list(out.columns) == names


@pytest.mark.parametrize("missing", [None, "", "   ", np.nan])
def test_empty_or_missing_names_get_their_position(missing) -> None:
    out = normalize_table(pd.DataFrame([[1, 2, 3]], columns=["a", missing, "c"]))
    assert list(out.columns) == ["a", "column_2", "c"]


def test_non_string_names_become_strings() -> None:
    out = normalize_table(pd.DataFrame([[1, 2, 3]], columns=[1, 2.5, "1"]))
    assert list(out.columns) == ["1", "2.5", "1_2"]


@pytest.mark.parametrize("name", [ROW_ID, f" {ROW_ID} "])
def test_source_row_id_is_renamed_and_kept(name: str) -> None:
    out = normalize_table(_frame(**{name: [9, 8, 7, 6, 5]}))
    assert ROW_ID not in out.columns
    renamed = [c for c in out.columns if c.startswith(ROW_ID)]
    assert len(renamed) == 1 and out[renamed[0]].tolist() == [9, 8, 7, 6, 5]


def test_renamed_row_id_does_not_collide_with_an_existing_column() -> None:
    out = normalize_table(pd.DataFrame([[1, 2]], columns=[ROW_ID, f"{ROW_ID}_original"]))
    assert len(set(out.columns)) == 2 and ROW_ID not in out.columns


def test_names_differing_only_in_case_can_be_written_to_sqlite(tmp_path: Path) -> None:
    # sqlite column names are case-insensitive: "Price" and "price" are one column to it.
    out = normalize_table(pd.DataFrame([[1, 2]], columns=["Price", "price"]))
    assert len({c.lower() for c in out.columns}) == 2
    back = _round_trip(out, "sqlite", tmp_path)
    assert canonical_rows(back) == canonical_rows(out)


def test_source_row_id_in_another_case_does_not_clash_with_ours(tmp_path: Path) -> None:
    out = normalize_table(_frame(ROW_ID=[9, 8, 7, 6, 5]))
    val = _with_row_id(out)  # what postprocess.package does to every val file
    back = _round_trip(val, "sqlite", tmp_path)
    assert canonical_rows(back) == canonical_rows(val)


# ---------------------------------------------------------------- values


def test_bools_become_zero_one_ints() -> None:
    out = normalize_table(_frame(flag=[True, False, True, True, False]))
    assert out["flag"].dtype == "int64"
    assert out["flag"].tolist() == [1, 0, 1, 1, 0]


def test_object_bools_with_missing_become_zero_one_with_missing() -> None:
    out = normalize_table(_frame(flag=pd.Series([True, None, False, True, None], dtype="object")))
    assert pd.api.types.is_numeric_dtype(out["flag"])
    assert out["flag"].isna().tolist() == [False, True, False, False, True]
    assert out["flag"].dropna().tolist() == [1, 0, 1]


def test_nullable_boolean_dtype_with_missing_becomes_zero_one_with_missing() -> None:
    out = normalize_table(_frame(flag=pd.array([True, None, False, True, None], dtype="boolean")))
    assert out["flag"].isna().tolist() == [False, True, False, False, True]
    assert out["flag"].dropna().tolist() == [1, 0, 1]


@pytest.mark.parametrize("spelling", ["", "   "])
def test_empty_strings_become_missing(spelling: str) -> None:
    out = normalize_table(_frame(b=["p", spelling, "r", "s", "t"]))
    assert out["b"].isna().tolist() == [False, True, False, False, False]


@pytest.mark.parametrize("spelling", ["NA", "null", "N/A", "NaN", "None", "NULL", "#N/A", "<NA>"])
@pytest.mark.parametrize("file_type", FORMATS)
def test_a_category_level_spelled_like_missing_survives_every_format(spelling: str, file_type: str,
                                                                     tmp_path: Path) -> None:
    # DARE-bench reads task CSVs with only "" as missing, so the level `None` is a level
    out = normalize_table(_frame(b=["p", spelling, "r", spelling, "t"]))
    assert out["b"].tolist() == ["p", spelling, "r", spelling, "t"]
    assert _round_trip(out, file_type, tmp_path)["b"].tolist() == ["p", spelling, "r", spelling, "t"]


def test_surrounding_whitespace_is_stripped() -> None:
    out = normalize_table(_frame(b=[" p", "q ", " r ", "s", "t"]))
    assert out["b"].tolist() == ["p", "q", "r", "s", "t"]


def test_integer_strings_become_int64() -> None:
    out = normalize_table(_frame(b=["1", "2", " 3", "40", "-5"]))
    assert out["b"].dtype == "int64"
    assert out["b"].tolist() == [1, 2, 3, 40, -5]


def test_numeric_strings_with_missing_become_float() -> None:
    out = normalize_table(_frame(b=["1.5", "2", "NA", None, "1e3"]))
    assert out["b"].dtype == "float64"
    assert out["b"].tolist()[:2] == [1.5, 2.0] and out["b"].tolist()[4] == 1000.0
    assert out["b"].isna().tolist() == [False, False, True, True, False]


def test_mixed_strings_stay_strings() -> None:
    out = normalize_table(_frame(b=["1", "2", "x", "4", "5"]))
    assert out["b"].tolist() == ["1", "2", "x", "4", "5"]


def test_categorical_dtype_becomes_plain_strings() -> None:
    out = normalize_table(_frame(b=pd.Categorical(["lo", "hi", None, "lo", "mid"])))
    assert not isinstance(out["b"].dtype, pd.CategoricalDtype)
    assert out["b"].isna().tolist() == [False, False, True, False, False]
    assert all(type(v) is str for v in out["b"].dropna())


def test_integer_categorical_becomes_numbers() -> None:
    out = normalize_table(_frame(b=pd.Categorical([3, 1, 2, 3, 1])))
    assert out["b"].tolist() == [3, 1, 2, 3, 1]


def test_complete_integral_floats_become_int64_and_incomplete_stay_float() -> None:
    out = normalize_table(_frame(a=[1.0, 2.0, 3.0, 4.0, 5.0], b=[1.0, None, 3.0, 4.0, 5.0]))
    assert out["a"].dtype == "int64" and out["b"].dtype == "float64"


def test_input_frame_is_not_mutated() -> None:
    raw = _nasty()
    before = raw.copy(deep=True)
    out = normalize_table(raw)
    pd.testing.assert_frame_equal(raw, before)
    assert out is not raw


def test_output_has_a_fresh_range_index() -> None:
    raw = _frame().set_axis([10, 3, 7, 1, 99])
    assert list(normalize_table(raw).index) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("file_type", FORMATS)
def test_normalized_nasty_frame_reads_back_identically(file_type: str, tmp_path: Path) -> None:
    table = normalize_table(_nasty())
    back = _round_trip(table, file_type, tmp_path)
    assert list(back.columns) == list(table.columns)
    assert canonical_rows(back) == canonical_rows(table)


@pytest.mark.parametrize("file_type", FORMATS)
def test_extreme_floats_read_back_bit_for_bit(file_type: str, tmp_path: Path) -> None:
    values = [0.1, 1e-300, 5e-324, 123456789.123456789, 1.7976931348623157e308, -2.5e-7, 1 / 3]
    table = normalize_table(pd.DataFrame({"f": values}))
    back = _round_trip(table, file_type, tmp_path)
    assert back["f"].tolist() == values


@pytest.mark.parametrize("file_type", FORMATS)
@pytest.mark.parametrize("values", [["True", "False", "True", "True", "False"],
                                    ["TRUE", "FALSE", "TRUE", "TRUE", "FALSE"]], ids=["True", "TRUE"])
def test_boolean_words_read_back_identically(values: list[str], file_type: str, tmp_path: Path,
                                             request: pytest.FixtureRequest) -> None:
    table = normalize_table(_frame(b=values))
    back = _round_trip(table, file_type, tmp_path)
    assert canonical_rows(back) == canonical_rows(table)


@pytest.mark.parametrize("file_type", FORMATS)
def test_carriage_return_inside_a_value_reads_back_identically(file_type: str, tmp_path: Path,
                                                               request: pytest.FixtureRequest) -> None:
    table = normalize_table(_frame(b=["p", "old\rmac", "r", "s", "t"]))
    back = _round_trip(table, file_type, tmp_path)
    assert canonical_rows(back) == canonical_rows(table)


# ---------------------------------------------------------------- adversarial: control characters in names


def test_a_line_break_in_a_column_name_becomes_a_space() -> None:
    hostile = "dose\n__import__('os').system('touch MARKER')\n#"
    assert unique_column_names([hostile, "a\r\nb", "tab\there"]) == [
        "dose __import__('os').system('touch MARKER') #", "a b", "tab here"]


@pytest.mark.parametrize("name", ["nul\x00name", "esc\x1b[2Jname", "del\x7f", "c1\x9bname"])
def test_a_column_name_with_another_control_character_rejects_the_dataset(name: str) -> None:
    with pytest.raises(DatasetRejected, match="holds a control character") as caught:
        normalize_table(pd.DataFrame({name: [1, 2], "b": [3, 4]}))
    assert caught.value.reason.isprintable()  # a one-line reason, the name escaped
