"""Shared timing helper for the bench/ scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time


def best_of(fn, repeat: int) -> float:
    """Best wall time of `repeat` calls: the least disturbed run on a shared, noisy machine."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def stop_group(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop a run started with start_new_session=True: its whole process group (a build's Prefect server
    with it), then reap it."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    proc.wait()


@contextlib.contextmanager
def busy_cores(n: int):
    """`n` other processes, each keeping one core fully busy (an interpreter spinning at normal
    priority), for the length of the block: issue 27's condition, "another process using one core
    fully", made on demand so a figure says what load it was measured under."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(0, n))]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
