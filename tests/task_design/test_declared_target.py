"""What a card format declares names the target, as a signal with its own rule id (`declared.*`): a Hugging
Face header's train-eval-index col_mapping, a sentence naming the label beside its task_categories, a card's
Task/Goal/Target/Label section (Kaggle's "## Task", a bold "**Target**" line of a DARE-bench metadata.txt).
A dated table whose card states a class label is a tabular task on that label, split in time order, never a
forecast of another column; a dated table whose card states no label is still forecast.

The cards are real card files in a `local:DIR` folder, written for these tests the way the formats ship them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.build import BuildJob, build_one
from pipeline.core.if_workflow import read_table
from pipeline.core.jsonio import read_json
from pipeline.core.records import is_time_series
from pipeline.steps import SPEC_JSON
from sourcing.local import LocalFilesSource
from task_design.evidence.declared import DECLARED_RULES
from task_design.profile import profile_table
from task_design.stated_target import declared_tabular, stated_target, statement_signals
from task_design.time_tables import card_label

_FIELDS = """
## Data Fields

- `date`: the day
- `precipitation`: rain in mm
- `temp_max`: highest temperature of the day, °C
- `temp_min`: lowest temperature of the day, °C
- `wind`: mean wind speed, m/s
- `weather`: the kind of weather of the day (drizzle, rain, sun, snow, fog)
"""
_LABEL_SENTENCE = ("---\nlicense: cc0-1.0\npretty_name: Seattle Weather\ntask_categories:\n- tabular-classification\n"
                   "---\n# Dataset Card for Seattle Weather\n\nDaily weather in Seattle.\n" + _FIELDS +
                   "\nThe `weather` column is the label.\n")
_COL_MAPPING = ("---\nlicense: cc0-1.0\npretty_name: Seattle Weather\ntask_categories:\n- tabular-classification\n"
                "train-eval-index:\n- config: default\n  task: tabular-classification\n  col_mapping:\n"
                "    weather: target\n---\n# Dataset Card for Seattle Weather\n\nDaily weather in Seattle.\n" + _FIELDS)
_NO_LABEL = "---\nlicense: cc0-1.0\npretty_name: Seattle Weather\n---\n# Seattle Weather\n\nDaily weather.\n" + _FIELDS


def _weather(n: int = 400) -> pd.DataFrame:
    """A year and more of daily weather whose kind follows the rain and the temperature (a learnable label)."""
    rng = np.random.default_rng(0)
    days = pd.date_range("2012-01-01", periods=n, freq="D")
    season = np.sin(2 * np.pi * (np.arange(n) - 100) / 365)
    temp_max = 12 + 10 * season + rng.normal(0, 3, n)
    rain = np.where(rng.random(n) < 0.4, rng.gamma(1.5, 4, n), 0.0).round(1)
    wind = (3 + rng.gamma(2, 1, n)).round(1)
    # no one column decides the kind of day: rain with wind or warmth, each read with some noise
    kind = np.where(rain > 0, np.where(temp_max < 3, "snow", np.where(wind > 5, "rain", "drizzle")),
                    np.where(temp_max > 12, "sun", "fog"))
    kind = np.where(rng.random(n) < 0.1, rng.choice(["sun", "fog", "rain", "drizzle"], n), kind)
    return pd.DataFrame({"date": days.strftime("%Y-%m-%d"), "precipitation": rain, "temp_max": temp_max.round(1),
                         "temp_min": (temp_max - 6 - rng.normal(0, 2, n).clip(-3, 3)).round(1),
                         "wind": wind, "weather": kind})


def _folder(root: Path, name: str, card: str, card_name: str = "README.md") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    _weather().to_csv(folder / f"{name}.csv", index=False)
    (folder / card_name).write_text(card, encoding="utf-8")
    return folder


def _record(root: Path, name: str):
    return LocalFilesSource(root).record(f"local/{name}")


def test_a_hugging_face_header_carries_its_col_mapping_and_task_categories(tmp_path: Path) -> None:
    _folder(tmp_path, "mapped", _COL_MAPPING)
    record = _record(tmp_path, "mapped")
    assert record.declared_roles == {"weather": "target"}
    assert record.task_categories == ("tabular-classification",)
    assert declared_tabular(record) == "tabular-classification"
    hit = stated_target(record, list(_weather().columns))
    assert hit is not None and (hit.column, hit.rule_id) == ("weather", "declared.col-mapping")
    # a col_mapping of a text task's columns names no target
    other = record.model_copy(update={"declared_roles": {"sentence": "text", "weather": "id"}, "description": ""})
    assert stated_target(other, ["sentence", "weather"]) is None


def test_a_label_sentence_names_the_label(tmp_path: Path) -> None:
    _folder(tmp_path, "said", _LABEL_SENTENCE)
    hit = stated_target(_record(tmp_path, "said"), list(_weather().columns))
    assert hit is not None and (hit.column, hit.rule_id) == ("weather", "declared.label-is")
    # "label" as an ordinary word names nothing
    _folder(tmp_path, "plain", _NO_LABEL.replace("Daily weather.", "Each day has a label in the plot's legend."))
    assert stated_target(_record(tmp_path, "plain"), list(_weather().columns)) is None


def test_a_kaggle_task_section_and_a_dare_bench_target_section(tmp_path: Path) -> None:
    kaggle = {"title": "Seattle Weather", "licenses": [{"name": "CC0-1.0"}],
              "description": "Daily weather in Seattle.\n\n## Task\n\nGiven a day's measurements, predict its "
                             "`weather` (drizzle, rain, sun, snow or fog).\n\n## Columns\n\n- `wind`: mean wind speed"}
    _folder(tmp_path, "kaggle", json.dumps(kaggle), "dataset-metadata.json")
    hit = stated_target(_record(tmp_path, "kaggle"), list(_weather().columns))
    assert hit is not None and (hit.column, hit.rule_id) == ("weather", "declared.task-section")
    metadata = ("**Description**\n\nDaily weather in Seattle.\n\n**Target**\nweather\n\n=== About this file ===\n\n"
                "Weather by day\n\n=== Columns & descriptions ===\n\nwind: mean wind speed\nweather: kind of day\n")
    _folder(tmp_path, "dare", metadata, "metadata.txt")
    hit = stated_target(_record(tmp_path, "dare"), list(_weather().columns))
    assert hit is not None and (hit.column, hit.rule_id) == ("weather", "declared.task-section")
    # a section naming two columns abstains
    _folder(tmp_path, "two", "# Weather\n\n## Goal\n\nPredict wind or weather, as you like.\n", "README.md")
    assert stated_target(_record(tmp_path, "two"), list(_weather().columns)) is None


def test_a_dated_table_whose_card_states_a_class_label_is_tabular_on_it(tmp_path: Path) -> None:
    table = _weather()
    for name, card in (("said", _LABEL_SENTENCE), ("mapped", _COL_MAPPING), ("none", _NO_LABEL)):
        _folder(tmp_path, name, card)
    profile = profile_table(table)
    said = card_label(_record(tmp_path, "said"), profile, table)
    assert said is not None and (said.column, said.rule_id, said.time_column) == ("weather", "declared.label-is", "date")
    assert card_label(_record(tmp_path, "none"), profile, table) is None
    # a quantity the card states on a dated table, with no tabular task declared, is still a forecast
    numeric = _record(tmp_path, "none").model_copy(update={"description": "The target variable is wind."})
    assert card_label(numeric, profile, table) is None
    # the same table without its dates is no series: nothing to reroute
    assert card_label(_record(tmp_path, "said"), profile_table(table.drop(columns="date")),
                      table.drop(columns="date")) is None


@pytest.mark.parametrize("card", [_LABEL_SENTENCE, _COL_MAPPING], ids=["label-sentence", "col-mapping"])
def test_the_hugging_face_weather_card_builds_a_classification_of_weather(tmp_path: Path, card: str) -> None:
    """Before: the sentence got a forecast of another column, the col_mapping a skip ("a forecast needs
    numbers"). Now: a classification of `weather`, its validation days after its training days."""
    _folder(tmp_path / "data", "seattle-weather", card)
    outcome = build_one("local/seattle-weather", "local", str(tmp_path / "data"), BuildJob.make(0),
                        tmp_path / "work", tmp_path / "tasks")[0]
    assert outcome.ok, f"{outcome.stage}: {outcome.reason}"
    task = next((tmp_path / "tasks").iterdir())
    meta = read_json(task / "verify" / "all_metadata.json")
    assert meta["question"]["target"] == ["weather"] and meta["question"]["problem_type"] == "classification"
    assert meta["daregen"]["split_time_column"] == "date"
    assert "declared." in meta["daregen"]["target_evidence"]
    train, val = (read_table(next((task / "source").glob(f"{part}_v2.*"))) for part in ("train", "val"))
    assert "date" in train.columns and train["date"].max() < val["date"].min()


def test_a_dated_table_whose_card_states_no_label_is_still_forecast(tmp_path: Path) -> None:
    _folder(tmp_path / "data", "seattle-weather", _NO_LABEL)
    outcome = build_one("local/seattle-weather", "local", str(tmp_path / "data"), BuildJob.make(0),
                        tmp_path / "work", tmp_path / "tasks")[0]
    # designed as a forecast (these made-up days are noise to forecast, so the build stops after the design)
    assert outcome.stage != "design", outcome.reason
    assert is_time_series(read_json(Path(outcome.work_dir) / SPEC_JSON))


@pytest.mark.parametrize("mark", ["`", "*", "=", "\n", "a ", "## Task\n", "x is the "])
def test_the_declared_rules_read_a_mib_of_one_mark_in_bounded_spans(mark: str) -> None:
    """Each matcher is linear on hostile text (a quadratic one would not finish here), and what it reads of a
    statement is a few lines, never the whole text."""
    text = mark * (2**20 // len(mark))
    spans = [len(m.group(0)) for r in DECLARED_RULES if r.reads == "description" for m in r.matcher.finditer(text)]
    assert max(spans, default=0) <= 1000


def test_every_statement_is_a_signal_on_the_column_it_names(tmp_path: Path) -> None:
    """For the learned target model (issue 47): each rule's reading per column, by rule id, none overriding
    another; a column no statement names has no entry."""
    _folder(tmp_path, "mapped", _COL_MAPPING + "\nThe `weather` column is the label.\n\n## Task\n\nPredict the wind.\n")
    signals = statement_signals(_record(tmp_path, "mapped"), list(_weather().columns))
    assert signals == {"weather": ("declared.col-mapping", "declared.label-is"), "wind": ("declared.task-section", "stated.predicting")}
    _folder(tmp_path, "none", _NO_LABEL)
    assert statement_signals(_record(tmp_path, "none"), list(_weather().columns)) == {}
