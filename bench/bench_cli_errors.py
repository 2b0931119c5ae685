"""How long each common mistake (bench/cli_mistakes.py) costs before daregen says so: the wall time of the
real `daregen` console script, interpreter start included, from launch to its exit with one line.
The goal is under 2 s each on the shared 2-core machine. Also prints a bare interpreter start-up
(`python -c pass`) measured in the same run, the floor no check can go below.

    .venv/bin/python bench/bench_cli_errors.py [--repeat 3]

Prints, per mistake, the best of --repeat runs, the exit code and the error line; last, `RESULT {json}`
for bench/run_all.py.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cli_mistakes import clean_env, make_folders, mistakes, run  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="daregen-bench-cli-"))
    make_folders(root)
    env = clean_env(root)
    floor = min(_timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))[0]
                for _ in range(args.repeat))
    print(f"load average {os.getloadavg()[0]:.1f}; interpreter start-up alone {floor:.2f} s")
    worst = 0.0
    for m in mistakes():
        best, proc = min((_timed(lambda m=m: run(m, root, env)) for _ in range(args.repeat)), key=lambda t: t[0])
        worst = max(worst, best)
        line = proc.stderr.strip().splitlines()
        print(f"{best:5.2f} s  exit {proc.returncode}  {m.name}: {line[0] if line else '(nothing on stderr)'}")
    print(f"slowest {worst:.2f} s (goal < 2 s); load average {os.getloadavg()[0]:.1f}")
    print("RESULT " + json.dumps({"mistakes": len(mistakes()), "slowest_s": round(worst, 2),
                                  "floor_s": round(floor, 2), "repeat": args.repeat}))
    return 0


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


if __name__ == "__main__":
    sys.exit(main())
