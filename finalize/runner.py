"""Run the reference solution for a task in a child process, with a timeout.

Importing pandas and scikit-learn takes several seconds, far longer than fitting
a DARE-sized model, so a fresh interpreter per task would dominate build time.
Children are therefore forked from a multiprocessing fork server that imports
them once (`forkserver` mode, the default). Each job still runs in its own
process, so a crash, a hang or a memory blow-up takes down only that child.
`subprocess` mode starts a fresh interpreter per task (slow, fully independent).

Results must not depend on the machine's core count: the child limits BLAS and
OpenMP to one thread, since multi-threaded reductions may round differently.
The sandbox (rlimits, no network) replaces this runner in a later issue.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from multiprocessing import forkserver
import os
import subprocess
import sys
import threading
import traceback
from pathlib import Path

from pipeline.records import DatasetRejected

REFERENCE_TIMEOUT_S = 300
_ERR_CHARS = 300
PRELOAD = ["finalize.reference_solution", "sklearn.linear_model", "sklearn.neural_network", "sklearn.svm",
           "sklearn.tree", "sklearn.naive_bayes", "sklearn.compose", "pyarrow.parquet"]

DETERMINISTIC_ENV = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONWARNINGS": "ignore",
}

_ctx_lock = threading.Lock()
_ctx = None


@contextlib.contextmanager
def _main_script_hidden():
    """multiprocessing re-imports the caller's main *script* in the fork server and
    in every child, which would re-run a script that calls the pipeline without an
    `if __name__ == "__main__"` guard; hiding its path makes them import only the
    modules they need. Callers hold _ctx_lock, so no two threads swap it at once."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main_file is not None:
        del main.__file__
    try:
        yield
    finally:
        if main_file is not None:
            main.__file__ = main_file


def _forkserver():
    global _ctx
    with _ctx_lock:
        if _ctx is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
            with _main_script_hidden():
                forkserver.ensure_running()
            _ctx = ctx
    return _ctx


def _child(task_dir: str, out_csv: str, err_path: str) -> None:
    try:
        import warnings

        from threadpoolctl import threadpool_limits

        from finalize.reference_solution import predict

        warnings.simplefilter("ignore")
        with threadpool_limits(limits=1):
            predict(Path(task_dir)).to_csv(out_csv, index=False, lineterminator="\n")
    except BaseException as exc:  # report the reason to the parent, then die
        Path(err_path).write_text(traceback.format_exception_only(type(exc), exc)[-1].strip(), encoding="utf-8")
        os._exit(1)


def _run_forked(task_dir: Path, out_csv: Path, timeout_s: float) -> None:
    err = out_csv.with_name(out_csv.name + ".err")
    proc = _forkserver().Process(target=_child, args=(str(task_dir), str(out_csv), str(err)), daemon=True)
    with _ctx_lock, _main_script_hidden():
        proc.start()
    proc.join(timeout_s)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise DatasetRejected(f"reference solution timed out after {timeout_s:.0f}s")
    reason = err.read_text(encoding="utf-8") if err.exists() else ""
    err.unlink(missing_ok=True)
    if proc.exitcode != 0 or not out_csv.exists():
        out_csv.unlink(missing_ok=True)
        raise DatasetRejected(f"reference solution failed: {reason or f'exit code {proc.exitcode}'}"[:_ERR_CHARS])


def _run_subprocess(task_dir: Path, out_csv: Path, timeout_s: float) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_KEY", "_TOKEN", "_SECRET"))}
    env.update(DETERMINISTIC_ENV)
    cmd = [sys.executable, "-m", "finalize.reference_solution", str(task_dir), str(out_csv)]
    try:
        proc = subprocess.run(cmd, cwd=task_dir, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise DatasetRejected(f"reference solution timed out after {timeout_s:.0f}s") from None
    if proc.returncode != 0 or not out_csv.exists():
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise DatasetRejected(f"reference solution failed: {tail[0]}"[:_ERR_CHARS])


RUNNERS = {"forkserver": _run_forked, "subprocess": _run_subprocess}


def run_reference(task_dir: Path, out_csv: Path, timeout_s: float = REFERENCE_TIMEOUT_S,
                  mode: str | None = None) -> None:
    """Write the reference predictions for `task_dir` to `out_csv`, or raise DatasetRejected."""
    mode = mode or os.environ.get("DAREGEN_REFERENCE_RUNNER", "forkserver")
    if mode not in RUNNERS:
        raise ValueError(f"unknown reference runner {mode!r}; known: {', '.join(RUNNERS)}")
    RUNNERS[mode](task_dir, out_csv, timeout_s)
