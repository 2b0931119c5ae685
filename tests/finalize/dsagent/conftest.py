"""A small DARE tree (csv, parquet and sqlite tasks built through pipeline.steps, no Prefect) and its
dsagentbench/ folder, shared by the DSAgentBench tests of this folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from finalize import sandbox
from finalize.dsagent.build import write_dsagent
from pipeline import steps
from pipeline.core.jsonio import read_json, write_json
from pipeline.publish import write_question_list
from task_design.config import DesignConfig
from tests.builders import build_table

SEED = 5
# (file type, table seed): three tasks, one per format; the sqlite one has a multi-table train_v1.
DATASETS = (("csv", 1), ("parquet", 2), ("sqlite", 3))


def build_small_tree(root: Path) -> Path:
    tree = root / "tasks"
    entries = []
    for file_type, table_seed in DATASETS:
        name = f"synthetic{table_seed}"
        data = root / f"data_{name}"
        data.mkdir(parents=True)
        build_table(n=160, seed=table_seed).to_csv(data / f"{name}.csv", index=False)
        write_json(data / f"{name}.json", {"title": f"Synthetic visits {table_seed}", "license": "CC0-1.0"})
        config = DesignConfig(file_types=(file_type,))
        outcome = steps.start(f"local/{name}", str(root / "work"))
        outcome = steps.source_step(outcome, "local", str(data))
        outcome = steps.profile_step(outcome)
        outcome = steps.design_step(outcome, SEED, "heuristic", config.model_dump_json())
        outcome = steps.postprocess_step(outcome, SEED)
        outcome = steps.finalize_step(outcome, str(tree), SEED, config.digest())
        assert outcome.ok, f"{outcome.stage}: {outcome.reason}"
        entries.append(read_json(Path(outcome.work_dir) / steps.ENTRY_JSON))
    write_question_list(tree, entries)
    return tree


needs_sandbox = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")


@pytest.fixture(scope="session")
def small_tree(tmp_path_factory) -> Path:
    """The DARE tasks only (no dsagentbench/)."""
    return build_small_tree(tmp_path_factory.mktemp("dsagent_tree"))


@pytest.fixture(scope="session")
def desktop_tree(small_tree: Path, tmp_path_factory) -> tuple[Path, dict]:
    """A copy of the small tree with dsagentbench/ written, and write_dsagent's report."""
    tree = Path(shutil.copytree(small_tree, tmp_path_factory.mktemp("dsagent_a") / "tasks"))
    return tree, write_dsagent(tree, SEED)
