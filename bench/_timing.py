"""Shared timing helper for the bench/ scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import time


def best_of(fn, repeat: int) -> float:
    """Best wall time of `repeat` calls: the least disturbed run on a shared, noisy machine."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)
