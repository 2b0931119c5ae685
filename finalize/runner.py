"""Run the reference solution for a task in the sandbox, with a timeout.

`forkserver` mode (the default) runs it through finalize.sandbox: a child forked
from a warm fork server (pandas and scikit-learn already imported), in a fresh
working directory holding only the two data files it reads, with no network, no
view of the task tree (so no ground truth), rlimits and a wall-clock limit. The
parsed `question` block is handed to the child in memory, so `verify/` never has
to be reachable. `subprocess` mode starts a fresh interpreter per task running
`python -m finalize.reference_solution` (slow, unsandboxed; DARE-bench's way).

Results must not depend on the machine's core count: the job limits BLAS and
OpenMP to one thread, since multi-threaded reductions may round differently.

`run_fresh_batch` is the determinism check's runner: one sandboxed job that starts
a *fresh* interpreter with a given PYTHONHASHSEED and runs the reference of many
tasks in sequence (`python -m finalize.runner BATCH_JSON`). Forked jobs all share
the fork server's hash seed, so only a new interpreter can show that a result does
not depend on set or dict-of-str iteration order; one per seed, not one per task,
keeps its cost to two interpreter start-ups per tree.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from finalize.sandbox import DETERMINISTIC_ENV, Limits, SandboxResult, run_in_sandbox, scrubbed_environment
from pipeline.core import names
from pipeline.core.environment import CODE_PACKAGES
from pipeline.core.jsonio import read_json
from pipeline.core.records import DatasetRejected

REFERENCE_TIMEOUT_S = 300
_ERR_CHARS = 300
BATCH_FILE = "batch.json"
__all__ = ["DETERMINISTIC_ENV", "REFERENCE_TIMEOUT_S", "reference_job", "reference_files", "run_reference",
           "run_reference_sandboxed", "run_fresh_batch", "run_references_batched"]


def reference_files(task_dir: Path, question: dict) -> dict[str, Path]:
    """The agent-side files the reference reads, under the names it reads them by."""
    ftype = question["save_file_type"]
    return {f"{names.SOURCE_DIR}/{names.data_file(stem, ftype)}":
            task_dir / names.SOURCE_DIR / names.data_file(stem, ftype)
            for stem in (names.TRAIN_V1_NO_ERR, names.VAL_V1)}


@functools.cache
def thread_controller():
    """threadpoolctl's view of the loaded BLAS and OpenMP libraries. Building it scans every loaded
    library (10-50 ms, which threadpool_limits pays on each call); finalize.warm_pool builds it in
    the fork server, so forked jobs inherit it and limiting threads costs them ~0.2 ms."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def reference_job(question: dict) -> str:
    """In the sandbox: reference_solution's workflow from the in-memory question (the sandbox
    never exposes verify/) and the working directory's source/ files; predictions as csv text."""
    import warnings

    from finalize.reference_solution import predict_from

    warnings.simplefilter("ignore")
    with thread_controller().limit(limits=1):
        out = predict_from(question, Path(names.SOURCE_DIR))
    return out.to_csv(index=False, lineterminator="\n")


def run_reference_sandboxed(task_dir: Path, timeout_s: float = REFERENCE_TIMEOUT_S,
                            question: dict | None = None) -> SandboxResult:
    """The reference's SandboxResult for `task_dir` (value: predictions as csv text when ok)."""
    q = question if question is not None else read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    return run_in_sandbox(reference_job, (q,), reference_files(task_dir, q), Limits(wall_s=timeout_s),
                          hide=(task_dir.resolve().parent,))


def _run_forked(task_dir: Path, out_csv: Path, timeout_s: float) -> None:
    q = read_json(task_dir / names.VERIFY_DIR / names.ALL_METADATA)["question"]
    missing = [name for name, path in reference_files(task_dir, q).items() if not path.is_file()]
    if missing:
        raise DatasetRejected(f"reference solution failed: missing input {', '.join(missing)}",
                              "reference_missing_input")
    res = run_reference_sandboxed(task_dir, timeout_s, q)
    if res.status == "timeout":
        raise DatasetRejected(f"reference solution {res.reason}"[:_ERR_CHARS], "reference_timeout")
    if not res.ok:
        raise DatasetRejected(f"reference solution failed: {res.reason}"[:_ERR_CHARS], "reference_failed")
    if not isinstance(res.value, str) or not res.value.strip():
        raise DatasetRejected("reference solution failed: missing output (no predictions returned)",
                              "reference_missing_output")
    out_csv.write_text(res.value, encoding="utf-8", newline="")


