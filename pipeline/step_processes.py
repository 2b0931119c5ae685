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
import ctypes
import multiprocessing
import os
import signal
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
_stopping = threading.Event()  # set by SIGTERM (stopped_by_sigterm): a broken pool is then no reason to go on


class BuildStopped(BaseException):
    """SIGTERM reached the building process. A BaseException, so that no `except Exception` on the way out (a
    report written as a warning, a step's own guard) takes it for a failure to note and goes on."""


@contextlib.contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM stops the build promptly: the step workers are killed (a design stuck in a
    pattern would otherwise hold the pool's shutdown for hours, and Prefect's threads would wait on it) and
    BuildStopped is raised in the main thread, so that the callers' cleanup (the partial generation removed, the
    build lock released) runs on the way out. Outside the main thread (where no handler can be set) a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        _stopping.set()
        pool = _pool
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(OSError):
                process.kill()
        raise BuildStopped("stopped by SIGTERM")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        _stopping.clear()


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
        if _stopping.is_set():  # the workers were killed to stop the build: never carry on here
            raise BuildStopped("stopped by SIGTERM") from None
        return step(*args, **kwargs)


class OverBudget(Exception):
    """A call that did not finish within its wall-clock budget, and was stopped."""


def within_budget(budget_s: float, fn: Callable[..., T], *args, **kwargs) -> T:
    """`fn(*args, **kwargs)` in a child forked from this process, given `budget_s` wall-clock seconds: past
    them the child is killed and OverBudget raised, so that a step stuck where Python cannot interrupt it (a
    regular expression backtracking on a hostile card) costs its dataset, never the build. Forked, not spawned:
    the child starts in milliseconds with this process's imports. RuntimeError when the child dies without
    an answer (killed by the out-of-memory killer, say)."""
    ctx = multiprocessing.get_context("fork")
    reader, writer = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_answer, args=(writer, fn, args, kwargs), name="daregen-bounded-step")
    child.start()
    writer.close()
    try:
        if not reader.poll(budget_s):
            raise OverBudget(f"over its budget of {budget_s:g} s (wall clock)")
        try:
            ok, value = reader.recv()
        except EOFError:
            child.join()
            raise RuntimeError(f"its process died (exit code {child.exitcode})") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        reader.close()
    if not ok:
        raise value
    return value


def _answer(writer, fn: Callable, args: tuple, kwargs: dict) -> None:
    """The forked child: dies with its parent (a stopped build leaves no step running), answers once."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    try:
        result = (True, fn(*args, **kwargs))
    except BaseException as exc:  # handed back whole: the caller raises it as if it had run here
        result = (False, exc)
    writer.send(result)
    writer.close()


_PR_SET_PDEATHSIG = 1  # linux/prctl.h
