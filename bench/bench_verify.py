"""Verification speed: `daregen verify --no-determinism`'s path against a fresh interpreter per task and a bare loop.

    .venv/bin/python bench/bench_verify.py [--tree TREE ...] [--limit 30] [--jobs 2] [--repeat 3]
                                           [--spread N [--min-val-rows R]]

Works on the tabular tasks (classification, regression) of the given trees, copied into one
temporary tree (with each tree's question_list.json entries), and times, side by side in one run:

  (a)  ours:  pipeline.review.verify.verify_tree(determinism=False), `--jobs` at a time: exactly what
              `daregen verify --no-determinism` runs after parsing its arguments. Per task: input
              safety, metadata schema, the IF reference re-run in the sandbox (batches of tasks of the
              tree per sandboxed job, the slow fits first: namespaces, new root, rlimits, nobody), the
              comparison with simulated_pred_local.csv, the file checks (ids, range filter, leaks), the
              instruction check and the MM-feasibility check (a single-feature tree per column, and the
              gradient-boosted fit unless the probes alone clear the margin: verify needs the verdict,
              not the scores the build records, and that verdict is the same);
  (a0) before: the same checks the way verify_tree ran them before batching: verify_task per task on
              `--jobs` threads, one sandboxed job per task and the checks after it;
  (b)  naive: one `python -m finalize.reference_solution TASK OUT` per task, as DARE-bench's local
              runner does, `--jobs` at a time too: the reference run only, no sandbox, no checks;
  (c)  bare:  an in-process loop calling reference_solution.predict per task, no isolation, no checks,
              one core: the floor for the fit/predict work itself;
  (d)  checks: the file checks (a) runs besides the reference (MM feasibility, ids, range filter, leaks,
              instruction) in an in-process loop, one core: with (c), what every check costs at least.

(a) and (a0) must give the same verdicts (checked). Start-up paid once (the fork server's imports,
this process's imports) is excluded from (a), (a0) and (c) and reported apart; (b) pays it per task,
which is the point. Also printed: the sandboxed reference runs alone, one job per task and batched,
and the fixed cost of an empty sandboxed job. Without --tree, or with --build, it builds a tree
(`daregen build --limit N --seed S`, not timed). Machines are shared and noisy: read the ratios
(printed with cpu_count and the load average).

A proxy of DARE-bench's evaluation set (98 tabular tasks, median ~300 validation rows) from a big
tree: `--spread N --min-val-rows R` keeps, of each --tree's tabular tasks with at least R scored
(MM) validation rows, N evenly spread by that row count (smallest, largest and N-2 in between), so
the kept set has the tree's size distribution above R rather than only its largest tasks. The
sizes of the kept tasks are printed. Issue 16's proxy: `--tree <the 2,328-candidate build>
--spread 98 --min-val-rows 100` (98 tasks, median 398 validation rows; DARE-bench's eval set has
a median near 300 but slower references, about 1 s per task bare against our 0.3 s, so the checks
weigh more here than there).
The last line is `RESULT {json}` for bench/run_all.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from finalize.runner import run_reference_sandboxed, run_references_batched
from finalize.sandbox import Limits, forkserver_context, run_in_sandbox, scrubbed_environment
from pipeline.review.verify import (TABULAR, _batches, _file_checks, _Ready, discover_tasks, reference_cost,
                                   verify_task, verify_tree)
from pipeline.core import names
from pipeline.core.jsonio import read_json
from _timing import best_of  # noqa: E402  (bench/ is on sys.path when run as a script)


def tabular_tasks(tree: Path) -> list[Path]:
    return [t for t in discover_tasks(tree)
            if read_json(t / names.VERIFY_DIR / names.ALL_METADATA)["question"]["problem_type"] in TABULAR]


def val_rows(task: Path) -> int:
    """Scored (MM) validation rows: the rows of verify/ground_truth.csv."""
    with open(task / names.VERIFY_DIR / names.GROUND_TRUTH, encoding="utf-8") as f:
        return sum(1 for _ in f) - 1


def spread(tasks: list[Path], n: int, min_val_rows: int) -> list[Path]:
    """`n` of the tasks with >= min_val_rows validation rows, evenly spaced in their order by that count."""
    sized = sorted((val_rows(t), t.name, t) for t in tasks)
    sized = [s for s in sized if s[0] >= min_val_rows]
    if len(sized) <= n:
        return sorted(t for _, _, t in sized)
    picks = sorted({round(i * (len(sized) - 1) / (n - 1)) for i in range(n)}) if n > 1 else [len(sized) // 2]
    return sorted(sized[i][2] for i in picks)


def merged_tree(trees: list[Path], out: Path, keep_n: int | None = None, min_val_rows: int = 0) -> Path:
    """The tabular tasks of `trees` as one tree at `out`, with their question_list.json entries;
    with `keep_n`, only spread(keep_n, min_val_rows) of each tree's."""
    out.mkdir(parents=True)
    entries = []
    for tree in trees:
        tasks = tabular_tasks(tree)
        if keep_n is not None:
            tasks = spread(tasks, keep_n, min_val_rows)
        for task in tasks:
            shutil.copytree(task, out / task.name)
        listing = tree / names.QUESTION_LIST
        if listing.is_file():
            keep = {t.name for t in tasks}
            entries += [e for e in read_json(listing) if e.get("file_path") in keep]
    (out / names.QUESTION_LIST).write_text(json.dumps(entries, indent=1), encoding="utf-8")
    return out


