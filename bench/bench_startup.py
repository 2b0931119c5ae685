"""Start-up latency of `daregen build --limit 5`, side by side in one run: seconds from the command to
its first "source" progress line (the first wave's line; every dataset has been sourced by then).

  ours          `daregen build`, a second build: the Prefect home is already migrated (the warm-up
                build made it), the ephemeral server starts while the pipeline loads;
  naive         what a build did before: the flow called after the pipeline has loaded, Prefect
                starting its own ephemeral server at the flow's first API call, on a fresh
                throwaway PREFECT_HOME (a new SQLite database to create and migrate);
  naive, home   the same old path on the migrated home, to tell reuse of the home from the early start.

Each run is stopped (its process group, the server with it) as soon as the line appears, so the
build itself is not timed. Rows are interleaved, round after round, on a private build cache and
Prefect home under a temporary folder; the median of the rounds is printed, with cpu_count and the
load average. Run the same command on two commits to compare code.

With `--busy K`, K other processes each keep one core fully busy for the whole measurement (the
issue's condition: another process using one core fully; the goal is 10 s under it).

    .venv/bin/python bench/bench_startup.py [--rounds 3] [--limit 5] [--busy 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import busy_cores, stop_group  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parent.parent
FIRST_LINE = "  source "  # pipeline.progress.WaveProgress.finish of the source wave, plain-line mode
# The old `daregen build` after its argument checks (before this bench's commit): sources opened, the
# flow imported, the flow called; Prefect then starts its ephemeral server itself.
NAIVE = """import sys
from pipeline.prefect_env import configure_prefect
configure_prefect()
from pipeline.cli import open_sources
open_sources("builtin")
from flows import build_tasks
build_tasks(out=sys.argv[1], limit=int(sys.argv[2]))
"""


def time_to_first_source(argv: list[str], env: dict, timeout_s: float = 900) -> float:
    """Seconds from starting `argv` to its first source progress line; the process group is then killed."""
    t = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        for line in proc.stderr:
            if line.startswith(FIRST_LINE):
                return time.monotonic() - t
            if time.monotonic() - t > timeout_s:
                break
        raise RuntimeError(f"no source line from {' '.join(argv[:4])}... (exit {proc.poll()})")
    finally:
        stop_group(proc)
        proc.stderr.close()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--busy", type=int, default=0, help="other processes each keeping one core busy throughout")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="daregen-bench-startup-"))
    base = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    base.update({"DAREGEN_CACHE": str(tmp / "cache"), "PYTHONPATH": str(ROOT)})
    home = tmp / "prefect-home"
    daregen = [str(Path(sys.executable).parent / "daregen"), "build", "--limit", str(args.limit)]
    n = 0

    def out() -> str:
        nonlocal n
        n += 1
        return str(tmp / f"out{n}")

    runs = {
        "ours (daregen build, second build)": lambda: time_to_first_source(
            [*daregen, "--out", out()], {**base, "PREFECT_HOME": str(home)}),
        "naive (Prefect's own start, fresh home)": lambda: time_to_first_source(
            [sys.executable, "-c", NAIVE, out(), str(args.limit)],
            {**base, "PREFECT_HOME": tempfile.mkdtemp(dir=tmp, prefix="fresh-home-")}),
        "naive on the migrated home": lambda: time_to_first_source(
            [sys.executable, "-c", NAIVE, out(), str(args.limit)], {**base, "PREFECT_HOME": str(home)}),
    }
    try:
        with busy_cores(args.busy):  # the spinners stop before the figures print
            warm = runs["ours (daregen build, second build)"]()  # the first build: creates and migrates the home
            times: dict[str, list[float]] = {name: [] for name in runs}
            for r in range(args.rounds):
                order = list(runs) if r % 2 == 0 else list(reversed(runs))
                for name in order:
                    times[name].append(runs[name]())
        med = {name: statistics.median(ts) for name, ts in times.items()}
        ours = med["ours (daregen build, second build)"]
        print(f"seconds from `daregen build --limit {args.limit}` to its first source line; median of "
              f"{args.rounds} interleaved rounds; cpu_count={os.cpu_count()}, "
              f"{args.busy} other process(es) keeping a core busy throughout; load average "
              f"{os.getloadavg()[0]:.1f} at the end")
        print(f"  first build on a new home (warm-up)            {warm:7.2f} s")
        for name, ts in times.items():
            runs_s = ", ".join(f"{t:.1f}" for t in ts)
            print(f"  {name:<45}  {med[name]:7.2f} s   ({runs_s})   x{med[name] / ours:.2f} of ours")
        naive = med["naive (Prefect's own start, fresh home)"]
        print("RESULT " + json.dumps({"limit": args.limit, "rounds": args.rounds, "busy": args.busy,
                                      "first_build_s": round(warm, 2),
                                      "ours_s": round(ours, 2), "naive_fresh_s": round(naive, 2),
                                      "naive_migrated_s": round(med["naive on the migrated home"], 2),
                                      "naive_over_ours": round(naive / ours, 2)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
