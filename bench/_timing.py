"""Shared timing helper for the bench/ scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import os
import signal
import subprocess
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
