"""A hostile card costs at most its own dataset and a stopped build publishes nothing: a design has a wall-clock
budget that rejects its dataset in one line while the build goes on, a 1 MiB card of one punctuation mark builds
like any other, and SIGTERM stops a build whose design is stuck, promptly, with one line and the published tree as
it was (issue 48)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline.build import BuildJob, build_one
from pipeline.core import names
from pipeline.core.crash_points import CRASH_MARKER_ENV, CRASH_POINT_ENV
from pipeline.publish import generations_dir
from pipeline.step_processes import OverBudget, within_budget
from pipeline.steps import DESIGN_TIMEOUT
from tests.factories import write_datasets
from tests.orchestration_helpers import child_env, daregen_build, kill_group

HOSTILE_LINE = "`" * ((1 << 20) - 4096)  # one line of backticks, under the 1 MiB card cap


def _catastrophic() -> bool:
    """A pattern that backtracks for ages (2^40 steps), as a hostile card once made `stated.target-line` do."""
    return re.match(r"(a+)+$", "a" * 40 + "!") is not None


def test_a_call_past_its_budget_is_stopped_and_one_within_it_answers():
    with pytest.raises(OverBudget, match=r"over its budget of 1 s \(wall clock\)"):
        within_budget(1.0, _catastrophic)
    assert within_budget(60.0, sum, [1, 2, 3]) == 6
    with pytest.raises(ZeroDivisionError):  # an error comes back whole, as if the call had run here
        within_budget(60.0, divmod, 1, 0)


def test_a_design_past_its_budget_rejects_its_dataset_in_one_line(tmp_path):
    data = tmp_path / "data"
    write_datasets(data, n=1)
    job = BuildJob.make(0, design_budget_s=0.001)  # no design reads its dataset in a millisecond
    outcome = build_one("local/d0", "local", str(data), job, tmp_path / "work", tmp_path / "tasks", through="design")[0]
    assert (outcome.ok, outcome.stage, outcome.code) == (False, "design", DESIGN_TIMEOUT)
    assert outcome.reason == "design stopped: over its budget of 0.001 s (wall clock), the operator's design budget"
    done = build_one("local/d0", "local", str(data), BuildJob.make(0), tmp_path / "work2", tmp_path / "tasks2",
                     through="design")[0]
    assert done.ok, done.reason


def _hostile_folder(data: Path, card_name: str, card: str) -> None:
    folder = data / "hostile"
    folder.mkdir(parents=True)
    pd.DataFrame({"a": range(80), "b": [i % 5 for i in range(80)]}).to_csv(folder / "hostile.csv", index=False)
    (folder / card_name).write_text(card, encoding="utf-8")


def _run(args: list[str], env: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    proc = daregen_build(args, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        pytest.fail(f"the build did not finish within {timeout} s")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("card_name, card", [
    ("README.md", f"# Hostile\n\n{HOSTILE_LINE}\n"),
    ("dataset-metadata.json", json.dumps({"title": "Hostile", "description": HOSTILE_LINE,
                                          "resources": [{"path": "hostile.csv", "schema": {"fields": [
                                              {"name": "a", "description": HOSTILE_LINE[:100_000]}]}}]})),
])
def test_a_build_fed_a_hostile_1_mib_card_finishes_and_skips_only_that_dataset(tmp_path, prefect_api_url,
                                                                                card_name, card):
    data = tmp_path / "data"
    write_datasets(data, n=2)
    _hostile_folder(data, card_name, card)
    out = tmp_path / "tasks"
    done = _run(["--sources", f"local:{data}", "--out", str(out), "--design-budget", "300"],
                child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / names.RUN_REPORT_JSON).read_text())
    rejected = {r["ref"]: r for r in report["rejections"]}
    assert "local/hostile" in rejected and "local/d0" not in rejected and "local/d1" not in rejected
    assert "\n" not in rejected["local/hostile"]["reason"]


def test_sigterm_stops_a_build_whose_design_is_stuck(tmp_path, prefect_api_url):
    data = tmp_path / "data"
    write_datasets(data, n=2)
    out = tmp_path / "tasks"
    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url)
    first = _run(["--sources", f"local:{data}", "--out", str(out), "--limit", "1"], env)
    assert first.returncode == 0, first.stderr[-3000:]
    published, manifest = os.readlink(out), (out / names.MANIFEST).read_bytes()

    marker = tmp_path / "design.reached"
    proc = daregen_build(["--sources", f"local:{data}", "--out", str(out), "--seed", "1"],
                         {**env, CRASH_POINT_ENV: "design-step", CRASH_MARKER_ENV: str(marker)},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 900
    while not marker.exists():  # a design is running, and will not end by itself for an hour
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "no design started"
        time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)  # to the build's own process, as `kill PID` does
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        pytest.fail("the build ignored SIGTERM")
    kill_group(proc)  # anything of its group still alive would be a leak; it is reaped here either way
    assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert err.strip().splitlines()[-1] == ("daregen: stopped by SIGTERM: nothing was published, the published tree "
                                            "is as it was")
    assert os.readlink(out) == published and (out / names.MANIFEST).read_bytes() == manifest
    assert sorted(p.name for p in generations_dir(out).iterdir() if not p.name.startswith(".")) == [
        Path(published).name]  # no partial generation left beside the published one
