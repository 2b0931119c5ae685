"""Uploaded predictions cannot cheat or stop `daregen score`: a prediction that is a link (to the
tree's own reference, absolute or relative, or through a linked folder), not a regular file, or past
the limits scores 0 with its reason, and the run scores every other task."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.review.score import SCORE_SUMMARY, run_score, score_tree
from pipeline.cli import main
from pipeline.core.names import GROUND_TRUTH, PREDICTION, SIMULATED_PRED, VERIFY_DIR
from pipeline.core.safe_io import InputLimits
from tests.pipeline.review.test_score import _task


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(tasks root, task folder, predictions folder) for one classification task."""
    task = _task(tmp_path, "classification")
    preds = tmp_path / "preds"
    (preds / task.name / "v1").mkdir(parents=True)
    (preds / task.name / "v2").mkdir(parents=True)
    return tmp_path / "tasks", task, preds


def _scores(tasks: Path, preds: Path, **kw) -> dict[str, tuple[float, str | None]]:
    return {s.variant: (s.score, s.reason) for s in score_tree(preds, tasks, **kw).scores}


def test_absolute_links_to_the_references_score_zero(tree) -> None:
    tasks, task, preds = tree
    (preds / task.name / "v1" / PREDICTION).symlink_to(task / VERIFY_DIR / SIMULATED_PRED)
    (preds / task.name / "v2" / PREDICTION).symlink_to(task / VERIFY_DIR / GROUND_TRUTH)
    scores = _scores(tasks, preds)
    assert scores == {v: (0.0, f"{task.name}/{v}/prediction.csv is a symbolic link, which is refused")
                      for v in ("v1", "v2")}


def test_hard_links_to_the_references_score_zero(tree) -> None:
    """A hard link is the reference file itself under another name: refused like a symbolic one."""
    tasks, task, preds = tree
    os.link(task / VERIFY_DIR / SIMULATED_PRED, preds / task.name / "v1" / PREDICTION)
    os.link(task / VERIFY_DIR / GROUND_TRUTH, preds / task.name / "v2" / PREDICTION)
    assert _scores(tasks, preds) == {v: (0.0, f"{task.name}/{v}/prediction.csv has 2 hard links (the same file "
                                              f"as one elsewhere), which is refused") for v in ("v1", "v2")}


def test_a_relative_link_and_a_linked_task_folder_score_zero(tree) -> None:
    tasks, task, preds = tree
    rel = os.path.relpath(task / VERIFY_DIR / SIMULATED_PRED, preds / task.name / "v1")
    (preds / task.name / "v1" / PREDICTION).symlink_to(rel)
    (preds / task.name / "v2").rmdir()
    (preds / task.name / "v2").symlink_to(task / VERIFY_DIR)  # v2/prediction.csv is then a real file there
    (task / VERIFY_DIR / PREDICTION).write_bytes((task / VERIFY_DIR / GROUND_TRUTH).read_bytes())
    scores = _scores(tasks, preds)
    assert scores["v1"][0] == 0.0 and scores["v1"][1].endswith("prediction.csv is a symbolic link, which is refused")
    assert scores["v2"] == (0.0, f"{task.name}/v2/prediction.csv is reached through a symbolic link (v2), "
                                 "which is refused")


def test_a_fifo_scores_zero_without_blocking(tree) -> None:
    tasks, task, preds = tree
    os.mkfifo(preds / task.name / "v1" / PREDICTION)
    assert _scores(tasks, preds)["v1"] == (0.0, f"{task.name}/v1/prediction.csv is not a regular file")


def test_an_oversized_prediction_scores_zero_and_the_run_goes_on(tree) -> None:
    """A 1 GB upload, simulated by a limit of 64 bytes: that file scores 0, the other is scored."""
    tasks, task, preds = tree
    honest = (task / VERIFY_DIR / GROUND_TRUTH).read_bytes()
    (preds / task.name / "v1" / PREDICTION).write_bytes(b"row_id,y\n" + b"1,a\n" * 40)
    (preds / task.name / "v2" / PREDICTION).write_bytes(honest)
    scores = _scores(tasks, preds, limits=InputLimits(max_file_bytes=len(honest) + 1))
    assert scores["v1"] == (0.0, f"{task.name}/v1/prediction.csv is 169 bytes, over the "
                                 f"{len(honest) + 1}-byte limit (max_file_bytes)")
    assert scores["v2"] == (1.0, None)


