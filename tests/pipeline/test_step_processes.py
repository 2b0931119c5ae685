"""A stage step handed to a worker process (pipeline.step_processes) returns the same Outcome and writes the
same bytes as the step run in this process; outside a pool, and when the pool breaks, it runs here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from pipeline.build import STAGES, STEPS, BuildJob, Candidate
from pipeline import steps
from pipeline.step_processes import run_step, step_processes
from tests.factories import build_table, write_local_dataset

DOC = {"title": "Synthetic visits", "license": "CC0-1.0", "target_hint": "label",
       "column_descriptions": {"x": "a standard normal score"}}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _chain(root: Path, data: Path, call) -> list[steps.Outcome]:
    """build_one's chain, each step through `call(step, prev, **kwargs)`."""
    job, candidate = BuildJob.make(3), Candidate("local", str(data), "local/synthetic")
    outcomes = [steps.start(candidate.ref, str(root / "work"))]
    for stage in STAGES:
        outcomes = [call(STEPS[stage], o, **job.step_args(stage, candidate, root / "tasks")) for o in outcomes]
        if stage == "design":
            outcomes = steps.split_units(outcomes)
    return outcomes


def _same(o: steps.Outcome) -> dict:
    return o.model_dump(exclude={"work_dir", "seconds"})


def test_steps_in_worker_processes_write_what_they_write_here(tmp_path):
    data = write_local_dataset(tmp_path / "data", "synthetic", build_table(n=200), **DOC)
    here = _chain(tmp_path / "here", data, lambda step, prev, **kw: step(prev, **kw))
    with step_processes(2):
        there = _chain(tmp_path / "there", data, run_step)
    assert here and all(o.ok for o in here), [(o.stage, o.reason) for o in here]
    assert [_same(o) for o in there] == [_same(o) for o in here]
    assert _files(tmp_path / "there" / "tasks") == _files(tmp_path / "here" / "tasks")
    # every stage ran, and timed itself, in the worker
    assert set(STAGES) <= set(there[0].seconds)


def _where(parent: int) -> str:
    return "here" if os.getpid() == parent else "worker"


def _dies_in_a_worker(parent: int) -> str:
    if os.getpid() != parent:
        os._exit(3)  # what the out-of-memory killer does to a worker
    return "here"


def test_a_step_runs_in_a_worker_only_inside_the_block_and_here_when_the_pool_breaks():
    me = os.getpid()
    assert run_step(_where, me) == "here"
    with step_processes(1):  # one process is this one
        assert run_step(_where, me) == "here"
    with step_processes(2):
        assert run_step(_where, me) == "worker"
        with step_processes(2):  # a second build in this process shares the workers
            assert run_step(_where, me) == "worker"
        assert run_step(_dies_in_a_worker, me) == "here"
    assert run_step(_where, me) == "here"


def test_workers_leave_when_their_build_is_killed(tmp_path):
    script = tmp_path / "build.py"
    script.write_text(
        "import os, sys, time\n"
        "from pipeline.step_processes import run_step, step_processes\n"
        "with step_processes(2):\n"
        "    print(run_step(os.getpid), flush=True)\n"
        "    time.sleep(600)\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    worker = int(proc.stdout.readline())
    assert worker != proc.pid
    proc.kill()  # SIGKILL: no cleanup runs in the build
    proc.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _alive(worker):
        time.sleep(0.2)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}/stat").exists() else "X"
    return status != "Z"  # a zombie has exited; init reaps it
