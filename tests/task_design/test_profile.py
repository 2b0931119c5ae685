"""profile_table gives every column the kind, missing and distinct counts, exact extremes and sorted
categories the designer relies on, whatever the table's width, length or column names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sourcing.normalize import normalize_table
from task_design.profile import profile_table

N = 50


def _table(**overrides) -> pd.DataFrame:
    """A normalised N-row table with one column of each kind; overrides add or replace columns."""
    rng = np.random.default_rng(0)
    columns = {
        "height": rng.normal(170, 10, size=N),
        "children": rng.integers(0, 5, size=N),
        "sequence": np.arange(1, N + 1),
        "shuffled_sequence": rng.permutation(np.arange(1001, 1001 + N)),
        "name": [f"person {i}" for i in range(N)],
        "colour": rng.choice(["red", "green", "blue"], size=N),
        "nothing": [None] * N,
        "no_numbers": [np.nan] * N,
        "same_word": ["x"] * N,
        "same_number": [3] * N,
        "one_value_or_missing": [1.5 if i % 5 else None for i in range(N)],
        "day": [f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(N)],
        "timestamp": [f"2021-03-{1 + i % 28:02d}T{i % 24:02d}:15:00" for i in range(N)],
        "review": [f"review number {i}: the product arrived late but worked as described" for i in range(N)],
    }
    columns.update(overrides)
    return normalize_table(pd.DataFrame(columns))


@pytest.fixture(scope="module")
def profile():
    return profile_table(_table())


@pytest.mark.parametrize("column, kind", [
    ("height", "numerical"),
    ("children", "numerical"),
    ("sequence", "id"),
    ("shuffled_sequence", "id"),
    ("name", "id"),
    ("colour", "categorical"),
    ("nothing", "constant"),
    ("no_numbers", "constant"),
    ("same_word", "constant"),
    ("same_number", "constant"),
    ("one_value_or_missing", "constant"),
    ("day", "datetime"),
    ("timestamp", "datetime"),
    ("review", "text"),
])
def test_kind(profile, column: str, kind: str) -> None:
    assert profile.column(column).kind == kind


def test_columns_keep_table_order_and_row_count(profile) -> None:
    assert profile.names == list(_table().columns)
    assert profile.n_rows == N


def test_a_few_repeated_integers_are_not_an_id() -> None:
    p = profile_table(_table(level=np.arange(N) % 7 + 1))
    assert p.column("level").kind == "numerical"


def test_missing_and_distinct_counts_are_exact() -> None:
    values = [None if i % 3 == 0 else f"v{i % 4}" for i in range(N)]
    numbers = [np.nan if i % 4 == 0 else float(i % 6) for i in range(N)]
    p = profile_table(_table(tag=values, score=numbers))
    tag, score = p.column("tag"), p.column("score")
    assert tag.n_missing == sum(v is None for v in values)
    assert tag.n_unique == len({v for v in values if v is not None})
    assert score.n_missing == sum(v != v for v in numbers)
    assert score.n_unique == len({v for v in numbers if v == v})
    assert p.column("nothing").n_missing == N and p.column("nothing").n_unique == 0
    assert p.missing_frac("tag") == tag.n_missing / N


def test_float_extremes_are_exact() -> None:
    values = [0.1, 1e-300, 123456789.123456789, -2.5e-7, np.nan] * (N // 5)
    p = profile_table(_table(f=values))
    col = p.column("f")
    assert col.min == -2.5e-7 and col.max == 123456789.123456789
    assert col.n_missing == N // 5 and not col.is_integer


def test_integer_extremes_are_exact_ints() -> None:
    values = [(-1) ** i * (i * 1_000_003) for i in range(N)]
    col = profile_table(_table(k=values)).column("k")
    assert col.is_integer
    assert (col.min, col.max) == (min(values), max(values))
    assert type(col.min) is int and type(col.max) is int


def test_integer_extremes_beyond_float_precision_are_exact() -> None:
    values = [2**53 + 1 if i % 2 else 5 * i for i in range(N)]
    col = profile_table(_table(k=np.array(values, dtype="int64"))).column("k")
    assert (col.min, col.max) == (min(values), max(values))


def test_categories_are_sorted_distinct_non_missing_values() -> None:
    values = ["b", "B", "ä", "a", None, "b", "a c", "a"] * 6 + ["b", "a"]
    col = profile_table(_table(level=values)).column("level")
    assert col.kind == "categorical"
    assert col.categories == tuple(sorted({v for v in values if v is not None}))


def test_high_cardinality_categories_are_not_recorded() -> None:
    n = 2000
    levels = [f"level {i % 400}" for i in range(n)]
    col = profile_table(pd.DataFrame({"level": levels})).column("level")
    assert col.kind == "categorical" and col.n_unique == 400 and col.categories is None


def test_numeric_columns_record_no_categories_and_strings_no_extremes(profile) -> None:
    assert profile.column("height").categories is None
    assert profile.column("colour").min is None and profile.column("colour").max is None


def test_top_share_is_the_most_frequent_values_share() -> None:
    values = ["a"] * 30 + ["b"] * 15 + [None] * 5
    col = profile_table(_table(level=values)).column("level")
    assert col.top_share == pytest.approx(30 / 45)


@pytest.mark.parametrize("name", ["count", "counts", "value", "n", "len"])
def test_columns_named_like_polars_outputs_are_profiled(name: str) -> None:
    # polars' value_counts names its output column "count" (R's InsectSprays has a "count" column).
    p = profile_table(_table(**{name: np.arange(N) % 7}))
    assert p.column(name).kind == "numerical" and p.column(name).top_share > 0


def test_dates_that_do_not_parse_are_not_datetime() -> None:
    values = ["2020-13-45", "2020-01-01"] * (N // 2)
    assert profile_table(_table(when=values)).column("when").kind != "datetime"


def test_empty_table_profiles_without_error() -> None:
    p = profile_table(pd.DataFrame({"a": pd.Series([], dtype="float64"), "b": pd.Series([], dtype="object")}))
    assert p.n_rows == 0 and p.names == ["a", "b"]
    assert {c.kind for c in p.columns} == {"constant"}


def test_profile_does_not_mutate_its_input() -> None:
    table = _table()
    before = table.copy(deep=True)
    profile_table(table)
    pd.testing.assert_frame_equal(table, before)


def test_wide_table_profiles_every_column() -> None:
    rng = np.random.default_rng(1)
    n = 60
    columns = {}
    for i in range(200):
        if i % 4 == 0:
            columns[f"num {i}"] = rng.normal(size=n)
        elif i % 4 == 1:
            columns[f"cat {i}"] = rng.choice(["u", "v", "w"], size=n)
        elif i % 4 == 2:
            columns[f"int {i}"] = rng.integers(-3, 3, size=n)
        else:
            columns[f"gap {i}"] = [None] * n
    p = profile_table(normalize_table(pd.DataFrame(columns)))
    assert p.names == list(columns)
    expected = {"num": "numerical", "cat": "categorical", "int": "numerical", "gap": "constant"}
    assert all(c.kind == expected[c.name.split()[0]] for c in p.columns)
    assert all(c.n_missing == n for c in p.columns if c.name.startswith("gap"))


def test_long_table_profiles_exactly() -> None:
    rng = np.random.default_rng(2)
    n = 200_000
    values = rng.normal(size=n)
    values[::7] = np.nan
    ints = rng.integers(-50, 50, size=n)
    table = pd.DataFrame({
        "value": values,
        "small_int": ints,
        "group": rng.choice(["a", "b", "c"], size=n).astype(object),
        "record": np.arange(1, n + 1),
    })
    p = profile_table(table)
    assert p.n_rows == n
    value = p.column("value")
    assert value.kind == "numerical" and value.n_missing == int(np.isnan(values).sum())
    assert value.min == np.nanmin(values) and value.max == np.nanmax(values)
    small = p.column("small_int")
    assert (small.min, small.max, small.n_unique) == (int(ints.min()), int(ints.max()), len(set(ints.tolist())))
    assert p.column("group").categories == ("a", "b", "c")
    assert p.column("record").kind == "id" and p.column("record").n_unique == n


def test_whole_numbers_with_a_missing_value_are_integers() -> None:
    # an R 0/1 column with NA reaches pandas as float64; it is still a 0/1 column (a class candidate)
    prof = profile_table(pd.DataFrame({"overdrawn": [0.0, 1.0, np.nan, 1.0, 0.0],
                                       "dose": [0.5, 1.0, np.nan, 2.0, 4.0],
                                       "weight": [1.0, 2.0, 3.0, 4.0, 5.0]}))
    cols = {c.name: c for c in prof.columns}
    assert cols["overdrawn"].is_integer and (cols["overdrawn"].min, cols["overdrawn"].max) == (0, 1)
    assert not cols["dose"].is_integer  # not whole
    assert not cols["weight"].is_integer  # whole floats with no missing value stay a measurement
