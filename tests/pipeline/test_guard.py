"""The build's guard drops a task whose recorded predictions a fresh interpreter does not reproduce, removes its
folder with the reason, and keeps every honest task (ours, foreign and time series)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from finalize import sandbox
from finalize.schema import ALL_METADATA_SCHEMA, SCHEMA_DIR
from pipeline.core import names
from pipeline.core.jsonio import read_json, write_json
from pipeline.guard import guard_staging_tree
from pipeline.review.verify import discover_tasks
from pipeline.steps import ENTRY_JSON, Outcome
from tests.factories import DARE_EXAMPLES, NO_DARE_EXAMPLES, REG, our_task

pytestmark = [
    pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)"),
    pytest.mark.skipif(not (DARE_EXAMPLES / REG).exists(), reason=NO_DARE_EXAMPLES),
]


@pytest.mark.parametrize("cores", [2, 4])
def test_the_build_guard_drops_a_task_that_fresh_interpreters_do_not_reproduce(tree: Path, tmp_path: Path,
                                                                               cores: int) -> None:
    """Fresh interpreters (PYTHONHASHSEED 1 and 2718) reproduce every honest task; our task's recorded
    predictions, altered on one row as a hash-order bug in the warm pool would, no longer match them.
    With 4 cores the tasks are checked in two shares at once, with the same verdicts."""
    ours = our_task(tree)
    path = ours / names.VERIFY_DIR / names.SIMULATED_PRED
    sim = pd.read_csv(path, dtype=str, keep_default_na=False)
    target = read_json(ours / names.VERIFY_DIR / names.ALL_METADATA)["question"]["target"][0]
    sim.loc[0, target] = "no" if sim.loc[0, target] == "yes" else "yes"
    sim.to_csv(path, index=False, lineterminator="\n")
    outcomes = []
    for task in discover_tasks(tree):
        work = tmp_path / "work" / task.name
        work.mkdir(parents=True)
        write_json(work / ENTRY_JSON, {"file_path": task.name})
        outcomes.append(Outcome(ref=f"ref/{task.name}", work_dir=str(work), stage="finalize"))
    guarded = {o.ref.removeprefix("ref/"): o for o in guard_staging_tree(tree, outcomes, cores)}
    dropped = guarded[ours.name]
    assert not dropped.ok and dropped.stage == "verify" and not ours.exists()
    assert dropped.reason == ("determinism: simulated_pred_local.csv (written by a forked warm-pool job) differs "
                              "from a fresh interpreter's predictions")
    assert all(o.ok for name, o in guarded.items() if name != ours.name)  # foreign and time-series tasks kept
    assert (tree / REG).is_dir() and (tree / SCHEMA_DIR / ALL_METADATA_SCHEMA).is_file()