def run_ours(tree: Path, jobs: int) -> list[tuple]:
    report = verify_tree(tree, jobs=jobs, determinism=False)
    return [(v.task, v.status, v.problems) for v in report.verdicts]


def run_before(tasks: list[Path], jobs: int) -> list[tuple]:
    with ThreadPoolExecutor(jobs) as pool:
        return [(v.task, v.status, v.problems) for v in pool.map(verify_task, tasks)]


def run_checks(tasks: list[Path]) -> None:
    from threadpoolctl import threadpool_limits

    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        for task in tasks:
            meta = read_json(task / names.VERIFY_DIR / names.ALL_METADATA)
            _file_checks(_Ready(task, meta, meta["question"], (), 0.0))


def run_pool(tasks: list[Path], jobs: int) -> None:
    def one(task: Path) -> None:
        res = run_reference_sandboxed(task)
        if not res.ok:
            raise RuntimeError(f"{task.name}: {res.reason}")
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, tasks))


def run_batched(tasks: list[Path], jobs: int) -> None:
    keyed = {f"t{i:05d}": (t, read_json(t / names.VERIFY_DIR / names.ALL_METADATA)["question"])
             for i, t in enumerate(tasks)}
    costs = {k: reference_cost(*v) for k, v in keyed.items()}  # batched as verify_tree batches them
    with ThreadPoolExecutor(jobs) as pool:
        for results in pool.map(lambda keys: run_references_batched({k: keyed[k] for k in keys}),
                                _batches(list(keyed), jobs, costs)):
            bad = [k for k, r in results.items() if not r.ok]
            if bad:
                raise RuntimeError(f"{keyed[bad[0]][0].name}: {results[bad[0]].reason}")


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


