"""build_package splits the rows with a known target once into train and val, keeps the target out of every val
file, gives val_v1, val_v2 and the ground truth the same row ids 1..n, and is a function of its seed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from finalize.checks import canonical_rows
from pipeline.core import names
from pipeline.core.if_workflow import filter_by_expected_ranges
from pipeline.core.records import TaskPackage, TaskSpec
from pipeline.core.seeding import rng_for
from finalize.layout import write_data_files
from postprocess.formats import read_frame
from postprocess.package import build_package, split_columns_into_tables
from task_design.config import DesignConfig
from tests.factories import REF, build_record, build_table, spec_where

N = 200
VAL_STEMS = (names.VAL_V1, names.VAL_V2)


def _package(table: pd.DataFrame, spec: TaskSpec, seed: int = 0) -> TaskPackage:
    return build_package(build_record(), spec, table, rng_for(seed, REF, "postprocess"))


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return build_table(n=N, label=lambda n: np.where(np.arange(n) % 9 == 0, None,
                                                     np.random.default_rng(3).choice(["yes", "no", "maybe"], n)))


@pytest.fixture(scope="module")
def class_spec(table) -> TaskSpec:
    return spec_where(table, lambda s: s.target == ("label",), config=DesignConfig(file_types=("sqlite",)))


@pytest.fixture(scope="module")
def reg_spec(table) -> TaskSpec:
    return spec_where(table, lambda s: s.problem_type == "regression")


@pytest.fixture(scope="module", params=["classification", "regression"])
def spec(request, class_spec, reg_spec) -> TaskSpec:
    return class_spec if request.param == "classification" else reg_spec


@pytest.fixture(scope="module")
def package(table, spec) -> TaskPackage:
    return _package(table, spec)


def _analysis_rows(table: pd.DataFrame, spec: TaskSpec) -> pd.DataFrame:
    return table[table[spec.target[0]].notna()]


def test_val_files_have_no_target(package) -> None:
    target = package.spec.target[0]
    for stem in VAL_STEMS:
        assert target not in package.frames[stem].columns


def test_val_and_ground_truth_row_ids_are_one_to_n_and_equal(package) -> None:
    n_val = len(package.ground_truth)
    expected = list(range(1, n_val + 1))
    assert n_val > 0
    for frame in (package.frames[names.VAL_V1], package.frames[names.VAL_V2], package.ground_truth):
        assert frame[names.ROW_ID].tolist() == expected
        assert frame.columns[0] == names.ROW_ID


def test_ground_truth_is_row_id_plus_a_complete_target(package) -> None:
    target = package.spec.target[0]
    assert list(package.ground_truth.columns) == [names.ROW_ID, target]
    assert package.ground_truth[target].notna().all()


def test_v1_columns_follow_the_spec(package) -> None:
    spec = package.spec
    ranged = list(spec.not_filtered_related_features)
    assert list(package.frames[names.TRAIN_V1].columns) == [spec.target[0]] + ranged
    assert list(package.frames[names.TRAIN_V1_NO_ERR].columns) == [spec.target[0]] + ranged
    assert list(package.frames[names.VAL_V1].columns) == [names.ROW_ID] + ranged
    assert names.ROW_ID not in package.frames[names.TRAIN_V1].columns


def test_v2_columns_are_all_original_columns(table, package) -> None:
    target = package.spec.target[0]
    assert list(package.frames[names.TRAIN_V2].columns) == list(table.columns)
    assert list(package.frames[names.VAL_V2].columns) == [names.ROW_ID] + [c for c in table.columns if c != target]


def test_train_and_val_partition_the_rows_with_a_known_target(table, package) -> None:
    spec = package.spec
    target = spec.target[0]
    val = package.frames[names.VAL_V2].merge(package.ground_truth, on=names.ROW_ID)[list(table.columns)]
    both = pd.concat([package.frames[names.TRAIN_V2], val], ignore_index=True)
    assert canonical_rows(both) == canonical_rows(_analysis_rows(table, spec))
    assert len(package.frames[names.TRAIN_V2]) == int(np.floor(spec.train_test_ratio * len(both)))
    assert package.frames[names.TRAIN_V2][target].notna().all()


def test_val_v1_is_val_v2_restricted_to_the_ranged_features(package) -> None:
    cols = [names.ROW_ID] + list(package.spec.not_filtered_related_features)
    pd.testing.assert_frame_equal(package.frames[names.VAL_V1], package.frames[names.VAL_V2][cols])


def test_clean_v1_rows_are_the_v2_training_rows(package) -> None:
    clean = package.frames[names.TRAIN_V1_NO_ERR]
    assert canonical_rows(clean) == canonical_rows(package.frames[names.TRAIN_V2][list(clean.columns)])


def test_train_v1_is_the_clean_rows_plus_a_fifth_noise(package) -> None:
    spec = package.spec
    clean, noisy = package.frames[names.TRAIN_V1_NO_ERR], package.frames[names.TRAIN_V1]
    assert package.n_noise_rows == len(noisy) - len(clean) == max(1, round(spec.noise.fraction * len(clean)))
    filtered = filter_by_expected_ranges(noisy, spec.expected_ranges, spec.column_type_inference)
    assert canonical_rows(filtered) == canonical_rows(clean)


def test_split_tables_each_have_row_id_and_cover_every_column_once(package) -> None:
    train_v1 = package.frames[names.TRAIN_V1]
    tables = package.train_v1_tables
    assert 1 <= len(tables) <= package.spec.n_split_tables
    spread = []
    for t in tables:
        assert t.columns[0] == names.ROW_ID
        assert t[names.ROW_ID].tolist() == list(range(1, len(train_v1) + 1))
        assert len(t.columns) >= 2
        spread += [c for c in t.columns if c != names.ROW_ID]
    assert sorted(spread) == sorted(train_v1.columns) and len(spread) == len(set(spread))


def test_split_tables_join_back_to_train_v1(package) -> None:
    train_v1 = package.frames[names.TRAIN_V1]
    joined = package.train_v1_tables[0]
    for t in package.train_v1_tables[1:]:
        joined = joined.merge(t, on=names.ROW_ID)
    pd.testing.assert_frame_equal(joined.drop(columns=[names.ROW_ID])[list(train_v1.columns)], train_v1)


@pytest.mark.parametrize("n_tables", [1, 2, 4, 50])
def test_split_columns_into_tables_caps_at_one_column_per_table(n_tables: int) -> None:
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4], "c": [5, 6]})
    tables = split_columns_into_tables(df, n_tables, np.random.default_rng(0))
    assert len(tables) == min(n_tables, 3)
    assert sorted(c for t in tables for c in t.columns if c != names.ROW_ID) == ["a", "b", "c"]


def test_stratified_split_keeps_every_class_in_train(table, class_spec) -> None:
    target = class_spec.target[0]
    classes = set(_analysis_rows(table, class_spec)[target])
    for seed in range(10):
        pkg = _package(table, class_spec, seed=seed)
        assert set(pkg.frames[names.TRAIN_V2][target]) == classes
        assert set(pkg.frames[names.TRAIN_V1_NO_ERR][target]) == classes


def test_a_rare_class_stays_in_train() -> None:
    # five rows is the smallest class the designer accepts (DesignConfig.min_class_count)
    labels = np.array(["common"] * (N - 10) + ["rare"] * 5 + ["other"] * 5, dtype=object)
    table = build_table(n=N, label=np.random.default_rng(1).permutation(labels))
    spec = spec_where(table, lambda s: s.target == ("label",))
    for seed in range(10):
        pkg = _package(table, spec, seed=seed)
        assert {"rare", "other"} <= set(pkg.frames[names.TRAIN_V2]["label"])


def test_v2_files_drop_the_leaks() -> None:
    table = build_table(n=N)
    table["label_copy"] = table["label"].map({"yes": "Y", "no": "N"})
    spec = spec_where(table, lambda s: s.target == ("label",))
    assert spec.v2_dropped_columns == ("label_copy",)
    pkg = _package(table, spec)
    for stem in (names.TRAIN_V2, names.VAL_V2):
        assert "label_copy" not in pkg.frames[stem].columns
    assert "label_copy" not in pkg.frames[names.TRAIN_V1].columns
    assert "label_copy" not in pkg.frames[names.VAL_V1].columns


def test_max_rows_caps_the_analysis_rows() -> None:
    table = build_table(n=N)
    spec = spec_where(table, lambda s: True, config=DesignConfig(max_rows=150))  # 150: above the MM floor
    pkg = _package(table, spec)
    assert len(pkg.frames[names.TRAIN_V2]) + len(pkg.ground_truth) == 150


def test_same_seed_gives_identical_frames(table, spec) -> None:
    a, b = _package(table, spec, seed=4), _package(table, spec, seed=4)
    for stem in a.frames:
        pd.testing.assert_frame_equal(a.frames[stem], b.frames[stem])
    pd.testing.assert_frame_equal(a.ground_truth, b.ground_truth)
    assert len(a.train_v1_tables) == len(b.train_v1_tables)
    for x, y in zip(a.train_v1_tables, b.train_v1_tables):
        pd.testing.assert_frame_equal(x, y)


def test_another_seed_gives_another_split(table, spec) -> None:
    a, b = _package(table, spec, seed=4), _package(table, spec, seed=5)
    assert not a.frames[names.VAL_V2].equals(b.frames[names.VAL_V2])


def test_build_package_does_not_mutate_the_table(table, spec) -> None:
    before = table.copy(deep=True)
    _package(table, spec)
    pd.testing.assert_frame_equal(table, before)


# ---------------------------------------------------------------- written files


def _write(pkg: TaskPackage, file_type: str, root: Path) -> dict[str, pd.DataFrame]:
    """Write every frame as finalize does and read it back as an agent would."""
    pkg = dataclasses.replace(pkg, spec=pkg.spec.model_copy(update={"save_file_type": file_type}))
    write_data_files(pkg, root)
    out = {}
    for stem in pkg.frames:
        path = root / names.data_file(stem, file_type)
        back = read_frame(path, file_type)
        out[stem] = back.drop(columns=[names.ROW_ID]) if stem == names.TRAIN_V1 and file_type == "sqlite" else back
    return out


@pytest.mark.parametrize("file_type", ["csv", "parquet", "sqlite"])
def test_every_frame_reads_back_with_the_same_rows(package, file_type: str, tmp_path: Path) -> None:
    for stem, back in _write(package, file_type, tmp_path).items():
        frame = package.frames[stem]
        assert sorted(back.columns) == sorted(frame.columns), stem
        assert canonical_rows(back[list(frame.columns)]) == canonical_rows(frame), stem


def _numeric_looking_levels() -> pd.DataFrame:
    """`tier` is categorical only because of one "x", in a row whose target is missing (so never in a file)."""
    rng = np.random.default_rng(5)
    tier = rng.choice(["1", "2", "3"], size=N).astype(object)
    tier[0] = "x"
    label = np.where(rng.normal(size=N) > 0, "yes", "no").astype(object)
    label[0] = None
    return build_table(n=N, tier=tier, label=label)  # not `code`: a name that is a key


def test_numeric_looking_categories_are_never_features() -> None:
    """A csv holding only the numeric-looking levels would read back as numbers in one file and
    strings in another, so such a column must not reach the IF files at all."""
    table = _numeric_looking_levels()
    spec = spec_where(table, lambda s: s.target == ("label",))
    assert "tier" not in spec.related_features
    assert spec.excluded_features["tier"] == "numeric-looking category labels"


def test_a_short_panels_validation_rows_are_its_last_time_points() -> None:
    # task_design.timeseries.ShortPanel: 20 firms over 10 years, validated on the later years, never on a
    # random draw of rows that have time in them. A row of unknown year is in neither part.
    from postprocess.split import split_by_time

    years = np.repeat(np.arange(1990, 2000), 20)
    table = build_table(n=200, year=years.astype(float)).assign(
        year=lambda f: f["year"].where(np.arange(200) != 7))
    spec = spec_where(table, lambda s: s.problem_type == "regression" and "year" not in s.target)
    spec = spec.model_copy(update={"split_time_column": "year", "train_test_ratio": 0.75})
    pkg = _package(table, spec)
    train, val = pkg.frames[names.TRAIN_V2], pkg.frames[names.VAL_V2]
    assert train["year"].max() < val["year"].min()
    # 0.75 of the 199 rows of known year lies between the cuts after 1996 (0.698) and 1997 (0.799): 1997 is nearer.
    assert (train["year"].max(), val["year"].min()) == (1997.0, 1998.0)
    known = _analysis_rows(table, spec)["year"].notna().sum()
    assert len(train) + len(val) == known
    # Dates order as dates, and a tie goes to the later cut.
    dates = pd.DataFrame({"t": ["2001-03-01", "2000-12-01", "2001-03-01", "2000-12-01"], "y": [1, 2, 3, 4]})
    early, late = split_by_time(dates, "t", 0.5)
    assert list(early["y"]) == [2, 4] and list(late["y"]) == [1, 3]
    with pytest.raises(Exception, match="no time"):
        split_by_time(dates.assign(t=["soon", "2000-12-01", "later", "2001-03-01"]), "t", 0.5)

