"""The published all_metadata.json schema accepts DARE-bench's own tasks (tabular and time series) and
daregen's, names the path of every violation, and a build can carry a byte-identical copy in its tree."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from finalize.schema import ALL_METADATA_SCHEMA, SCHEMA_DIR, check_metadata_schema, copy_schema_into, schema_path
from pipeline.core import names
from pipeline.core.jsonio import read_json
from pipeline.core.task_metadata import render_schema
from tests.factories import DARE_EXAMPLES, NO_DARE_EXAMPLES, build_checked_task

EXAMPLES = sorted(DARE_EXAMPLES.glob(f"*/{names.VERIFY_DIR}/{names.ALL_METADATA}")) if DARE_EXAMPLES.exists() else []


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> dict:
    return read_json(build_checked_task(tmp_path_factory.mktemp("schema"), "csv") / names.VERIFY_DIR / names.ALL_METADATA)


def test_the_committed_schema_is_the_one_generated_from_the_model() -> None:
    assert schema_path().read_text(encoding="utf-8") == render_schema(), (
        "schemas/all_metadata.schema.json differs from pipeline.core.task_metadata: run `python -m finalize.schema`")


def test_the_schema_is_draft_2020_12_and_found_from_the_package() -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.skipif(len(EXAMPLES) < 4, reason=NO_DARE_EXAMPLES)
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parents[1].name)
def test_published_dare_tasks_are_valid(path: Path) -> None:
    assert check_metadata_schema(path.parents[1].name, read_json(path)) == []


def test_our_task_is_valid_and_records_mm_baselines(ours: dict) -> None:
    assert check_metadata_schema("ours", ours) == []
    baselines = ours["daregen"]["mm_baselines"]
    assert set(baselines) >= {f"trivial_{m}" for m in ("macro_f1", "r2")} & set(baselines)
    assert baselines and all(isinstance(v, float) and 0 <= v <= 1 for v in baselines.values())


def test_the_daregen_block_is_optional_but_checked_when_present(ours: dict) -> None:
    foreign = {k: v for k, v in ours.items() if k != "daregen"}
    assert check_metadata_schema("t", foreign) == []
    broken = copy.deepcopy(ours)
    broken["daregen"]["seed"] = "zero"
    broken["daregen"]["mm_baselines"] = {"reference_r2": 1.7}
    messages = [p.message for p in check_metadata_schema("t", broken)]
    assert any("/daregen/seed: 'zero' is not of type 'integer'" in m for m in messages), messages
    assert any("/daregen/mm_baselines/reference_r2" in m for m in messages), messages


@pytest.mark.parametrize("edit, expected", [
    (lambda m: m["question"].pop("target"), "at /question: 'target' is a required property"),
    (lambda m: m["question"].update(model_type="XGBoost"), "at /question/model_type: 'XGBoost' is not one of"),
    (lambda m: m["question"].update(train_test_ratio=1.5), "at /question/train_test_ratio: 1.5"),
    (lambda m: m["question"].update(needed_files_v1=["../verify/ground_truth.csv"]), "/question/needed_files_v1/0"),
    (lambda m: m["question"].update(simulated_pred_file="/abs/path.csv"), "/question/simulated_pred_file"),
    (lambda m: m.pop("meta_data"), "at /: 'meta_data' is a required property"),
])
def test_each_violation_names_its_path(ours: dict, edit, expected: str) -> None:
    broken = copy.deepcopy(ours)
    edit(broken)
    problems = check_metadata_schema("some_task", broken)
    assert problems and all(p.severity == "error" and p.where == "some_task" for p in problems)
    assert any(expected in p.message for p in problems), [p.message for p in problems]


@pytest.mark.skipif(len(EXAMPLES) < 4, reason=NO_DARE_EXAMPLES)
def test_a_time_series_task_needs_its_time_keys() -> None:
    ts = next(read_json(p) for p in EXAMPLES if p.parents[1].name.endswith("_ts"))
    del ts["question"]["prediction_starting_time"]
    ts["question"]["is_resampled"] = "no"
    messages = [p.message for p in check_metadata_schema("ts", ts)]
    assert any("'prediction_starting_time' is a required property" in m for m in messages), messages
    assert any("/question/is_resampled: 'no' is not of type 'boolean'" in m for m in messages), messages


def test_a_tree_carries_a_byte_identical_copy(tmp_path: Path) -> None:
    dest = copy_schema_into(tmp_path / "tree")
    assert dest == tmp_path / "tree" / SCHEMA_DIR / ALL_METADATA_SCHEMA
    assert dest.read_bytes() == schema_path().read_bytes()
