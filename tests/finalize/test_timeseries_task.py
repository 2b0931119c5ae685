"""A written `_ts` task matches the published layout, its CF truth is the executed reference, and it scores as
DARE-bench does."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from finalize.layout import BuildContext
from pipeline.review.score import score_prediction
from finalize.timeseries import check_ts_task, verify_ts_task, write_ts_task
from pipeline.core.seeding import rng_for
from postprocess.timeseries import build_ts_package
from sourcing.normalize import normalize_table
from task_design.profile import profile_table
from task_design.timeseries import design_ts
from tests.factories import NO_DARE_EXAMPLES, build_record


def _write(tmp_path, table: pd.DataFrame, target: str | None = None):
    table = normalize_table(table)
    rec = build_record(kind_hint="time_series", column_descriptions={"firm": "The firm."}, target_hint=target)
    spec = design_ts(rec, profile_table(table), table, rng_for(0, rec.ref, "design"))
    pkg = build_ts_package(rec, spec, table, rng_for(0, rec.ref, "postprocess"))
    entry = write_ts_task(pkg, tmp_path, BuildContext(seed=0, design_digest="d"))
    return tmp_path / spec.task_dir, entry


def _panel() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    # 70 years (the 40-point training floor) and a trend, so a forecaster beats the mean
    rows = [{"firm": f, "year": y, "capital": rng.normal(5, 1), "inv": rng.normal(50, 10) + y % 7 + (y - 1920)}
            for f in ("a", "b", "c") for y in range(1920, 1990)]
    return pd.DataFrame(rows)


def _events() -> pd.DataFrame:
    """Events, some days twice: pooled over each time point into a series, which needs its target documented
    (the source's hint), as a mean over rows of an undocumented column is no series."""
    rng = np.random.default_rng(1)
    days = sorted(f"{y}-{m:02d}-{d:02d}" for y in range(2006, 2014) for m in range(1, 13) for d in (3, 3, 19)
                  if not (m == 6 and y == 2013))
    return pd.DataFrame({"date": days, "price": rng.normal(10, 2, len(days)) + np.arange(len(days)) / 20})


@pytest.fixture(scope="module")
def panel_task(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("panel"), _panel(), "inv")


def test_layout_and_metadata(panel_task):
    task_dir, entry = panel_task
    files = sorted(p.relative_to(task_dir).as_posix() for p in task_dir.rglob("*") if p.is_file())
    assert files == ["source/metadata.txt", "source/train.csv", "source/val_v1.csv", "source/val_v2.csv",
                     "verify/all_metadata.json", "verify/ground_truth_v1.csv", "verify/ground_truth_v2.csv"]
    meta = json.loads((task_dir / "verify" / "all_metadata.json").read_text())
    q = meta["question"]
    assert q["problem_type"] == "time_series_analysis" and q["time_column"] == "year" and q["time_format"] == "%Y"
    assert q["imputer_type"] == "bfill_ffill" and q["model_type"] == "SARIMAX" and q["baselines"]
    assert q["val_v2_save_file"] == f"./{task_dir.name}/source/val_v2.csv"
    assert entry["task"] == "time_series_analysis" and entry["file_path"] == task_dir.name
    assert entry["needed_files_v2"] == ["train.csv", "val_v2.csv", "metadata.txt"]
    assert "`year`, `firm`" in entry["question_v2"] and "`inv`" in entry["question_v1"]
    assert check_ts_task(task_dir) == []
    assert verify_ts_task(task_dir, q) == []


def test_resampled_instruction_names_rule_aggregation_and_fill(tmp_path):
    task_dir, entry = _write(tmp_path, _events(), "price")
    q = json.loads((task_dir / "verify" / "all_metadata.json").read_text())["question"]
    assert q["is_resampled"] and q["resample_rule"] == "1M" and q["resample_aggregation"] == "mean"
    text = entry["question_v2"]
    assert "calendar month (pandas offset alias 'ME'" in text and "'1M'" not in text and "'mean'" in text and "backward filling and then forward filling" in text
    assert check_ts_task(task_dir) == []


def test_verify_catches_a_tampered_cf_truth(tmp_path):
    task_dir, _ = _write(tmp_path, _panel(), "inv")
    path = task_dir / "verify" / "ground_truth_v2.csv"
    gt = pd.read_csv(path)
    gt.loc[0, "inv"] += 1
    gt.to_csv(path, index=False)
    q = json.loads((task_dir / "verify" / "all_metadata.json").read_text())["question"]
    assert any("disagrees" in p.message for p in verify_ts_task(task_dir, q))


def test_verify_catches_a_target_in_val_v2(tmp_path):
    task_dir, _ = _write(tmp_path, _panel(), "inv")
    gt = pd.read_csv(task_dir / "verify" / "ground_truth_v2.csv")
    gt.to_csv(task_dir / "source" / "val_v2.csv", index=False)
    assert any("identifier" in p.message for p in check_ts_task(task_dir))


def _predict(tmp_path, frame: pd.DataFrame, variant: str):
    path = tmp_path / "pred" / variant / "prediction.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def test_scoring_ground_truth_shuffled_extra_rows_and_missing_ids(panel_task, tmp_path):
    task_dir, _ = panel_task
    gt1 = pd.read_csv(task_dir / "verify" / "ground_truth_v1.csv")
    gt2 = pd.read_csv(task_dir / "verify" / "ground_truth_v2.csv", dtype={"year": str})
    assert score_prediction(task_dir, "v1", _predict(tmp_path, gt1, "v1")).score == 1.0
    assert score_prediction(task_dir, "v2", _predict(tmp_path, gt2, "v2")).score == 1.0
    extra = pd.DataFrame({"year": ["2100", "2101"], "firm": ["a", "zz"], "inv": [1.0, 2.0]})
    shuffled = pd.concat([gt2.sample(frac=1.0, random_state=1), extra])
    assert score_prediction(task_dir, "v2", _predict(tmp_path, shuffled, "v2")).score == 1.0
    no_entity = score_prediction(task_dir, "v2", _predict(tmp_path, gt2.drop(columns=["firm"]), "v2"))
    assert no_entity.score == 0.0 and "firm" in no_entity.reason
    no_rows = score_prediction(task_dir, "v2", _predict(tmp_path, gt2.iloc[1:], "v2"))
    assert no_rows.score == 0.0 and "row-count mismatch" in no_rows.reason
    no_row_id = score_prediction(task_dir, "v1", _predict(tmp_path, gt1.drop(columns=["row_id"]), "v1"))
    assert no_row_id.score == 0.0


def test_cf_keys_are_compared_as_parsed_times(tmp_path):
    task_dir, _ = _write(tmp_path, _events(), "price")
    gt2 = pd.read_csv(task_dir / "verify" / "ground_truth_v2.csv", dtype={"date": str})
    padded = gt2.assign(date=" " + gt2["date"] + " ")  # the format the question names, blanks around it
    assert score_prediction(task_dir, "v2", _predict(tmp_path, padded, "v2")).score == 1.0
    # the same instants in another spelling: 0, as the desktop evaluator scores it (one rule, time_keys)
    respelled = gt2.assign(date=gt2["date"] + " 00:00:00")
    result = score_prediction(task_dir, "v2", _predict(tmp_path, respelled, "v2"))
    assert result.score == 0.0 and "time_format" in result.reason
    garbage = gt2.assign(date="not a date")
    result = score_prediction(task_dir, "v2", _predict(tmp_path, garbage, "v2"))
    assert result.score == 0.0 and "does not parse" in result.reason


def test_published_dare_bench_series_pass_the_same_checks(tmp_path):
    from finalize.checks import errors
    from tests.factories import DARE_EXAMPLES

    published = sorted(DARE_EXAMPLES.glob("*_ts")) if DARE_EXAMPLES.exists() else []
    if not published:
        pytest.skip(NO_DARE_EXAMPLES)
    for task_dir in published:
        q = json.loads((task_dir / "verify" / "all_metadata.json").read_text())["question"]
        problems = verify_ts_task(task_dir, q)
        assert errors(problems) == [], problems  # only warnings: no daregen baselines, no resample_rule key
        assert any("baselines" in p.message for p in problems)


def test_the_xf_text_says_what_val_v1_really_holds(panel_task, tmp_path):
    # a panel with an exogenous column: val_v1 holds it, and DARE-bench's own sentence is true
    task_dir, entry = panel_task
    val_columns = pd.read_csv(task_dir / "source" / "val_v1.csv", nrows=0).columns.tolist()
    assert "capital" in val_columns
    assert "where all non-target features are provided, but the target column `inv` is unknown" in entry["question_v1"]
    # a univariate series: val_v1 holds its time points only, and the text says so
    task_dir, entry = _write(tmp_path, _events(), "price")
    assert pd.read_csv(task_dir / "source" / "val_v1.csv", nrows=0).columns.tolist() == ["row_id", "date"]
    text = entry["question_v1"]
    assert "all non-target features are provided" not in text and "using the provided features" not in text
    assert "it holds only `row_id`, `date`; no other feature is known at those points" in text
