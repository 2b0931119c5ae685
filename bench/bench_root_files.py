"""DSAgentBench's root files (write_dsagent: desktop tasks made, validated in the sandbox, judged) of one
built tree, this checkout against another commit, side by side, rounds interleaved.

    .venv/bin/python bench/bench_root_files.py TREE [--before main] [--tasks 24] [--rounds 2]

TREE is a published daregen tree; its first `--tasks` DARE task folders (and question_list.json) are
copied into a scratch tree per run, without dsagentbench/, and write_dsagent runs there with no cache,
in a fresh interpreter of each code (the other commit unpacked with `git archive`, run with this venv).
Both must write the same bytes (checked); the medians of the wall seconds and their ratio are printed
with cpu_count and the load average. A shared machine: read the ratio, measured side by side.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = """import sys, time
from pathlib import Path
from finalize.dsagent.build import write_dsagent
t = time.monotonic()
write_dsagent(Path(sys.argv[1]), 0)
print(time.monotonic() - t)
"""


def scratch_tree(tree: Path, dest: Path, n: int) -> None:
    entries = json.loads((tree / "question_list.json").read_text(encoding="utf-8"))[:n]
    dest.mkdir(parents=True)
    for e in entries:
        shutil.copytree(tree / e["file_path"], dest / e["file_path"])
    (dest / "question_list.json").write_text(json.dumps(entries), encoding="utf-8")


def digest(tree: Path) -> str:
    h = hashlib.sha256()
    for p in sorted((tree / "dsagentbench").rglob("*")):
        if p.is_file():
            h.update(p.relative_to(tree).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--before", default="main")
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-root-files-"))
    codes = {"before": tmp / "before-code", "after": ROOT}
    codes["before"].mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(codes["before"])], input=archive, check=True)
    walls: dict[str, list[float]] = {c: [] for c in codes}
    digests: dict[str, set[str]] = {c: set() for c in codes}
    lines = []
    try:
        for r in range(args.rounds):
            for c in (list(codes) if r % 2 == 0 else list(reversed(codes))):
                tree = tmp / f"{c}-{r}"
                scratch_tree(args.tree.resolve(), tree, args.tasks)
                at = "/".join(f"{x:.1f}" for x in os.getloadavg())
                started = time.monotonic()
                subprocess.run([sys.executable, "-c", RUN, str(tree)], cwd=codes[c], check=True, capture_output=True)
                walls[c].append(time.monotonic() - started)
                digests[c].add(digest(tree))
                lines.append(f"round {r + 1} {c}: {walls[c][-1]:.1f} s (load {at})")
                shutil.rmtree(tree)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    same = len(digests["before"] | digests["after"]) == 1
    med = {c: statistics.median(v) for c, v in walls.items()}
    print(f"machine: {os.cpu_count()} cores, load average now {'/'.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("\n".join(lines))
    print(f"write_dsagent on {args.tasks} DARE tasks, median of {args.rounds}: before {med['before']:.1f} s, "
          f"after {med['after']:.1f} s, after/before {med['after'] / med['before']:.2f}; same bytes: {same}")
    print("RESULT " + json.dumps({"tasks": args.tasks, "rounds": args.rounds, "before_s": round(med["before"], 1),
                                  "after_s": round(med["after"], 1),
                                  "after_over_before": round(med["after"] / med["before"], 2), "same_bytes": same}))
    if not same:
        sys.exit("the two codes wrote different dsagentbench/ bytes")


if __name__ == "__main__":
    main()
