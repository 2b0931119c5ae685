"""A sandboxed job's limits hold for the job as a whole: its processes together stay within the memory
limit (where a cgroup can be made), all it writes stays within its scratch space, and the interpreter,
the venv and daregen's code are read-only to it."""

from __future__ import annotations

import sys

import pytest

from finalize import sandbox
from finalize.sandbox import Limits, run_in_sandbox
from tests.finalize import hostile_jobs as jobs

pytestmark = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")

NO_CGROUP = "no cgroup here: the memory and process limits hold per process"


def test_children_together_stay_within_the_memory_limit() -> None:
    """Seven children of 500 MiB each want 3.5 GiB; each fits the per-process address-space limit."""
    limit = 5 << 29  # 2.5 GiB: the fork server's mappings (~1.8 GB) leave each child room for 500 MiB
    res = run_in_sandbox(jobs.memory_in_children, (7, 500), limits=Limits(memory_bytes=limit, wall_s=120))
    if NO_CGROUP in res.notes:
        pytest.skip("no cgroup can be made here")
    if res.status == "memory":  # the kernel chose the job itself to kill
        assert "job as a whole" in res.reason
        return
    assert res.ok, res.reason
    assert 0 < res.value["held_mb"] << 20 < limit, res.value


def test_a_write_bomb_fills_only_its_scratch_space() -> None:
    """Forty 8 MiB files in each writable place: the working directory and /tmp share one capped tmpfs."""
    scratch, chunk = 32 << 20, 8
    limits = Limits(file_bytes=chunk << 20, scratch_bytes=scratch, wall_s=120)
    res = run_in_sandbox(jobs.write_bomb, ([".", "/tmp", "/dev/shm"], chunk, 40), limits=limits)
    assert res.ok, res.reason
    written = res.value
    assert written["."] > 0
    assert written["."] + written["/tmp"] <= scratch + (1 << 20), written
    assert written["/dev/shm"] <= sandbox._SHM_BYTES, written


def test_one_file_beyond_the_file_limit_is_refused() -> None:
    res = run_in_sandbox(jobs.write_bomb, (["."], 16, 1), limits=Limits(file_bytes=8 << 20))
    assert res.ok, res.reason  # Python ignores SIGXFSZ: the write fails with EFBIG
    assert res.value["."] == 0


def test_the_venv_and_the_code_are_read_only() -> None:
    """The venv's .lock is mode 0666 on the host; through the job's read-only mounts nobody writes it."""
    targets = [f"{sys.prefix}/.lock", f"{sys.prefix}/pyvenv.cfg", f"{sys.prefix}/planted.py",
               f"{sandbox._CODE_ROOT}/finalize/planted.py"]
    res = run_in_sandbox(jobs.write_files, (targets,))
    assert res.ok, res.reason
    assert all(v.startswith("refused") for v in res.value.values()), res.value
