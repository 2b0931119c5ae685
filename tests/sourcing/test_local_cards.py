"""`--sources local:DIR` on a folder of dataset folders, as `kaggle datasets download --unzip` and
`kaggle datasets metadata`, a Hugging Face card, a Markdown card or a Kaggle card export leave them,
lists one candidate per dataset folder and documents each from its card, fitted to the table; the
Kaggle and Hugging Face folders build to tasks end to end. A hostile card is text or a one-line reason:
an entry for an absent column or a second entry is dropped with a logged line, an enormous card is
refused by the limit, non-UTF-8 bytes are read as Latin-1 with a logged line, and what a card says
reaches the task only as text."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest

from pipeline import steps
from pipeline.build import BuildJob, build_one
from pipeline.core.jsonio import read_json
from pipeline.core.safe_io import InputLimits
from sourcing.local import LocalFilesSource
from tests.sourcing.card_data import make_folder


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    return make_folder(tmp_path / "downloads")


def test_one_candidate_per_dataset_folder_and_each_record_from_its_card(downloads: Path) -> None:
    pd.DataFrame({"a": [1, 2], "b": [3, 4]}).to_csv(downloads / "loose.csv", index=False)
    second = downloads / "used-bicycle-prices" / "archive"
    second.mkdir()
    pd.DataFrame({"listing_id": [1], "price_eur": [2.0]}).to_csv(second / "listings_2019.csv", index=False)
    for skipped in (downloads / ".cache", downloads / "generated"):  # a cache and a published tree
        skipped.mkdir()
        pd.DataFrame({"a": [1]}).to_csv(skipped / "train_v1.csv", index=False)
    (downloads / "generated" / "question_list.json").write_text("[]")
    (downloads / "linked").symlink_to(downloads / "fuel-economy")
    source = LocalFilesSource(downloads)
    assert source.candidates() == ["local/coffee-roast-quality", "local/fuel-economy", "local/loose",
                                   "local/lung-capacity", "local/used-bicycle-prices/archive/listings_2019",
                                   "local/used-bicycle-prices/listings"]
    coffee = source.record("local/coffee-roast-quality")
    assert (coffee.title, coffee.license, coffee.target_hint, coffee.slug) == \
        ("Coffee Roast Quality", "cc-by-4.0", "grade", "local_coffee-roast-quality")
    bikes = source.record("local/used-bicycle-prices/listings")
    assert bikes.title == "Used Bicycle Prices" and bikes.column_descriptions["weight_kg"] == \
        "Weight of the bike in kilograms"
    assert source.record("local/lung-capacity").title == "lung-capacity"  # no title in the card: the folder's name
    # a folder-wide card at the top describes the one loose table, none of several; a sidecar wins over it
    (downloads / "README.md").write_text("# Everything\n")
    assert source.record("local/loose").title == "Everything"
    pd.DataFrame({"a": [1, 2]}).to_csv(downloads / "loose_too.csv", index=False)
    assert source.record("local/loose").title == "loose"
    (downloads / "loose.json").write_text('{"title": "Loose table"}')
    assert source.record("local/loose").title == "Loose table"


@pytest.mark.parametrize("name, target", [("used-bicycle-prices", "price_eur"), ("coffee-roast-quality", "grade")])
def test_a_kaggle_download_and_a_hugging_face_folder_build_end_to_end(downloads: Path, tmp_path: Path,
                                                                      name: str, target: str) -> None:
    outcome = build_one(f"local/{name}", "local", str(downloads), BuildJob.make(0), tmp_path / "work",
                        tmp_path / "tasks")[0]
    assert outcome.ok, f"{outcome.stage}: {outcome.reason}"
    task = next((tmp_path / "tasks").iterdir())
    assert read_json(task / "verify" / "all_metadata.json")["question"]["target"] == [target]


def _card_folder(tmp_path: Path, card: bytes, name: str = "README.md") -> Path:
    folder = tmp_path / "data" / "survey"
    folder.mkdir(parents=True)
    pd.DataFrame({"age": range(60), "score": [i % 7 for i in range(60)]}).to_csv(folder / "survey.csv", index=False)
    (folder / name).write_bytes(card)
    return tmp_path / "data"


def test_a_hostile_card_is_text_or_a_one_line_outcome(tmp_path: Path, caplog) -> None:
    card = (b"# Survey\n\n| Column | Description |\n|---|---|\n| `age` | Age in years |\n| `ghost` | Not here |\n"
            b"| `age` | Age in months |\n| `score` | '); import os; os.system('touch MARKER') # |\n")
    data = _card_folder(tmp_path, card)
    with caplog.at_level(logging.WARNING, logger="sourcing.local"):
        record = LocalFilesSource(data).record("local/survey")
    assert record.column_descriptions == {"age": "Age in years", "score": "'); import os; os.system('touch MARKER') #"}
    assert [r.getMessage() for r in caplog.records] == [
        "survey/survey.csv: README.md: the features table describes column 'age' twice: the first entry is kept",
        "survey/survey.csv: the card describes column 'ghost', which the table does not have: ignored"]


def test_an_enormous_card_is_refused_by_its_limit(tmp_path: Path) -> None:
    data = _card_folder(tmp_path, b"# Survey\n" + b"x" * 5000)
    work = tmp_path / "work"
    outcome = steps.source_step(steps.start("local/survey", str(work)), "local", str(data),
                                InputLimits(max_card_bytes=4096).model_dump_json())
    assert (outcome.ok, outcome.reason) == (
        False, "cannot load: survey/README.md is 5009 bytes, over the 4096-byte limit (max_card_bytes)")


def test_a_latin_1_card_is_read_with_a_logged_line(tmp_path: Path, caplog) -> None:
    data = _card_folder(tmp_path, "age: Alter in Jahren (Größe egal)\nscore: Punkte\n".encode("latin-1"),
                        name="metadata.txt")
    with caplog.at_level(logging.WARNING, logger="sourcing.local"):
        record = LocalFilesSource(data).record("local/survey")
    assert record.description == "age: Alter in Jahren (Größe egal)\nscore: Punkte"
    assert [r.getMessage() for r in caplog.records] == [
        "survey/survey.csv: metadata.txt is not UTF-8 (byte 0xf6 at 24): read as Latin-1"]


def test_a_card_that_is_a_link_is_refused(tmp_path: Path) -> None:
    data = _card_folder(tmp_path, b"# Survey\n", name="elsewhere.md")
    (data / "survey" / "README.md").symlink_to(data / "survey" / "elsewhere.md")
    with pytest.raises(ValueError, match=r"^survey/README.md is a symbolic link, which is refused$"):
        LocalFilesSource(data).record("local/survey")
