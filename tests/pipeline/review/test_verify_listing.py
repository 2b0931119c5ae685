"""`daregen verify` fails a tree whose question_list.json promises tasks it does not hold: a listed task
without its folder is a failing verdict of its own, beside the verdicts of the tasks that are there."""

from __future__ import annotations

from pathlib import Path

from pipeline.core import names
from pipeline.core.jsonio import write_json
from pipeline.review.verify import verify_tree


def test_a_listed_task_that_is_missing_fails_the_tree(tmp_path: Path) -> None:
    present = tmp_path / "present_class"
    (present / names.VERIFY_DIR).mkdir(parents=True)
    write_json(present / names.VERIFY_DIR / names.ALL_METADATA, [])  # fails on its own, without the sandbox
    write_json(tmp_path / names.QUESTION_LIST, [{"file_path": "present_class", "task": "classification"},
                                                {"file_path": "ghost_class", "task": "classification"}])
    report = verify_tree(tmp_path, jobs=1, determinism=False)
    by_task = {v.task: v for v in report.verdicts}
    assert by_task["ghost_class"].status == "fail"
    assert "listed in question_list.json but the tree has no such task folder" in by_task["ghost_class"].line()
    assert by_task["present_class"].status == "fail" and report.failed == 2
