"""The nightly no-op against the full build, measured side by side in one run on the built-in corpus:

  (a) a full build of N candidates through the flow, empty build cache, nothing published yet;
  (c) the same build again at the same --out with the same cache: nothing upstream changed.

Both include everything `daregen build` does after Prefect's start-up: listing candidates, the
source step, the build cache, the guard, DSAgentBench and root files, the run report, the tree
reports, the diff and publishing. Prefect's ephemeral server is started first by a 0-candidate
build and charged to neither. Prints both wall times, (c)/(a) (the goal: <= 5% at
--limit 300) and each build's seconds by phase (pipeline.build.Laps). Then

  (d) the no-op as an operator waits for it: `daregen build` run as a command, the same --out,
      cache and Prefect home, start-up (imports, Prefect's server) included; (d)/(a) too.

With `--busy K`, K other processes each keep one core fully busy through (a), (c) and (d) (the
issue's condition: another process using one core fully).

    .venv/bin/python bench/bench_noop.py [--limit 60] [--seed 0] [--repo PATH] [--busy 1]

`--repo` runs another checkout's code (e.g. main's) with this script, for a before/after figure.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr
from pathlib import Path

from _timing import busy_cores  # noqa: E402  (bench/ is on sys.path when run as a script)


class _Tee(io.TextIOBase):
    """stderr still shown, and kept for the `seconds by phase` line the build prints."""

    def __init__(self, stream) -> None:
        self.stream, self.text = stream, io.StringIO()

    def write(self, s: str) -> int:
        self.stream.write(s)
        self.text.write(s)
        return len(s)

    def flush(self) -> None:
        self.stream.flush()


def _phases(log: str) -> str:
    lines = re.findall(r"seconds by phase: (.*)", log)
    return lines[-1] if lines else "(no phase line)"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--limit", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    p.add_argument("--busy", type=int, default=0, help="other processes each keeping one core busy throughout")
    args = p.parse_args()
    sys.path.insert(0, str(Path(args.repo).resolve()))
    tmp = Path(tempfile.mkdtemp(prefix="daregen-bench-noop-"))
    os.environ.setdefault("PREFECT_HOME", str(tmp / "prefect"))
    os.environ["DAREGEN_CACHE"] = str(tmp / "cache")
    from pipeline.prefect_env import configure_prefect

    configure_prefect()
    from flows import build_tasks

    # The cache root, as DAREGEN_CACHE names it: build_tasks puts its build cache under root/tasks, so the
    # command in (d) finds the same one.
    out, cache = tmp / "tasks", tmp / "cache"

    def build(limit: int) -> tuple[float, dict, str]:
        tee = _Tee(sys.stderr)
        t = time.perf_counter()
        with redirect_stderr(tee):
            report = build_tasks(out=str(out), limit=limit, seed=args.seed, sources="builtin", cache_dir=str(cache))
        return time.perf_counter() - t, report, _phases(tee.text.getvalue())

    def command_noop() -> tuple[float, str]:
        """(d): `daregen build` as a command, timed from its start to its exit."""
        argv = [str(Path(args.repo).resolve() / ".venv" / "bin" / "daregen"), "build", "--limit", str(args.limit),
                "--seed", str(args.seed), "--out", str(out)]
        if not Path(argv[0]).exists():
            argv[0] = str(Path(sys.executable).parent / "daregen")
        t = time.perf_counter()
        # Its own ephemeral server, as an operator's command starts one: not this process's.
        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        proc = subprocess.run(argv, env=env, cwd=args.repo, capture_output=True, text=True)
        took = time.perf_counter() - t
        said = "unchanged" if "unchanged" in proc.stderr + proc.stdout else f"exit {proc.returncode}, not unchanged"
        return took, said

    try:
        with busy_cores(args.busy):  # the spinners stop before the figures print
            warm = time.perf_counter()
            build_tasks(out=str(tmp / "warm"), limit=0, cache_dir=str(tmp / "warm_cache"))
            warm = time.perf_counter() - warm
            a, full, phases_a = build(args.limit)
            c, noop, phases_c = build(args.limit)
            d, said = command_noop()
        load = os.getloadavg()
        print(f"\n{args.limit} candidates of the built-in corpus, seed {args.seed}, code {args.repo}; "
              f"cpu_count={os.cpu_count()}, {args.busy} other process(es) keeping a core busy throughout; "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"  Prefect ephemeral start (a 0-candidate build) {warm:8.2f} s   (not charged below)")
        print(f"  (a) full build, empty cache        {a:8.2f} s   {full['built']} tasks")
        print(f"      by phase: {phases_a}")
        print(f"  (c) no-op rerun, nothing changed   {c:8.2f} s   {noop.get('cached')} of {noop['built']} tasks "
              f"from the cache; {'unchanged, nothing published' if noop.get('unchanged') else 'republished'}")
        print(f"      by phase: {phases_c}")
        print(f"  (c)/(a) = {100 * c / a:.1f}%   (goal <= 5% at --limit 300)")
        print(f"  (d) `daregen build` again, start-up included {d:8.2f} s   {said}")
        print(f"  (d)/(a) = {100 * d / a:.1f}%")
        print("RESULT " + json.dumps({"limit": args.limit, "busy": args.busy, "built": full["built"],
                                      "full_s": round(a, 1), "noop_s": round(c, 2), "noop_pct": round(100 * c / a, 1),
                                      "command_noop_s": round(d, 2), "command_noop_pct": round(100 * d / a, 1),
                                      "unchanged": bool(noop.get("unchanged"))}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
