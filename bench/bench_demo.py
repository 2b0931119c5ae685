"""What `make demo` costs a new user: `daregen build --limit 50` (the demo's build) as a command, with a fresh
build cache and Prefect home, timed from launch to exit, and what it built.

    .venv/bin/python bench/bench_demo.py [--limit 50]

The venv is assumed installed (`make setup`), so install time is not included. Prints the CLI's summary,
then `RESULT {json}` for bench/run_all.py.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--limit", type=int, default=50, help="candidates, as the Makefile's DEMO_LIMIT (default 50)")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="daregen-bench-demo-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
        env.update(PREFECT_HOME=str(tmp / "prefect"), DAREGEN_CACHE=str(tmp / "cache"))
        out = tmp / "demo"
        started = time.perf_counter()
        proc = subprocess.run([str(Path(sys.executable).parent / "daregen"), "build", "--limit", str(args.limit),
                               "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        print(proc.stdout)
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return proc.returncode
        report = json.loads((out / "run_report.json").read_text(encoding="utf-8"))
        print("RESULT " + json.dumps({"limit": args.limit, "wall_s": round(wall, 1), "built": report["built"],
                                      "by_type": ", ".join(f"{n} {k}" for k, n in report["by_type"].items()),
                                      "considered": report["considered"]}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
