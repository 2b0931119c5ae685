"""Decisions are not builds: approving tasks after a build and publishing the approved ones, against the build.

  (a) `daregen build --limit N` (a fresh cache, nothing published), under an empty ledger;
  (b) `daregen curate approve REF --tree TREE` for the first K tasks of (a)'s tree;
  (c) `daregen build --limit N --publish approved` at another --out, same cache and ledger.

Approvals are not part of the build cache key (pipeline.core.curation.Ledger.decisions_json), so (c)
restores every task from the cache and only stamps the review states, writes the root files and
publishes; with no stage to run, the CLI makes it without starting Prefect
(pipeline.build.cached_build_before_start). Each step is run as an operator runs it, a command timed from start to exit (start-up and
Prefect's ephemeral server included). Prints the wall times side by side and (c)/(a).

    .venv/bin/python bench/bench_approve.py [--limit 300] [--approve 3] [--seed 0]

Without Prefect (cached_build_before_start), niced on 2 cores shared with other sessions (load average 14):
  --limit 20: build 175.7 s (6 tasks), 3 approvals 8.5 s, --publish approved 12.4 s (7.1%; 11.9% with the
  approvals); its phases: source 2.5 s, root files 3.2 s, tree reports 2.9 s, the rest start-up;
  --limit 300: build 439.0 s (103 tasks), 3 approvals 9.4 s, --publish approved 16.9 s (3.8%; 6.0%).
Through Prefect's ephemeral server, before, on a quiet machine (2 cores, load average 1.7-2.1; `--limit 300`
is the build curators review):
  --limit 300: build 134.4 s (103 tasks), 3 approvals 2.0 s, --publish approved 9.15 s (6.8%);
  --limit 40: build 53.4 s (13 tasks), 3 approvals 1.8 s, --publish approved 9.05 s (16.9%).
Earlier, on 2 cores shared with other sessions (load average 8-17), niced:
  --limit 20: build 79.2 s (6 tasks), 3 approvals 2.9 s, --publish approved 15.0 s (18.9%);
  --limit 40: build 81.1 s (13 tasks), 3 approvals 2.4 s, --publish approved 14.7 s (18.1%).
The release's phases add up to about 3.5 s (guard import 1.6 s, tree reports 1.5 s); the rest is
the command's start-up and Prefect's ephemeral server, a fixed cost that a larger build dilutes.
Before approvals left the key, the issue measured 78 s against a 25 s rerun.
Since issue 48 (c) makes the approved tasks' desktop tasks afresh (an approved release never reads the
DSAgentBench cache). The code before and after, back to back, 2 cores at load average 13-18, --limit 40:
  before: build 317.2 s, --publish approved 42.67 s (13.5%), root files phase 0.9 s;
  after:  build 306.2 s, --publish approved 56.74 s (18.5%), root files phase 15.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(argv: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - started, proc


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--limit", type=int, default=300)
    p.add_argument("--approve", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    daregen = str(Path(sys.executable).parent / "daregen")
    tmp = Path(tempfile.mkdtemp(prefix="daregen-bench-approve-"))
    env = {**os.environ, "DAREGEN_CACHE": str(tmp / "cache"), "PREFECT_HOME": str(tmp / "prefect")}
    env.pop("PREFECT_API_URL", None)
    ledger, built, release = tmp / "curation.toml", tmp / "built", tmp / "release"
    ledger.write_text("", encoding="utf-8")
    common = ["--limit", str(args.limit), "--seed", str(args.seed), "--curation", str(ledger)]
    try:
        a, proc = _run([daregen, "build", "--out", str(built), *common], env)
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        entries = json.loads((built / "question_list.json").read_text(encoding="utf-8"))
        chosen = []
        for entry in entries[: args.approve]:
            meta = json.loads((built / entry["file_path"] / "verify" / "all_metadata.json").read_text(encoding="utf-8"))
            chosen.append((meta["daregen"]["ref"], meta["question"]["problem_type"]))
        b = 0.0
        for ref, problem_type in chosen:
            took, proc = _run([daregen, "curate", "approve", ref, "--problem-type", problem_type, "--tree", str(built),
                               "--curation", str(ledger)], env)
            b += took
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return 1
        c, proc = _run([daregen, "build", "--out", str(release), *common, "--publish", "approved"], env)
        published = json.loads((release / "question_list.json").read_text(encoding="utf-8")) \
            if (release / "question_list.json").is_file() else []
        restored = next((line for line in proc.stderr.splitlines() if "build cache:" in line), "(no cache line)")
        phases = (re.findall(r"seconds by phase: (.*)", proc.stderr) or ["(no phase line)"])[-1]
        load = os.getloadavg()
        print(f"\n--limit {args.limit}, seed {args.seed}; cpu_count={os.cpu_count()}, "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"  (a) daregen build                     {a:8.2f} s   {len(entries)} tasks")
        print(f"  (b) daregen curate approve x{len(chosen)}          {b:8.2f} s")
        print(f"  (c) daregen build --publish approved  {c:8.2f} s   {len(published)} tasks published; {restored}")
        print(f"      by phase: {phases}")
        print(f"  (c)/(a) = {100 * c / a:.1f}%;  (b+c)/(a) = {100 * (b + c) / a:.1f}%   "
              "(goal: under 25% at --limit 20, under 10% at --limit 300)")
        print("RESULT " + json.dumps({"limit": args.limit, "built": len(entries), "approved": len(chosen),
                                      "published": len(published), "build_s": round(a, 1),
                                      "approve_s": round(b, 2), "release_s": round(c, 2),
                                      "release_pct": round(100 * c / a, 1),
                                      "approve_and_release_pct": round(100 * (b + c) / a, 1)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
