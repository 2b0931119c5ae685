"""Orchestration costs, measured side by side in one run on the built-in corpus:

  (a) a full build of N candidates through the flow (local thread runner, empty build cache);
  (b) the same work through pipeline.build.build_one (no Prefect) on a thread pool
      of the same size: (a) - (b) over N is Prefect's overhead per dataset;
  (c) a no-op nightly rerun (nothing upstream changed, the build cache is warm): target (c)/(a) <= 5%;
  (d) the flow on a Dask LocalCluster of 2 worker processes against 1 (empty caches).

Prefect's ephemeral server is started once before the timings (a build of 0 candidates), so
its start-up is not charged to any of them.

    .venv/bin/python bench/bench_orchestration.py [--limit 12] [--seed 0] [--no-dask]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.prefect_env import configure_prefect  # noqa: E402


def _timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def direct_build(limit: int, seed: int, out: Path) -> int:
    """The five stages without Prefect (pipeline.build.build_one per dataset) on a thread pool as wide as
    the flow's, then the guard and DSAgentBench: (a) - (b) is orchestration alone."""
    from finalize.dsagent.build import write_dsagent
    from pipeline.build import BuildJob, build_one, list_candidates
    from pipeline.guard import guard_staging_tree

    job = BuildJob.make(seed)
    out.mkdir(parents=True)
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        outcomes = [o for units in pool.map(lambda c: build_one(c.ref, c.source, c.arg, job, out / ".work", out),
                                            list_candidates("builtin", limit)) for o in units]
    outcomes = guard_staging_tree(out, outcomes)
    if any(o.ok for o in outcomes):
        write_dsagent(out, seed)
    return sum(o.ok for o in outcomes)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--limit", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-dask", action="store_true")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="daregen-bench-orch-"))
    os.environ.setdefault("PREFECT_HOME", str(tmp / "prefect"))
    configure_prefect()
    from flows import build_tasks

    def flow_build(name: str, **kw) -> dict:
        return build_tasks(out=str(tmp / name / "tasks"), limit=args.limit, seed=args.seed, sources="builtin",
                           cache_dir=str(tmp / name / "cache"), **kw)

    try:
        warm, _ = _timed(lambda: build_tasks(out=str(tmp / "warm"), limit=0, cache_dir=str(tmp / "warm_cache")))
        a, full = _timed(lambda: flow_build("full"))
        b, direct_ok = _timed(lambda: direct_build(args.limit, args.seed, tmp / "direct"))
        c, noop = _timed(lambda: flow_build("full"))
        n = args.limit
        print(f"{n} candidates of the built-in corpus, seed {args.seed}; {full['built']} tasks built "
              f"({direct_ok} by the direct loop); cpu_count={os.cpu_count()}")
        print(f"  Prefect ephemeral start (a 0-candidate build) {warm:8.2f} s   (not charged below)")
        print(f"  (a) full build through the flow            {a:8.2f} s   ({1000 * a / n:.0f} ms/candidate)")
        print(f"  (b) stage functions called directly        {b:8.2f} s   ({1000 * b / n:.0f} ms/candidate)")
        print(f"      Prefect overhead per candidate = ((a)-(b))/N = {1000 * (a - b) / n:.0f} ms;"
              f"  (a)/(b) = {a / b:.2f}")
        print(f"  (c) no-op nightly rerun (warm cache)       {c:8.2f} s   ({noop['cached']} of {noop['built']} "
              f"tasks from the cache)")
        print(f"      (c)/(a) = {100 * c / a:.1f}%   (target <= 5%)")
        if not args.no_dask:
            d1, r1 = _timed(lambda: flow_build("dask1", runner="dask", dask_workers=1))
            d2, r2 = _timed(lambda: flow_build("dask2", runner="dask", dask_workers=2))
            print(f"  (d1) Dask LocalCluster, 1 worker           {d1:8.2f} s   ({r1['built']} tasks)")
            print(f"  (d2) Dask LocalCluster, 2 workers          {d2:8.2f} s   ({r2['built']} tasks)")
            print(f"      (d1)/(d2) = {d1 / d2:.2f}   (ideal 2 on 2 idle cores; includes cluster start-up)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
