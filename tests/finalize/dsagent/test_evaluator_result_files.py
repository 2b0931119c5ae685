"""The evaluator scores the file the agent wrote, never what a link in the result folder points at:
a result that is a symbolic or hard link to the task's own reference.csv, a FIFO or an oversized file
scores 0 (and returns), where the link used to score 1.0."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from finalize.dsagent import evaluator_template
from finalize.dsagent.evaluator_template import evaluate

REFERENCE = "row_id,y\n0,a\n1,b\n2,a\n"
EXPECTED = {"check": {"kind": "prediction", "file": "prediction.csv", "metric": "exact_match",
                      "id_columns": ["row_id"], "targets": ["y"], "reference_file": "reference.csv"},
            "solved_threshold": 0.95}


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """A published task folder (evaluator side) with the harness's result folder inside it."""
    (tmp_path / "reference.csv").write_text(REFERENCE, encoding="utf-8")
    (tmp_path / "result").mkdir()
    return tmp_path


def test_the_agents_own_correct_file_scores_1(task: Path) -> None:
    (task / "result" / "prediction.csv").write_text(REFERENCE, encoding="utf-8")
    assert evaluate(task / "result", EXPECTED, task) == 1.0


def test_a_symbolic_link_to_the_reference_scores_0(task: Path) -> None:
    (task / "result" / "prediction.csv").symlink_to("../reference.csv")
    assert evaluate(task / "result", EXPECTED, task) == 0.0


def test_a_hard_link_to_the_reference_scores_0(task: Path) -> None:
    os.link(task / "reference.csv", task / "result" / "prediction.csv")
    assert evaluate(task / "result", EXPECTED, task) == 0.0


def test_a_fifo_or_an_oversized_file_scores_0(task: Path, monkeypatch) -> None:
    os.mkfifo(task / "result" / "prediction.csv")
    assert evaluate(task / "result", EXPECTED, task) == 0.0  # returns: no read blocks on the FIFO
    (task / "result" / "prediction.csv").unlink()
    (task / "result" / "prediction.csv").write_text(REFERENCE, encoding="utf-8")
    monkeypatch.setattr(evaluator_template, "MAX_RESULT_BYTES", len(REFERENCE) - 1)
    assert evaluate(task / "result", EXPECTED, task) == 0.0