def _run_subprocess(task_dir: Path, out_csv: Path, timeout_s: float) -> None:
    env = scrubbed_environment(dict(os.environ))
    cmd = [sys.executable, "-m", "finalize.reference_solution", str(task_dir), str(out_csv)]
    try:
        proc = subprocess.run(cmd, cwd=task_dir, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise DatasetRejected(f"reference solution timed out after {timeout_s:.0f}s", "reference_timeout") from None
    if proc.returncode != 0 or not out_csv.exists():
        tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise DatasetRejected(f"reference solution failed: {tail[0]}"[:_ERR_CHARS], "reference_failed")


def predictions_digest(csv_text: str) -> str:
    return hashlib.sha256(csv_text.encode("utf-8")).hexdigest()


CODE_DIR = "_daregen_code"


def _code_files() -> dict[str, Path]:
    """daregen's Python sources, to be copied into the job folder for the fresh interpreter."""
    root = Path(__file__).resolve().parent.parent
    return {f"{CODE_DIR}/{py.relative_to(root).as_posix()}": py
            for pkg in CODE_PACKAGES for py in sorted((root / pkg).rglob("*.py"))}


def fresh_batch_job(batch: dict[str, dict], hash_seed: int, timeout_s: float) -> dict[str, dict]:
    """In the sandbox: write the batch, run it in a new interpreter with PYTHONHASHSEED=hash_seed
    (it inherits the namespaces, uid and rlimits), return its per-key report."""
    Path(BATCH_FILE).write_text(json.dumps(batch), encoding="utf-8")
    # The copy of daregen's code run_fresh_batch put beside the data: the checkout itself may sit
    # under a folder the sandbox hides (a clone in /tmp), where the new interpreter cannot import it.
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(Path(CODE_DIR).resolve())}
    proc = subprocess.run([sys.executable, "-m", "finalize.runner", BATCH_FILE], env=env, capture_output=True,
                          text=True, timeout=timeout_s)
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
        raise RuntimeError(f"fresh interpreter failed: {tail[0]}"[:_ERR_CHARS])
    return json.loads(proc.stdout)


def run_fresh_batch(tasks: dict[str, tuple[Path, dict]], hash_seed: int,
                    per_task_s: float = 60.0, hide: tuple[Path, ...] = ()) -> SandboxResult:
    """The reference of every task (key -> (task_dir, question)) in one fresh sandboxed interpreter;
    value when ok: {key: {"ok": True, "digest": sha256 of the predictions csv} | {"ok": False, "error": ...}},
    each with the "seconds" its reference took."""
    files: dict[str, Path] = dict(_code_files())
    for key, (task_dir, q) in tasks.items():
        files.update({f"{key}/{rel}": path for rel, path in reference_files(task_dir, q).items()})
    wall = 120.0 + per_task_s * len(tasks)  # one interpreter start-up, then the fits in sequence
    limits = Limits(wall_s=wall + 30.0, cpu_s=int(wall) + 30)
    batch = {key: q for key, (_, q) in tasks.items()}
    return run_in_sandbox(fresh_batch_job, (batch, hash_seed, wall), files, limits,
                          hide=tuple(dict.fromkeys([*hide, *(t.resolve().parent for t, _ in tasks.values())])))


def _batch_main(batch_file: str) -> int:
    """`python -m finalize.runner BATCH_JSON`: each key's reference from `KEY/source/`, digests as JSON."""
    import warnings

    from threadpoolctl import threadpool_limits

    from finalize.reference_solution import predict_from

    warnings.simplefilter("ignore")
    batch = json.loads(Path(batch_file).read_text(encoding="utf-8"))
    report: dict[str, dict] = {}
    with threadpool_limits(limits=1):
        for key in sorted(batch):
            started = time.perf_counter()
            try:
                out = predict_from(batch[key], Path(key) / names.SOURCE_DIR)
                text = out.to_csv(index=False, lineterminator="\n")
                report[key] = {"ok": True, "digest": predictions_digest(text)}
            except Exception as exc:  # one task's failure is that task's problem, not the batch's
                report[key] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:_ERR_CHARS]}
            report[key]["seconds"] = time.perf_counter() - started  # the build's cost profile only
    sys.stdout.write(json.dumps(report, sort_keys=True))
    return 0


