"""A small honest tree shared by the review and guard tests: one task of ours beside published DARE-bench tasks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.core import names
from pipeline.core.jsonio import read_json
from pipeline.publish import write_question_list
from pipeline.steps import ENTRY_JSON
from tests.factories import CLASS, DARE_EXAMPLES, REG, TS, build_checked_task


@pytest.fixture(scope="session")
def honest_tree(tmp_path_factory) -> Path:
    """One task of ours (csv, built through build_one) beside a copy of three published tasks."""
    root = tmp_path_factory.mktemp("verify")
    (root / "build").mkdir()
    own = build_checked_task(root / "build", "csv")
    tree = root / "tree"
    tree.mkdir()
    shutil.copytree(own, tree / own.name)
    for name in (REG, CLASS, TS):
        shutil.copytree(DARE_EXAMPLES / name, tree / name)
    # A DARE tree lists its tasks (verify refuses a tree without question_list.json): ours, and the
    # published entries of the copied tasks.
    published = json.loads((DARE_EXAMPLES / names.QUESTION_LIST).read_text(encoding="utf-8"))
    write_question_list(tree, [read_json(next((root / "build" / "work").rglob(ENTRY_JSON)))]
                        + [e for e in published if e.get("file_path") in (REG, CLASS, TS)])
    return tree


@pytest.fixture
def tree(honest_tree: Path, tmp_path: Path) -> Path:
    """A private copy, free to tamper with."""
    return Path(shutil.copytree(honest_tree, tmp_path / "tree"))
