"""The stage steps of a local build in worker processes, so that every core computes.

The local runner's Prefect tasks run in threads of one process, and the steps
(reading a wheel's table, profiling, designing, post-processing, finalizing) are
Python that holds the GIL: a whole-corpus build used one core of two. Inside
`step_processes(workers)`, `run_step` hands a step to one of `workers` processes
and waits with the GIL released, while the Prefect task around it stays in this
process (its task run, states and logs are the same). A step is a pure function
of its arguments and its work folder (pipeline.steps), so where it runs never
changes a byte it writes. Outside the block, and in a Dask worker (a process of
its own already), `run_step` calls the step here.

The workers are started with `spawn`: fresh interpreters with this process's
environment (the designer's API settings, the sandbox switches) and no state
copied from a process that runs threads; the caller's main script is hidden
while they start (finalize.sandbox.starting_processes), so a script that calls
the flow without a `__main__` guard is not run again in them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from collections.abc import Callable, Iterator
from typing import TypeVar

from finalize.sandbox import starting_processes
from pipeline.core.environment import pin_blas_threads

T = TypeVar("T")

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None


@contextlib.contextmanager
def step_processes(workers: int) -> Iterator[None]:
    """Run the steps `run_step` is given in `workers` processes until the block ends (none when
    `workers` < 2: one process is this one)."""
    global _pool
    if workers < 2:
        yield
        return
    with _lock:
        # Another build of this process holds the pool (two flows run at once): its workers serve both.
        own = _pool is None
        if own:
            _pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_start_worker, initargs=(os.getpid(),))
            pool = _pool
    if not own:
        yield
        return
    try:
        yield
    finally:
        with _lock:
            _pool = None
        pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(parent: int) -> None:
    """A worker computes with one BLAS thread, as the building process does (pin_blas_threads). It waits
    on its task queue, whose write end it holds too, so it would outlive a build killed with SIGKILL (a
    crashed or stopped run): it leaves as soon as its parent is gone."""
    pin_blas_threads()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)
    threading.Thread(target=watch, name="daregen-parent-watch", daemon=True).start()


def run_step(step: Callable[..., T], *args, **kwargs) -> T:
    """`step(*args, **kwargs)` in a worker process of the open step_processes block, else here. Should
    the pool break (a worker killed, by the out-of-memory killer say), the step runs here, as it did
    before workers existed."""
    pool = _pool
    if pool is None:
        return step(*args, **kwargs)
    try:
        with starting_processes():  # the pool may start a worker in submit: never re-running the caller's script
            future = pool.submit(step, *args, **kwargs)
        return future.result()
    except BrokenProcessPool:
        return step(*args, **kwargs)
