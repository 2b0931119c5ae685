"""Verification speed: the sandboxed warm pool against a fresh interpreter per task and a bare loop.

    .venv/bin/python bench/bench_verify.py [--tree TREE] [--limit 30] [--jobs 2] [--repeat 3]

Re-executes the IF reference of the same tabular tasks three ways, side by side in one run:

  (a) pool:  finalize.runner's sandboxed jobs (fork server with pandas and scikit-learn
             imported, one isolated child per task: namespaces, rlimits, nobody), `--jobs` at a time;
  (b) naive: one `python -m finalize.reference_solution TASK OUT` per task, as DARE-bench's
             local runner does, `--jobs` at a time too;
  (c) bare:  an in-process loop calling reference_solution.predict per task, no isolation,
             one core: the lower bound for the fit/predict work itself.

Without --tree it builds one (`daregen build --limit N`). Start-up costs paid once (the fork
server's imports, this process's imports) are excluded from (a) and (c) and reported apart;
(b) pays them per task, which is the point. Prints best-of-R seconds and (a)/(c), (b)/(a),
and where (a) spends its time beyond (c): the fixed cost of one sandboxed job that does
nothing (isolated, and with namespaces off), so a slow run can be told apart from a slow sandbox.
Machines are shared and noisy: read the ratios, not the seconds. On an overloaded machine each
hop between processes (caller, fork server, supervisor, job) waits in the run queue, which
(a) pays and (c) does not.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from finalize.runner import run_reference_sandboxed
from finalize.sandbox import Limits, forkserver_context, run_in_sandbox, scrubbed_environment
from pipeline.review.verify import TABULAR, discover_tasks
from pipeline.core import names
from pipeline.core.jsonio import read_json
from _timing import best_of  # noqa: E402  (bench/ is on sys.path when run as a script)


def tabular_tasks(tree: Path) -> list[Path]:
    return [t for t in discover_tasks(tree)
            if read_json(t / names.VERIFY_DIR / names.ALL_METADATA)["question"]["problem_type"] in TABULAR]


def run_pool(tasks: list[Path], jobs: int) -> None:
    def one(task: Path) -> None:
        res = run_reference_sandboxed(task)
        if not res.ok:
            raise RuntimeError(f"{task.name}: {res.reason}")
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, tasks))


def run_naive(tasks: list[Path], jobs: int, out_dir: Path) -> None:
    env = scrubbed_environment(dict(os.environ))

    def one(task: Path) -> None:
        subprocess.run([sys.executable, "-m", "finalize.reference_solution", str(task), str(out_dir / task.name)],
                       env=env, check=True, capture_output=True)
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, tasks))


def run_bare(tasks: list[Path]) -> None:
    from threadpoolctl import threadpool_limits

    from finalize.reference_solution import predict

    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        for task in tasks:
            predict(task).to_csv(index=False, lineterminator="\n")


def _median_ms(fn, n: int = 9) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return sorted(times)[n // 2]


def build_tree(limit: int, out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "--limit", str(limit), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree", type=Path, default=None, help="an existing DARE-layout tree (default: build one)")
    p.add_argument("--limit", type=int, default=30, help="candidates for the tree built without --tree")
    p.add_argument("--jobs", type=int, default=2, help="tasks at once for (a) and (b) (default 2)")
    p.add_argument("--repeat", type=int, default=3, help="best of R runs for (a) and (c); (b) runs once")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        tree = args.tree or build_tree(args.limit, Path(tmp) / "tasks")
        tasks = tabular_tasks(tree)
        print(f"{len(tasks)} tabular tasks from {tree}; jobs={args.jobs}, best of {args.repeat}")

        t = time.perf_counter()
        forkserver_context()
        run_reference_sandboxed(tasks[0])  # the fork server's imports, paid once per process
        warm_pool = time.perf_counter() - t
        t = time.perf_counter()
        run_bare(tasks[:1])  # this process's imports
        warm_bare = time.perf_counter() - t

        idle = {iso: _median_ms(lambda: run_in_sandbox(int, limits=Limits(isolate=iso))) for iso in (True, False)}
        pool = best_of(lambda: run_pool(tasks, args.jobs), args.repeat)
        bare = best_of(lambda: run_bare(tasks), args.repeat)
        naive = best_of(lambda: run_naive(tasks, args.jobs, Path(tmp)), 1)

    print(f"  (a) sandboxed warm pool, {args.jobs} jobs   {pool:8.2f} s   ({pool / len(tasks) * 1000:.0f} ms/task; "
          f"one-off fork-server start {warm_pool:.1f} s)")
    print(f"  (b) one interpreter per task, {args.jobs} jobs {naive:8.2f} s   "
          f"({naive / len(tasks) * 1000:.0f} ms/task)")
    print(f"  (c) bare in-process loop, 1 core     {bare:8.2f} s   ({bare / len(tasks) * 1000:.0f} ms/task; "
          f"one-off imports {warm_bare:.1f} s)")
    print(f"  fixed cost of one empty sandboxed job: {idle[True]:.0f} ms isolated, {idle[False]:.0f} ms "
          f"with namespaces off (median of 9)")
    print(f"  (a)/(c) = {pool / bare:.2f}   (target <= 1.3)")
    print(f"  (b)/(a) = {naive / pool:.2f}   (target >= 3)")


if __name__ == "__main__":
    main()