def test_too_many_columns_score_zero(tree) -> None:
    tasks, task, preds = tree
    (preds / task.name / "v1" / PREDICTION).write_text("row_id,y," + ",".join(f"c{i}" for i in range(50)) + "\n")
    scores = _scores(tasks, preds, limits=InputLimits(max_columns=10))
    assert scores["v1"] == (0.0, f"{task.name}/v1/prediction.csv has 52 columns, over the limit of 10 (max_columns)")


def test_a_summary_path_that_is_a_folder_is_a_one_line_error(tree, capsys) -> None:
    tasks, task, preds = tree
    (preds / task.name / "v1" / PREDICTION).write_text("row_id\n")  # a folder with no prediction is refused first
    (preds / SCORE_SUMMARY).mkdir()
    assert main(["score", str(preds), "--tasks", str(tasks)]) == 2
    err = capsys.readouterr().err
    assert err == f"daregen: error: {preds / SCORE_SUMMARY} exists and is not a regular file; refusing to replace it\n"


def test_a_linked_summary_is_refused_not_written_through(tree, tmp_path: Path) -> None:
    tasks, task, preds = tree
    outside = tmp_path / "bashrc"
    outside.write_text("echo hi\n")
    (preds / SCORE_SUMMARY).symlink_to(outside)
    with pytest.raises(ValueError, match="not a regular file"):
        run_score(preds, tasks)
    assert outside.read_text() == "echo hi\n"


def test_control_characters_in_a_task_name_are_printed_escaped(tmp_path: Path, capsys) -> None:
    """`\\r` plus an escape sequence would let a failing task overprint its line as a pass."""
    name = "evil\r\x1b[2Kgood_class"
    task = _task(tmp_path, "classification", name=name)
    run_score(tmp_path / "preds", tmp_path / "tasks")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out
    assert "evil\\r\\x1b[2Kgood_class" in out and task.is_dir()


def _two_tasks(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(tasks root, a bad task, an honest task, predictions folder with the honest task's references)."""
    bad, good = _task(tmp_path, "classification", name="bad_class"), _task(tmp_path, "regression", name="good_reg")
    preds = tmp_path / "preds"
    for task in (bad, good):
        for variant, ref in (("v1", SIMULATED_PRED), ("v2", GROUND_TRUTH)):
            (preds / task.name / variant).mkdir(parents=True)
            (preds / task.name / variant / PREDICTION).write_bytes((task / VERIFY_DIR / ref).read_bytes())
    return tmp_path / "tasks", bad, good, preds


@pytest.mark.parametrize("breakage", ["metadata []", "reference missing", "folder missing", "folder linked outside",
                                      "linked verify"])
def test_one_bad_task_is_skipped_by_name_and_the_rest_is_scored(tmp_path: Path, breakage: str, capsys) -> None:
    tasks, bad, good, preds = _two_tasks(tmp_path)
    if breakage == "metadata []":
        (bad / VERIFY_DIR / "all_metadata.json").write_text("[]")
    elif breakage == "reference missing":
        (bad / VERIFY_DIR / SIMULATED_PRED).unlink()
    elif breakage == "folder missing":
        import shutil
        shutil.rmtree(bad)
    elif breakage == "folder linked outside":  # the folder holds a real task, but outside the tree
        bad.rename(tmp_path / "elsewhere")
        bad.symlink_to(tmp_path / "elsewhere")
    else:
        (bad / VERIFY_DIR).rename(tmp_path / "verify_elsewhere")
        (bad / VERIFY_DIR).symlink_to(tmp_path / "verify_elsewhere")
    report = run_score(preds, tasks)
    assert {(s.task, s.variant, s.score) for s in report.scores} == {("good_reg", "v1", 1.0), ("good_reg", "v2", 1.0)}
    assert [task for task, _ in report.skipped] == ["bad_class"]
    assert report.skipped[0][1].startswith("bad_class: ")
    assert "SKIPPED  bad_class: " in capsys.readouterr().out
    assert report.to_json()["skipped_tasks"][0]["task"] == "bad_class"