def build_tree(limit: int, seed: int, out: Path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "build", "--limit", str(limit), "--seed", str(seed),
                           "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:  # the reason, on the last line run_all.py quotes
        raise SystemExit(f"daregen build failed (exit code {proc.returncode}): "
                         + " / ".join(proc.stderr.strip().splitlines()[-3:]))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tree", type=Path, action="append", default=[],
                   help="an existing DARE-layout tree; repeat for several (default: build one)")
    p.add_argument("--limit", type=int, default=30, help="candidates for the tree built without --tree")
    p.add_argument("--build", action="store_true", help="build that tree as well as the --tree ones")
    p.add_argument("--seed", type=int, default=0, help="seed of the built tree")
    p.add_argument("--jobs", type=int, default=2, help="tasks at once for (a), (a0) and (b) (default 2)")
    p.add_argument("--repeat", type=int, default=3, help="best of R runs for (a), (a0) and (c); (b) runs once")
    p.add_argument("--spread", type=int, default=None, metavar="N",
                   help="keep N tabular tasks of each tree, evenly spread by validation rows (a proxy set)")
    p.add_argument("--min-val-rows", type=int, default=0, metavar="R",
                   help="with --spread: only tasks with at least R validation rows")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        built = [build_tree(args.limit, args.seed, Path(tmp) / "built")] if args.build or not args.tree else []
        trees = [*args.tree, *built]
        tree = merged_tree(trees, Path(tmp) / "tabular", args.spread, args.min_val_rows)
        tasks = discover_tasks(tree)
        n = len(tasks)
        rows = sorted(val_rows(t) for t in tasks)
        print(f"{n} tabular tasks from {', '.join(map(str, trees))}: {', '.join(t.name for t in tasks)}")
        print(f"validation rows per task: median {rows[n // 2]}, min {rows[0]}, max {rows[-1]}")
        print(f"jobs={args.jobs}, best of {args.repeat}; cpu_count={os.cpu_count()}, "
              f"load average at start {os.getloadavg()[0]:.2f}")

        t = time.perf_counter()
        forkserver_context()
        run_reference_sandboxed(tasks[0])  # the fork server's imports, paid once per process
        warm_pool = time.perf_counter() - t
        t = time.perf_counter()
        run_bare(tasks[:1])  # this process's imports
        verify_task(tasks[0])  # and the checks' (scikit-learn's ensembles, the schema)
        warm_bare = time.perf_counter() - t

        idle = {iso: _median_ms(lambda: run_in_sandbox(int, limits=Limits(isolate=iso))) for iso in (True, False)}
        verdicts: dict[str, list] = {}
        ours = best_of(lambda: verdicts.__setitem__("ours", run_ours(tree, args.jobs)), args.repeat)
        before = best_of(lambda: verdicts.__setitem__("before", run_before(tasks, args.jobs)), args.repeat)
        bare = best_of(lambda: run_bare(tasks), args.repeat)
        checks = best_of(lambda: run_checks(tasks), 1)
        pool = best_of(lambda: run_pool(tasks, args.jobs), args.repeat)
        batched = best_of(lambda: run_batched(tasks, args.jobs), args.repeat)
        naive = best_of(lambda: run_naive(tasks, args.jobs, Path(tmp)), 1)
        load = os.getloadavg()
    if verdicts["ours"] != verdicts["before"]:
        raise SystemExit("(a) and (a0) gave different verdicts")
    statuses = {s: sum(v[1] == s for v in verdicts["ours"]) for s in sorted({v[1] for v in verdicts["ours"]})}

    def row(label: str, secs: float, extra: str = "") -> None:
        print(f"  {label:<52} {secs:8.2f} s   ({secs / n * 1000:.0f} ms/task{extra})")
    row(f"(a)  ours: verify --no-determinism path, {args.jobs} jobs", ours, f"; verdicts {statuses}")
    row(f"(a0) before: one sandboxed job per task, {args.jobs} jobs", before)
    row(f"(b)  one interpreter per task, no checks, {args.jobs} jobs", naive)
    row("(c)  bare in-process fit/predict, 1 core (floor)", bare)
    row("(d)  the file checks alone (MM, ids, instruction), 1 core", checks)
    row("     sandboxed reference runs only, one job per task", pool)
    row("     sandboxed reference runs only, batched", batched)
    print(f"  one-off start-up: fork server {warm_pool:.1f} s, this process's imports {warm_bare:.1f} s")
    print(f"  fixed cost of one empty sandboxed job: {idle[True]:.0f} ms isolated, {idle[False]:.0f} ms "
          f"with namespaces off (median of 9)")
    print(f"  (a)/(c) = {ours / bare:.2f}   (target <= 1.3)   (a0)/(c) = {before / bare:.2f}   "
          f"(b)/(a) = {naive / ours:.2f}")
    print(f"  ((c)+(d))/2 = {(bare + checks) / 2:.2f} s: ours' floor on 2 cores with every check; "
          f"(a)/that = {2 * ours / (bare + checks):.2f}")
    print(f"  load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    result = {"bench": "verify", "tasks": n, "jobs": args.jobs, "cpu_count": os.cpu_count(),
              "ours_s": round(ours, 2), "before_s": round(before, 2), "naive_s": round(naive, 2),
              "bare_s": round(bare, 2), "checks_s": round(checks, 2), "refs_per_task_job_s": round(pool, 2),
              "refs_batched_s": round(batched, 2), "refs_batched_over_bare": round(batched / bare, 2),
              "ours_over_bare_plus_checks_on_2_cores": round(2 * ours / (bare + checks), 2),
              "ours_over_bare": round(ours / bare, 2),
              "before_over_bare": round(before / bare, 2), "naive_over_ours": round(naive / ours, 2),
              "load_avg": round(load[0], 2)}
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