# ------------------------------------------------ several tasks of one tree in one sandboxed job
# (daregen verify). A job costs ~0.3 s to set up (namespaces, a new root, three process hops), as much
# as a small task's fit: one job per batch pays it once per batch. A job is the trust boundary around
# one untrusted tree, and a batch only ever holds tasks of one tree, so batching lets a task see no
# more than the same tree's other agent-side files; verify/ and the tree stay hidden as before.


def reference_batch_job(batch: dict[str, dict]) -> dict[str, dict]:
    """In the sandbox: reference_job for each key's question on the files under KEY/source/, in key
    order; {key: {"ok": True, "csv": predictions} | {"ok": False, "error": one line}}."""
    import warnings

    from finalize.reference_solution import predict_from

    warnings.simplefilter("ignore")
    out: dict[str, dict] = {}
    with thread_controller().limit(limits=1):
        for key in sorted(batch):
            try:
                frame = predict_from(batch[key], Path(key) / names.SOURCE_DIR)
                out[key] = {"ok": True, "csv": frame.to_csv(index=False, lineterminator="\n")}
            except Exception as exc:  # noqa: BLE001 -- this task's failure, rerun on its own by the caller
                out[key] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:_ERR_CHARS]}
    return out


def run_references_batched(tasks: dict[str, tuple[Path, dict]],
                           timeout_s: float = REFERENCE_TIMEOUT_S) -> dict[str, SandboxResult]:
    """run_reference_sandboxed for every task (key -> (task_dir, question), all of one tree), through
    one sandboxed job for the lot. Each task's SandboxResult is the batch's when its reference gave
    predictions there; any task the batch did not answer with predictions (its own error, or the whole
    job timing out, crashing or running out of memory) is rerun alone with run_reference_sandboxed, so
    its verdict and reason are exactly those of a job of its own and one task never fails another."""
    files = {f"{key}/{rel}": path for key, (task_dir, q) in tasks.items()
             for rel, path in reference_files(task_dir, q).items()}
    hide = tuple(dict.fromkeys(task_dir.resolve().parent for task_dir, _ in tasks.values()))
    batch = run_in_sandbox(reference_batch_job, ({key: q for key, (_, q) in tasks.items()},), files,
                           Limits(wall_s=timeout_s), hide=hide)
    answers = batch.value if batch.ok and isinstance(batch.value, dict) else {}
    out: dict[str, SandboxResult] = {}
    for key, (task_dir, q) in tasks.items():
        entry = answers.get(key)
        if isinstance(entry, dict) and entry.get("ok") is True and isinstance(entry.get("csv"), str):
            out[key] = SandboxResult("ok", value=entry["csv"], wall_s=batch.wall_s, isolated=batch.isolated,
                                     notes=batch.notes)
        else:
            out[key] = run_reference_sandboxed(task_dir, timeout_s, q)
    return out


REFERENCE_RUNNERS = {"forkserver": _run_forked, "subprocess": _run_subprocess}


def run_reference(task_dir: Path, out_csv: Path, timeout_s: float = REFERENCE_TIMEOUT_S,
                  mode: str | None = None) -> None:
    """Write the reference predictions for `task_dir` to `out_csv`, or raise DatasetRejected."""
    mode = mode or os.environ.get("DAREGEN_REFERENCE_RUNNER", "forkserver")
    if mode not in REFERENCE_RUNNERS:
        raise ValueError(f"unknown reference runner {mode!r}; known: {', '.join(REFERENCE_RUNNERS)}")
    REFERENCE_RUNNERS[mode](task_dir, out_csv, timeout_s)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m finalize.runner BATCH_JSON", file=sys.stderr)
        sys.exit(2)
    sys.exit(_batch_main(sys.argv[1]))
