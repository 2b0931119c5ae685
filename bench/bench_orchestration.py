"""Orchestration costs, measured side by side in one run on the built-in corpus, like with like:

  (b) without Prefect: pipeline.build.build_generation (the function the flow calls) with a plain
      thread-pool wave runner as wide as the flow's, each stage's step called directly (the same
      functions flows.py wraps in Prefect tasks), into a fresh output and build cache. It does
      everything the flow does: the stage waves, dedupe, the build cache, the determinism guard,
      DSAgentBench and the root files, the run report, the tree reports, the checks and publishing;
  (a) the flow: flows.build_tasks, the same build through Prefect (local thread runner, fresh output
      and build cache), plus what only the flow does: Prefect's task runs, the summary log and artifact.
      ((a) - (b)) / N is Prefect's overhead per candidate;
  (c) a no-op nightly rerun of (a) (nothing upstream changed, the build cache is warm): target
      (c)/(a) <= 5%; and (c') the same rerun of (b), without Prefect;
  (d) with --dask: the flow on a Dask LocalCluster of 2 worker processes against 1 (empty caches).

Reported apart, charged to none of them: Prefect's ephemeral start (the first flow run of the
process, a build of 0 candidates) and the imports of the stages (a direct build of 1 candidate,
which runs before everything else). cpu_count and the load average are printed; the last line is
`RESULT {json}` for bench/run_all.py.

    .venv/bin/python bench/bench_orchestration.py [--limit 12] [--seed 0] [--dask]
"""

from __future__ import annotations

import argparse
import json
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


def thread_waves(pool):
    """A pipeline.build.WaveRunner without Prefect: each stage's step (the function flows.py's Prefect
    task for that stage calls) on every outcome still ok, on `pool`; failed outcomes pass through."""
    from pipeline import build_cache
    from pipeline.build import STEPS

    direct = {**STEPS, "finalize": build_cache.finalize_and_store}  # as flows.finalize_task

    def run_wave(stage: str, outcomes: list, args) -> list:
        futures = {i: pool.submit(direct[stage], o, **args(o)) for i, o in enumerate(outcomes) if o.ok}
        done = list(outcomes)
        for i, fut in futures.items():
            done[i] = fut.result()
        return done
    return run_wave


def direct_build(out: Path, cache: Path, limit: int, seed: int) -> dict:
    """What flows.build_tasks does for `runner="local"`, without Prefect: build_generation with thread_waves."""
    from pipeline.build import BuildJob, build_generation
    from pipeline.publish import build_lock, check_out_target, new_generation

    started = time.monotonic()
    out = Path(os.path.abspath(out))
    check_out_target(out)
    with build_lock(out), ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        staging = new_generation(out)
        try:
            return build_generation(thread_waves(pool), BuildJob.make(seed), staging, out, sources="builtin",
                                    limit=limit, cache=cache, keep=3, started=started)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--limit", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dask", action="store_true", help="also time the flow on Dask LocalClusters (slow)")
    p.add_argument("--no-dask", action="store_true", help="(the default; kept for old command lines)")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="daregen-bench-orch-"))
    os.environ.setdefault("PREFECT_HOME", str(tmp / "prefect"))
    load_start = os.getloadavg()[0]
    imports, _ = _timed(lambda: direct_build(tmp / "imports" / "tasks", tmp / "imports" / "cache", 1, args.seed))
    configure_prefect()
    from flows import build_tasks

    def flow_build(name: str, **kw) -> dict:
        return build_tasks(out=str(tmp / name / "tasks"), limit=args.limit, seed=args.seed, sources="builtin",
                           cache_dir=str(tmp / name / "cache"), **kw)

    def plain_build(name: str) -> dict:
        return direct_build(tmp / name / "tasks", tmp / name / "cache", args.limit, args.seed)

    try:
        warm, _ = _timed(lambda: build_tasks(out=str(tmp / "warm"), limit=0, cache_dir=str(tmp / "warm_cache")))
        b, direct = _timed(lambda: plain_build("direct"))
        a, full = _timed(lambda: flow_build("full"))
        c, noop = _timed(lambda: flow_build("full"))
        c2, noop2 = _timed(lambda: plain_build("direct"))
        n = args.limit
        load = os.getloadavg()
        print(f"{n} candidates of the built-in corpus, seed {args.seed}; {full['built']} tasks built by the flow, "
              f"{direct['built']} without Prefect; cpu_count={os.cpu_count()}, load average {load_start:.2f} at "
              f"start, {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at end")
        print("  (a) and (b) each: stage waves, build cache, determinism guard, DSAgentBench and root files, "
              "run report, tree reports, publish")
        print(f"  one-off, not charged: Prefect ephemeral start (a 0-candidate flow run) {warm:.2f} s; "
              f"the stages' imports (a 1-candidate build without Prefect) {imports:.2f} s")
        print(f"  (a) full build through the Prefect flow   {a:8.2f} s   ({1000 * a / n:.0f} ms/candidate)")
        print(f"  (b) the same build without Prefect        {b:8.2f} s   ({1000 * b / n:.0f} ms/candidate)")
        print(f"      Prefect overhead per candidate = ((a)-(b))/N = {1000 * (a - b) / n:.0f} ms;"
              f"  (a)/(b) = {a / b:.2f}")
        print(f"  (c) no-op nightly rerun of (a)            {c:8.2f} s   ({noop['cached']} of {noop['built']} "
              f"tasks from the cache); (c)/(a) = {100 * c / a:.1f}%   (target <= 5%)")
        print(f"  (c') no-op rerun of (b), without Prefect  {c2:8.2f} s   ({noop2['cached']} of {noop2['built']} "
              f"tasks from the cache); (c')/(b) = {100 * c2 / b:.1f}%")
        result = {"bench": "orchestration", "candidates": n, "built": full["built"], "cpu_count": os.cpu_count(),
                  "prefect_start_s": round(warm, 2), "flow_s": round(a, 2), "direct_s": round(b, 2),
                  "prefect_ms_per_candidate": round(1000 * (a - b) / n), "flow_over_direct": round(a / b, 2),
                  "noop_s": round(c, 2), "noop_pct": round(100 * c / a, 1), "noop_direct_s": round(c2, 2),
                  "load_avg": round(load[0], 2)}
        if args.dask:
            d1, r1 = _timed(lambda: flow_build("dask1", runner="dask", dask_workers=1))
            d2, r2 = _timed(lambda: flow_build("dask2", runner="dask", dask_workers=2))
            print(f"  (d1) Dask LocalCluster, 1 worker           {d1:8.2f} s   ({r1['built']} tasks)")
            print(f"  (d2) Dask LocalCluster, 2 workers          {d2:8.2f} s   ({r2['built']} tasks)")
            print(f"      (d1)/(d2) = {d1 / d2:.2f}   (ideal 2 on 2 idle cores; includes cluster start-up)")
            result.update(dask1_s=round(d1, 2), dask2_s=round(d2, 2))
        print("RESULT " + json.dumps(result, sort_keys=True))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
