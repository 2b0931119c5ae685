"""Every injected noise row breaks at least one expected range, so filtering train_v1 by the ranges (keeping
missing values) gives back exactly the clean rows, and a planted row that breaks none fails the task check."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.checks import canonical_rows, check_tabular_task, errors
from pipeline.core import names
from pipeline.core.if_workflow import filter_by_expected_ranges
from pipeline.core.records import NoiseKind, NoiseSpec, TaskSpec
from pipeline.core.seeding import rng_for
from postprocess.formats import read_frame, write_frame
from postprocess.noise import NOISE_KINDS, inject_noise, inject_out_of_range_rows
from postprocess.package import build_package, split_columns_into_tables
from tests.factories import REF, build_record, build_spec, build_table, write_task_by_hand

SEEDS = range(30)
N = 40


def _clean(kind: str, n: int = N) -> pd.DataFrame:
    """Clean IF training rows: target `y` plus features of one kind (or all of them)."""
    rng = np.random.default_rng(0)
    features = {
        "int": {"age": rng.integers(18, 90, size=n), "flag": np.arange(n) % 2},
        "float": {"ratio": rng.uniform(-1, 1, size=n), "tiny": rng.uniform(1e-300, 3e-300, size=n),
                  "big": rng.uniform(1e15, 1e15 + 1, size=n)},
        "categorical": {"colour": rng.choice(["red", "green", "blue"], size=n).astype(object),
                        "code": rng.choice(["A1", "b 2", "ü"], size=n).astype(object)},
        "missing_heavy": {"gappy": np.where(np.arange(n) % 5 == 0, rng.normal(size=n), np.nan),
                          "gappy_cat": np.where(np.arange(n) % 4 == 0, "x", None).astype(object)},
    }
    chosen = {k: v for group in features.values() for k, v in group.items()} if kind == "mixed" else features[kind]
    return pd.DataFrame({"y": rng.choice(["yes", "no"], size=n).astype(object), **chosen})


def _spec(clean: pd.DataFrame, **overrides) -> TaskSpec:
    """A spec whose expected ranges are exactly the span of the clean features."""
    features = [c for c in clean.columns if c != "y"]
    kinds = {c: ("numerical" if pd.api.types.is_numeric_dtype(clean[c]) else "categorical") for c in clean.columns}
    ranges = {c: ([clean[c].min(), clean[c].max()] if kinds[c] == "numerical"
                  else sorted(clean[c].dropna().unique().tolist())) for c in features}
    numerical = [c for c in features if kinds[c] == "numerical"]
    categorical = [c for c in features if kinds[c] == "categorical"]
    fields = dict(
        ref=REF, slug="local_synthetic", designer="test", problem_type="classification", target=("y",),
        target_candidates=("y",), related_features=tuple(features), not_filtered_related_features=tuple(features),
        selected_features=tuple(numerical + categorical), numerical_features=tuple(numerical),
        categorical_features=tuple(categorical), column_type_inference=kinds, expected_ranges=ranges,
        model_type="LogisticRegression", imputer_type="mean", random_state=0, train_test_ratio=0.8,
        save_file_type="csv", n_split_tables=2,
    )
    fields.update(overrides)
    return TaskSpec(**fields)


def _violates(row: dict, spec: TaskSpec) -> bool:
    """An oracle independent of filter_by_expected_ranges: does a known value break a range?"""
    for col, allowed in spec.expected_ranges.items():
        v = row[col]
        if v is None or (isinstance(v, float) and np.isnan(v)):
            continue
        if spec.column_type_inference[col] == "numerical":
            if not allowed[0] <= v <= allowed[1]:
                return True
        elif str(v) not in {str(a) for a in allowed}:
            return True
    return False


def _n_noise(n_clean: int, fraction: float = 0.2) -> int:
    return max(1, int(round(fraction * n_clean)))


@pytest.mark.parametrize("kind", ["int", "float", "categorical", "missing_heavy", "mixed"])
def test_noise_rows_break_a_range_and_filtering_recovers_the_clean_rows(kind: str) -> None:
    clean = _clean(kind)
    spec = _spec(clean)
    before = clean.copy(deep=True)
    for seed in SEEDS:
        noisy = inject_out_of_range_rows(clean, spec, rng_for(seed, REF, "noise"))
        assert len(noisy) - len(clean) == _n_noise(len(clean))
        breaks = np.array([_violates(row, spec) for row in noisy.to_dict("records")])
        breaking, keeping = noisy[breaks], noisy[~breaks]
        assert len(breaking) == _n_noise(len(clean))
        assert canonical_rows(keeping) == canonical_rows(clean)
        filtered = filter_by_expected_ranges(noisy, spec.expected_ranges, spec.column_type_inference)
        assert canonical_rows(filtered) == canonical_rows(clean)
        # row for row, in order: order-sensitive models (MLP) fit on the filtered rows must see the
        # reference's rows in the reference's order
        pd.testing.assert_frame_equal(filtered.astype(object), clean.astype(object), check_dtype=False)
        assert not breaks[-_n_noise(len(clean)):].all()  # noise is interleaved, not appended
        assert list(noisy.columns) == list(clean.columns)
        for col in clean.columns:  # numbers keep their dtype; strings may be object or str
            if pd.api.types.is_numeric_dtype(clean[col]):
                assert noisy[col].dtype == clean[col].dtype, col
            else:
                assert not pd.api.types.is_numeric_dtype(noisy[col]), col
    pd.testing.assert_frame_equal(clean, before)


def test_integer_columns_stay_integer() -> None:
    clean = _clean("int")
    noisy = inject_out_of_range_rows(clean, _spec(clean), rng_for(0, REF, "noise"))
    assert noisy["age"].dtype == "int64" and noisy["flag"].dtype == "int64"


def test_string_dtype_categoricals_as_read_from_parquet() -> None:
    clean = _clean("categorical").astype({"colour": "str", "code": "str"})
    spec = _spec(clean)
    for seed in range(5):
        noisy = inject_out_of_range_rows(clean, spec, rng_for(seed, REF, "noise"))
        filtered = filter_by_expected_ranges(noisy, spec.expected_ranges, spec.column_type_inference)
        assert canonical_rows(filtered) == canonical_rows(clean)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100])
def test_noise_is_about_a_fifth_of_the_clean_rows_and_never_none(n: int) -> None:
    clean = _clean("mixed", n=n)
    noisy = inject_out_of_range_rows(clean, _spec(clean), rng_for(n, REF, "noise"))
    assert len(noisy) - n == _n_noise(n)


def test_noise_fraction_comes_from_the_spec() -> None:
    clean = _clean("float", n=100)
    noisy = inject_out_of_range_rows(clean, _spec(clean, noise=NoiseSpec(fraction=0.5)), rng_for(0, REF, "noise"))
    assert len(noisy) == 150


def test_single_ranged_feature() -> None:
    clean = _clean("int")[["y", "age"]]
    spec = _spec(clean)
    for seed in range(10):
        noisy = inject_out_of_range_rows(clean, spec, rng_for(seed, REF, "noise"))
        filtered = filter_by_expected_ranges(noisy, spec.expected_ranges, spec.column_type_inference)
        assert canonical_rows(filtered) == canonical_rows(clean)


def test_same_seed_same_noise() -> None:
    clean = _clean("mixed")
    spec = _spec(clean)
    a = inject_out_of_range_rows(clean, spec, rng_for(3, REF, "noise"))
    b = inject_out_of_range_rows(clean, spec, rng_for(3, REF, "noise"))
    pd.testing.assert_frame_equal(a, b)


def test_filter_keeps_rows_with_missing_values() -> None:
    df = pd.DataFrame({"a": [1.0, np.nan, 99.0], "c": [None, "x", "x"]})
    kept = filter_by_expected_ranges(df, {"a": [0, 10], "c": ["x"]}, {"a": "numerical", "c": "categorical"})
    assert canonical_rows(kept) == canonical_rows(df.iloc[:2])


# ---------------------------------------------------------------- adversarial: a noise row inside the ranges


def _in_range_row(clean: pd.DataFrame) -> pd.DataFrame:
    """A fake noise row: a clean row with each feature moved to another allowed value (still inside the ranges)."""
    row = clean.iloc[[0]].copy()
    for col in clean.columns:
        if col != "y":
            row[col] = clean[col].iloc[-1]
    return row


def test_a_noise_row_inside_the_ranges_survives_the_filter() -> None:
    clean = _clean("mixed")
    spec = _spec(clean)
    noisy = inject_out_of_range_rows(clean, spec, rng_for(0, REF, "noise"))
    planted = pd.concat([noisy, _in_range_row(clean)], ignore_index=True)
    filtered = filter_by_expected_ranges(planted, spec.expected_ranges, spec.column_type_inference)
    assert len(filtered) == len(clean) + 1
    assert canonical_rows(filtered) != canonical_rows(clean)


@pytest.fixture(scope="module")
def package():
    table = build_table(n=200)  # 200: above the 40-row MM validation floor
    spec = build_spec(table, seed=2)
    return build_package(build_record(), spec, table, rng_for(2, REF, "postprocess"))


@pytest.mark.parametrize("file_type", ["csv", "sqlite"])
def test_check_flags_a_noise_row_inside_the_ranges(package, file_type: str, tmp_path: Path) -> None:
    spec = package.spec.model_copy(update={"save_file_type": file_type})
    honest = dataclasses.replace(package, spec=spec)
    assert not errors(check_tabular_task(write_task_by_hand(honest, tmp_path / "honest")))

    train_v1 = package.frames[names.TRAIN_V1]
    planted = pd.concat([train_v1, _in_range_row(package.frames[names.TRAIN_V1_NO_ERR])], ignore_index=True)
    tables = split_columns_into_tables(planted, spec.n_split_tables, rng_for(0, REF, "split"))
    tampered = dataclasses.replace(honest, frames={**package.frames, names.TRAIN_V1: planted},
                                   train_v1_tables=tables)
    task_dir = write_task_by_hand(tampered, tmp_path / "tampered")
    found = errors(check_tabular_task(task_dir))
    assert any("expected_ranges" in p.message for p in found), found


def test_hand_written_train_v1_reads_back_with_the_planted_row(package, tmp_path: Path) -> None:
    # Guards the test above: the planted row really is in the file the check reads.
    train_v1 = package.frames[names.TRAIN_V1]
    planted = pd.concat([train_v1, _in_range_row(package.frames[names.TRAIN_V1_NO_ERR])], ignore_index=True)
    path = tmp_path / "train_v1.csv"
    write_frame(planted, path, "csv")
    assert len(read_frame(path, "csv")) == len(train_v1) + 1


# ---------------------------------------------------------------- noise as data: one registry, one rule


def test_every_noise_kind_of_the_spec_has_an_injector_and_inject_noise_dispatches_on_it() -> None:
    assert set(NOISE_KINDS) == set(NoiseKind.__args__)
    clean = _clean("mixed")
    spec = _spec(clean, noise=NoiseSpec(kind="out_of_range_rows", fraction=0.25))
    rng_a, rng_b = rng_for(4, REF, "noise"), rng_for(4, REF, "noise")
    pd.testing.assert_frame_equal(inject_noise(clean, spec, rng_a), inject_out_of_range_rows(clean, spec, rng_b))
    with pytest.raises(ValueError):
        NoiseSpec(kind="swapped_labels")
    with pytest.raises(ValueError):
        NoiseSpec(fraction=0.0)


def test_a_number_spelled_as_text_or_float_is_the_allowed_category_it_names() -> None:
    """3, 3.0 and "3" are one allowed value for the filter, whatever type a file format gave the cell."""
    df = pd.DataFrame({"c": pd.Series([3, 3.0, "3", " 3", "3.5", "x", None], dtype=object)})
    kept = filter_by_expected_ranges(df, {"c": [3, "x"]}, {"c": "categorical"})
    assert kept["c"].tolist() == [3, 3.0, "3", " 3", "x", None]


def test_noise_words_are_out_of_range_for_numeric_looking_levels() -> None:
    """Levels that read as numbers ("1", "2.5", "1e3"): every injected word is still dropped by the filter."""
    n = 60
    clean = pd.DataFrame({"y": ["a", "b"] * (n // 2), "level": pd.Series(["1", "2.5", "1e3"] * (n // 3), dtype=object)})
    spec = _spec(clean)
    assert spec.column_type_inference["level"] == "categorical"
    for seed in range(5):
        noisy = inject_out_of_range_rows(clean, spec, rng_for(seed, REF, "noise"))
        filtered = filter_by_expected_ranges(noisy, spec.expected_ranges, spec.column_type_inference)
        assert canonical_rows(filtered) == canonical_rows(clean)
