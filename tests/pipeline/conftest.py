"""A small honest tree shared by the review and guard tests: one task of ours beside published DARE-bench tasks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
    return tree


@pytest.fixture
def tree(honest_tree: Path, tmp_path: Path) -> Path:
    """A private copy, free to tamper with."""
    return Path(shutil.copytree(honest_tree, tmp_path / "tree"))
