"""`bench/rule_report.py`: a rule's coverage counts the datasets and columns its matcher fires on, a conflict is
two verdicts on one column settled by priority, accuracy compares each firing with the labelled outcome, and a
rule firing on three datasets or fewer is listed as a curator's decision. Every labelled list has a role in the
manifest."""

from __future__ import annotations

import pytest

from bench.intended_targets import INTENDED_LISTS, Intended, labelled_lists
from bench.rule_report import Texts, measure, report, roles

CORPUS = [
    Texts("r/a", "Wages of workers", "A survey.", {"wage": "hourly wage", "age": "age in years", "income": ""}),
    Texts("r/b", "crime4", "", {"crmrte": "crimes committed per person", "lon": "longitude"}),
    Texts("r/c", "Sunspots", "This set of values is calculated each month.", {"x": "a numeric vector"}),
]
LISTS = {"list_a.csv": [Intended("r/a", ("age",), "regression", 500, "q"),
                        Intended("r/c", (), "none", 500, "q")]}


def test_coverage_conflicts_and_accuracy_of_each_rule() -> None:
    stats = measure(CORPUS, LISTS)
    assert stats["outcome.name"].datasets == {"r/a"} and stats["outcome.name"].columns == 2  # wage, income
    assert stats["coordinate.name"].datasets == {"r/b"} and stats["subject.file-name-title"].datasets == {"r/b"}
    # `income` is an outcome's name and a generic quantity's: a conflict the covariate verdict wins on priority.
    assert stats["outcome.name"].conflicts["covariate.generic-quantity-name"] == 1
    assert stats["outcome.name"].lost >= 1 and stats["covariate.generic-quantity-name"].lost == 0
    # The label says `age` is r/a's outcome: the wage and income readings disagree with it, the demographic
    # verdict on `age` disagrees too; a lookup table on a dataset with no question agrees.
    assert stats["outcome.name"].accuracy["list_a.csv"] == (0, 2)
    assert stats["covariate.demographic-name"].accuracy["list_a.csv"] == (0, 1)
    assert stats["subject.computed-table"].accuracy["list_a.csv"] == (1, 1)
    assert "list_a.csv" not in stats["subject.over-time-title"].accuracy
    # An experiment's wording is context: it conflicts with no subject rule.
    trial = Texts("r/d", "Effects of price on sales", "A randomized trial.", {"sales": ""})
    assert not measure([trial], {})["experiment.arm-description"].conflicts


def test_the_report_lists_rules_that_fire_on_three_datasets_or_fewer_as_curator_decisions() -> None:
    text = report(measure(CORPUS, LISTS), {"list_a.csv": "tuning"}, len(CORPUS))
    curated = text.split("## Curator decisions")[1]
    assert "`coordinate.name`: 1 (r/b)" in curated and "`subject.effect-on`: 0 (none)" in curated
    assert "| `outcome.name` | outcome | 440 | 1 | 2 |" in text and "in-sample" in text


def test_every_labelled_list_has_a_status_and_lists_3_and_6_are_tuning_lists(tmp_path) -> None:
    manifest = roles()
    assert {p.name for p in INTENDED_LISTS} <= set(manifest) and set(manifest.values()) <= {"tuning", "heldout"}
    assert manifest["intended_targets_3.csv"] == manifest["intended_targets_6.csv"] == "tuning"
    assert manifest["intended_targets_7.csv"] == "heldout"
    # A list file the manifest does not name has no status to assume: the manifest is refused.
    (tmp_path / "intended_targets_9.csv").write_text("ref,outcomes,kind,rows,justification\n", encoding="utf-8")
    (tmp_path / "lists.toml").write_text('[[list]]\nfile = "intended_targets.csv"\nstatus = "tuning"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="names no status for intended_targets_9.csv"):
        labelled_lists(tmp_path / "lists.toml")
