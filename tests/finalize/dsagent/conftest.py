"""A small DARE tree (csv, parquet and sqlite tasks built through pipeline.build.build_one, no Prefect) and its
dsagentbench/ folder, shared by the DSAgentBench tests of this folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from finalize.dsagent.build import write_dsagent
from tests.factories import DSAGENT_SEED, build_small_tree


@pytest.fixture(scope="session")
def small_tree(tmp_path_factory) -> Path:
    """The DARE tasks only (no dsagentbench/)."""
    return build_small_tree(tmp_path_factory.mktemp("dsagent_tree"))


@pytest.fixture(scope="session")
def desktop_tree(small_tree: Path, tmp_path_factory) -> tuple[Path, dict]:
    """A copy of the small tree with dsagentbench/ written, and write_dsagent's report."""
    tree = Path(shutil.copytree(small_tree, tmp_path_factory.mktemp("dsagent_a") / "tasks"))
    return tree, write_dsagent(tree, DSAGENT_SEED)
