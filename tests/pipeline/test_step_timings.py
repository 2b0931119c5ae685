"""run_report.json carries each unit's seconds per build step, under the step names the cost bench reads."""

from __future__ import annotations

import json
import math
from pathlib import Path

from pipeline.core import names
from pipeline.core.timing import collecting, timed


def _bench_module():
    """bench/bench_build_costs.py, loaded by path: putting bench/ on sys.path would also put it in every
    sandboxed job's view (the fork server inherits sys.path; tests/finalize/test_hostile_sandbox_view.py)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "bench_build_costs.py"
    spec = importlib.util.spec_from_file_location("bench_build_costs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def leaf_costs(report: dict):
    return _bench_module().leaf_costs(report)

PER_DATASET = {"source", "profile", "design"}
TABULAR = {"postprocess", "finalize", "finalize/writes", "finalize/mm check", "finalize/reference run",
           "finalize/file checks", "finalize/instruction check", "finalize/schema check", "cache store", "guard",
           "dsagent/make tasks", "dsagent/validation job", "dsagent/oracles", "dsagent/evaluations"}
SERIES = {"postprocess", "finalize", "finalize/reference run", "finalize/file checks", "cache store",
          "dsagent/make tasks", "dsagent/validation job", "dsagent/oracles", "dsagent/evaluations"}


def _timings(tree: Path) -> dict:
    return json.loads((tree / names.RUN_REPORT_JSON).read_text(encoding="utf-8"))


def test_every_built_task_has_each_step_timed(built_tree):
    report = _timings(built_tree)
    units = report["timings"]["units"]
    built = {u["task_dir"]: u for u in units if u["ok"]}
    assert sorted(built) == sorted(report["tasks"])
    # The session's build cache may already hold some of these tasks (other tests build the same
    # candidates): those were restored, not built, and say so.
    fresh = {d: u for d, u in built.items() if not u["cached"]}
    assert fresh
    for task_dir, unit in fresh.items():
        expected = SERIES if task_dir.endswith(names.TASK_SUFFIX["time_series_analysis"]) else TABULAR
        assert expected <= set(unit["seconds"]), (task_dir, expected - set(unit["seconds"]))
    for unit in units:
        assert all(isinstance(s, (int, float)) and math.isfinite(s) and s >= 0 for s in unit["seconds"].values())


def test_dataset_steps_are_counted_once_per_dataset(built_tree):
    """source, profile and design ran once per candidate: one unit per dataset carries them, so sums over
    units are the build's cost (a dataset's second task carries only its own steps)."""
    report = _timings(built_tree)
    units = report["timings"]["units"]
    assert sum("source" in u["seconds"] for u in units) == report["considered"]
    by_ref: dict[str, int] = {}
    for u in units:
        if "design" in u["seconds"]:
            ref = u["unit"].rsplit(" (", 1)[0]
            by_ref[ref] = by_ref.get(ref, 0) + 1
    assert by_ref and set(by_ref.values()) == {1}


def test_rejected_units_keep_the_steps_they_went_through(built_tree):
    report = _timings(built_tree)
    rejected = {r["ref"]: r["stage"] for r in report["rejections"]}
    # A rejection the session's build cache already held was restored, not reached again: skipped.
    units = {u["unit"]: u for u in report["timings"]["units"] if not u["ok"] and not u["cached"]}
    checked = 0
    for uid, unit in units.items():
        stage = rejected[uid]
        # A stage's own rejection; a dataset rejected before the design split is named by its bare ref
        # (a unit rejected after it by the build, e.g. a task folder taken, never ran that step itself).
        if stage in ("postprocess", "finalize") or (stage in PER_DATASET and " (" not in uid):
            assert stage in unit["seconds"], (uid, stage, unit["seconds"])
            checked += 1
    assert checked


def test_cost_table_leaves_add_up_to_the_measured_steps(built_tree):
    """The bench ranks leaves: a stage's parts plus its rest, never the stage and its parts twice."""
    report = _timings(built_tree)
    leaves, n_units = leaf_costs(report)
    assert n_units == len(report["timings"]["units"])
    assert "finalize" not in leaves and "finalize (rest)" in leaves and "finalize/reference run" in leaves
    whole = sum(u["seconds"].get("finalize", 0.0) for u in report["timings"]["units"])
    parts = sum(v for k, v in leaves.items() if k.startswith("finalize"))
    assert parts >= whole - 1e-6


def test_timed_blocks_add_up_only_inside_an_open_record():
    with timed("outside"):  # no record open: nothing to add to, and no error
        pass
    with collecting() as outer:
        with timed("a"):
            pass
        with timed("a"):
            pass
        with collecting() as inner:
            with timed("b"):
                pass
        with timed("c"):
            pass
    assert set(outer) == {"a", "c"} and set(inner) == {"b"}
    assert all(v >= 0 for v in (*outer.values(), *inner.values()))
