"""A build killed (-9) at any point leaves the published tree as it was, and a rerun resumes and ends where
an uninterrupted build ends."""

from __future__ import annotations

import json
import os
import subprocess
import time

from pipeline.core import names
from pipeline.publish import CRASH_MARKER_ENV, CRASH_POINT_ENV
from tests.factories import write_datasets
from tests.orchestration_helpers import child_env, daregen_build, kill_group

KILL_POINTS = ("source", "finalize", "switch")  # mid source wave, mid finalize wave, sealed but not switched


def _run(args: list[str], env: dict) -> None:
    proc = daregen_build(args, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-3000:]


def _manifest(out) -> dict:
    return json.loads((out / names.MANIFEST).read_text())


def test_kill_9_never_changes_the_published_tree_and_a_rerun_matches(tmp_path, prefect_api_url):
    data = tmp_path / "data"
    write_datasets(data, n=4)
    args = ["--sources", f"local:{data}", "--seed", "2"]
    ref_out, out = tmp_path / "ref" / "tasks", tmp_path / "live" / "tasks"
    _run(args + ["--out", str(ref_out)], child_env(tmp_path / "home_ref", tmp_path / "cache_ref", prefect_api_url))

    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url)
    _run(["--sources", f"local:{data}", "--seed", "1", "--out", str(out)], env)
    published, before = os.readlink(out), (out / names.MANIFEST).read_bytes()

    for point in KILL_POINTS:
        marker = tmp_path / f"{point}.reached"
        log = open(tmp_path / f"{point}.log", "w")
        proc = daregen_build(args + ["--out", str(out)],
                             {**env, CRASH_POINT_ENV: point, CRASH_MARKER_ENV: str(marker)},
                             stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 900
        while not marker.exists():
            assert proc.poll() is None, f"build ended before {point}: {(tmp_path / f'{point}.log').read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"{point} never reached"
            time.sleep(0.5)
        kill_group(proc)  # SIGKILL to the build's whole process group
        log.close()
        assert os.readlink(out) == published, f"killed at {point}, the pointer moved"
        assert (out / names.MANIFEST).read_bytes() == before, f"killed at {point}, the tree changed"

    _run(args + ["--out", str(out)], env)
    assert _manifest(out) == _manifest(ref_out)
    report = json.loads((out / names.RUN_REPORT_JSON).read_text())
    # the kill before the switch came after every task was finished and cached: nothing is redone
    assert report["cached"] == report["built"] > 0
    assert any("duplicate of local/d0" in r["reason"] for r in report["rejections"])
