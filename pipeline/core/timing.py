"""Seconds spent per named step of one task, for run_report.json's cost profile.

    with collecting() as seconds:      # the build step (pipeline.steps) opens a record...
        with timed("reference run"):   # ...and any stage code inside adds to it
            ...

A record belongs to the context that opened it (a contextvar), so threads building
different tasks at once never mix their figures, and `timed` outside any record is a
no-op (tests, `daregen verify`). Timings only ever go into the run report, which sits
outside the manifest: no task file may depend on them.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from collections.abc import Iterator

_record: ContextVar[dict[str, float] | None] = ContextVar("daregen_step_seconds", default=None)


@contextmanager
def collecting() -> Iterator[dict[str, float]]:
    """A fresh record of {step name: seconds} for the code run inside the block."""
    record: dict[str, float] = {}
    token = _record.set(record)
    try:
        yield record
    finally:
        _record.reset(token)


@contextmanager
def timed(name: str) -> Iterator[None]:
    """Add the block's wall time to `name` in the open record (repeated blocks add up)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        add(name, time.perf_counter() - start)


def add(name: str, seconds: float) -> None:
    """Add measured seconds to `name` in the open record, if any."""
    record = _record.get()
    if record is not None:
        record[name] = record.get(name, 0.0) + seconds
