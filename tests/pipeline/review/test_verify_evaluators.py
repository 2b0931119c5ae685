"""`daregen verify` fails every published DSAgentBench evaluator.py that is not, byte for byte, the one the
code renders (a harness runs it on its host): a forged one, a link to one, a missing one, each in one line
naming the file; the rendered one passes, and a tree without dsagentbench/ has nothing to compare."""

from __future__ import annotations

from pathlib import Path

from finalize.dsagent.build import OUT_DIR, TASKS_DIR, evaluator_source
from pipeline.core.safe_io import InputLimits
from pipeline.review.verify import desktop_evaluator_verdicts


def test_every_evaluator_that_is_not_the_rendered_one_fails_naming_its_file(tmp_path: Path) -> None:
    tasks = tmp_path / OUT_DIR / TASKS_DIR
    for name in ("good__if", "forged__if", "linked__if", "missing__if"):
        (tasks / name).mkdir(parents=True)
    (tasks / "good__if" / "evaluator.py").write_text(evaluator_source(), encoding="utf-8")
    (tasks / "forged__if" / "evaluator.py").write_text("print(1.0)\n", encoding="utf-8")
    (tasks / "linked__if" / "evaluator.py").symlink_to(tasks / "good__if" / "evaluator.py")
    verdicts = {v.task: v for v in desktop_evaluator_verdicts(tmp_path, InputLimits())}
    assert sorted(verdicts) == [f"{OUT_DIR}/{TASKS_DIR}/{n}__if" for n in ("forged", "linked", "missing")]
    for name, why in (("forged", "differs from the evaluator.py this daregen renders"), ("linked", "link"),
                      ("missing", "")):
        verdict = verdicts[f"{OUT_DIR}/{TASKS_DIR}/{name}__if"]
        [problem] = verdict.problems
        assert verdict.status == "fail" and problem.where == f"{OUT_DIR}/{TASKS_DIR}/{name}__if/evaluator.py"
        assert why in problem.message and "\n" not in problem.message


def test_a_tree_without_desktop_tasks_has_nothing_to_compare(tmp_path: Path) -> None:
    assert desktop_evaluator_verdicts(tmp_path, InputLimits()) == []
    (tmp_path / OUT_DIR).mkdir()
    (tmp_path / OUT_DIR / TASKS_DIR).symlink_to(tmp_path)
    [verdict] = desktop_evaluator_verdicts(tmp_path, InputLimits())
    assert verdict.status == "fail" and verdict.problems[0].message == "is a link or not a folder"
