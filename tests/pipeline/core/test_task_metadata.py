"""all_metadata.json has one typed model and one writer: the writer refuses unknown keys and coerced values,
writes only the keys a task sets, and the schema made from the model dispatches on problem_type."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from pipeline.core import names
from pipeline.core.records import DatasetRejected
from pipeline.core.task_metadata import (DataInfo, MetaData, Provenance, TabularQuestion, TaskMetadata,
                                         TimeSeriesQuestion, all_metadata_json_schema, as_json,
                                         rejected_when_invalid, write_all_metadata)
from tests.factories import build_record


def _tabular(**overrides) -> TabularQuestion:
    fields = dict(
        target=["y"], target_candidates=["y"], related_features=["x"], not_filtered_related_features=["x"],
        selected_features=["x"], problem_type="classification", expected_ranges={"x": [0, 1.5]},
        column_type_inference={"x": "numerical"}, numerical_features=["x"], categorical_features=[],
        model_type="GaussianNB", imputer_type="mean", random_state=0, train_test_ratio=0.8, save_file_type="csv",
        needed_files_v1=["train_v1.csv"], needed_files_v2=["train_v2.csv"],
        train_err_split_save_file="./t/source/train_v1.csv", train_no_err_save_file="./t/source/a.csv",
        val_no_err_save_file="./t/source/val_v1.csv", train_v2_save_file="./t/source/train_v2.csv",
        val_v2_save_file="./t/source/val_v2.csv", ground_truth_file="./t/verify/ground_truth.csv",
        simulated_pred_file="./t/verify/simulated_pred_local.csv", output_file="./t/prediction.csv")
    return TabularQuestion(**fields | overrides)


def test_the_writer_writes_exactly_the_keys_set_with_their_values(tmp_path) -> None:
    record = build_record()
    meta = TaskMetadata(question=_tabular(), data_info=DataInfo.of(record), meta_data=MetaData.of(record, "doc"),
                        daregen=Provenance(ref=record.ref, seed=0, code_version="0", noise_rows=3))
    written = write_all_metadata(tmp_path / names.ALL_METADATA, meta)
    assert json.loads((tmp_path / names.ALL_METADATA).read_text()) == written
    assert "join_path" not in written["question"] and written["question"]["expected_ranges"] == {"x": [0, 1.5]}
    assert set(written["daregen"]) == {"ref", "seed", "code_version", "noise_rows"}  # TS keys never set: not written
    assert written["data_info"]["licenseName"] == record.license and written["meta_data"]["description"] == "doc"
    assert isinstance(written["question"]["expected_ranges"]["x"][0], int)  # no int -> float coercion


@pytest.mark.parametrize("bad", [{"modle_type": "GaussianNB"}, {"random_state": "0"}, {"target": []},
                                 {"train_test_ratio": 1.0}, {"output_file": "/abs/prediction.csv"},
                                 {"needed_files_v1": ["../verify/ground_truth.csv"]}, {"model_type": "XGBoost"}])
def test_the_model_refuses_what_the_schema_refuses(bad) -> None:
    with pytest.raises(ValidationError):
        _tabular(**bad)
    with pytest.raises(DatasetRejected, match="all_metadata.json violates the schema at /"):
        with rejected_when_invalid():
            _tabular(**bad)


def test_only_all_metadata_json_is_written_by_the_writer(tmp_path) -> None:
    record = build_record()
    meta = TaskMetadata(question=_tabular(), data_info=DataInfo.of(record), meta_data=MetaData.of(record, "d"))
    with pytest.raises(ValueError, match="all_metadata"):
        write_all_metadata(tmp_path / "other.json", meta)


def test_the_schema_checks_each_kind_by_its_problem_type() -> None:
    validator = Draft202012Validator(all_metadata_json_schema())
    record = build_record()
    tabular = as_json(TaskMetadata(question=_tabular(), data_info=DataInfo.of(record),
                                   meta_data=MetaData.of(record, "d")))
    assert list(validator.iter_errors(tabular)) == []
    # a classifier name on a regression task is caught at its own path, not as "no branch matched"
    wrong = json.loads(json.dumps(tabular))
    wrong["question"]["problem_type"] = "regression"
    [error] = validator.iter_errors(wrong)
    assert list(error.absolute_path) == ["question", "model_type"]
    # the same question labelled time series must carry the time-series keys
    ts = json.loads(json.dumps(tabular))
    ts["question"]["problem_type"] = names.TIME_SERIES_PROBLEM
    missing = {e.message.split("'")[1] for e in validator.iter_errors(ts) if e.validator == "required"}
    required = {n for n, f in TimeSeriesQuestion.model_fields.items() if f.is_required()} - set(tabular["question"])
    assert missing == required and "prediction_starting_time" in missing
