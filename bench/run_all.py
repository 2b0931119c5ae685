"""Run the benches in one go and write their figures as one Markdown table, with the machine's core count.

    .venv/bin/python bench/run_all.py [--only NAME ...] [--out bench/RESULTS.md] [--no-readme]

Each bench prints, as its last line, `RESULT {json}`; BENCHES below says how to run it and how to
turn that JSON into one table row. The table goes to bench/RESULTS.md (with the date, the commit,
cpu_count and the load average before and after; what RESULTS.md holds below its BY_HAND line is kept) and,
unless --no-readme, each bench's one headline figure beside its command between the
`<!-- bench-results:begin -->` and `<!-- bench-results:end -->` markers of README.md's "Headline figures".
Sizes are modest so the lot takes well under 15 minutes on 2 cores; each bench's own command line
takes bigger ones. A bench that fails is a row saying so; the others still run. With --only, the
other benches' rows are kept from the previous RESULTS.md, each marked with the run it comes from.

To add a bench: make it print `RESULT {json}` last, and add one Bench(...) line to BENCHES.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench-results:begin -->", "<!-- bench-results:end -->"
EXAMPLES = os.environ.get("DARE_EXAMPLES", "/work/shared/dare-examples")
TREE = os.environ.get("DAREGEN_BENCH_TREE", str(ROOT / "generated" / "tasks"))  # a built tree, for the root-files bench


@dataclass(frozen=True)
class Bench:
    name: str
    command: str  # run from the repository root; {python}, {examples} and {tree} are filled in
    row: str  # str.format of the RESULT JSON's fields: the table's "result" cell
    needs: str = ""  # a path that must exist, else the bench is skipped with that reason
    headline: str = ""  # str.format of the same fields: the README's one short figure ("" keeps it out)


BENCHES = [
    # DARE-sized tasks (DARE-bench's eval set: ~300 validation rows): a build's tasks with >= 100,
    # spread by size, since the tiny ones of a small build measure fixed costs, not verification.
    Bench("verify", "{python} bench/bench_verify.py --tree {examples} --build --limit 80 --seed 7 "
                    "--spread 30 --min-val-rows 100 --repeat 1",
          "{tasks} tabular tasks (a `--limit 80` build's with >= 100 validation rows, spread by size, "
          "and DARE's examples that have as many), {jobs} jobs: ours (`daregen verify --no-determinism`'s path) {ours_s} s, "
          "before batching {before_s} s, one interpreter per task {naive_s} s, bare fit/predict floor {bare_s} s; "
          "ours/floor **{ours_over_bare}** (target ≤ 1.3), before/floor {before_over_bare}, "
          "naive/ours {naive_over_ours}; the checks alone {checks_s} s on 1 core, ours/((floor+checks)/2) "
          "{ours_over_bare_plus_checks_on_2_cores}; sandboxed reference runs alone, batched {refs_batched_s} s "
          "({refs_batched_over_bare}× the floor), one job per task {refs_per_task_job_s} s",
          needs="{examples}", headline="`daregen verify` on DARE-sized tasks: **{ours_over_bare}×** a bare "
                                        "fit/predict ({tasks} tasks)"),
    Bench("orchestration", "{python} bench/bench_orchestration.py --limit 6",
          "{candidates} candidates, {built} tasks: flow {flow_s} s, the same build without Prefect {direct_s} s "
          "(Prefect {prefect_ms_per_candidate} ms/candidate, ×{flow_over_direct}); Prefect start {prefect_start_s} s "
          "apart; no-op rerun {noop_s} s = {noop_pct}% of the flow (without Prefect {noop_direct_s} s)",
          headline="Prefect's cost per candidate: **{prefect_ms_per_candidate} ms** ({candidates} candidates)"),
    Bench("start-up", "{python} bench/bench_startup.py --limit 5 --rounds 2",
          "seconds from `daregen build --limit {limit}` to its first source line, second build, median of "
          "{rounds}: ours **{ours_s} s** (goal ≤ 10 s), Prefect's own start on a fresh home {naive_fresh_s} s "
          "(×{naive_over_ours}), on the migrated home {naive_migrated_s} s; the very first build {first_build_s} s",
          headline="seconds to a build's first progress line: **{ours_s} s**"),
    Bench("no-op", "{python} bench/bench_noop.py --limit 40",
          "{limit} candidates, {built} tasks: full build {full_s} s, no-op rerun {noop_s} s = **{noop_pct}%** "
          "(goal ≤ 5% at --limit 300; unchanged, nothing published: {unchanged}); Prefect start not charged",
          headline="a rerun with nothing changed: **{noop_pct}%** of the full build ({noop_s} s of {full_s} s)"),
    Bench("start-up and no-op, side by side", "{python} bench/bench_speed.py --before main --limit 10 --rounds 2 --load 1",
          "main against this checkout, {load} busy process(es) alongside, median of {rounds}: first progress line "
          "{before_first_line_s} -> **{after_first_line_s} s**, candidate count {before_candidates_s} -> "
          "{after_candidates_s} s, first wave line {before_source_s} -> {after_source_s} s; `--limit {limit}` "
          "no-op {before_noop_s} -> {after_noop_s} s = {before_noop_over_full_build} -> "
          "**{after_noop_over_full_build}** of the full build",
          headline="first progress line, main against this checkout: {before_first_line_s} -> "
                   "**{after_first_line_s} s**"),
    Bench("root files, side by side", "{python} bench/bench_root_files.py {tree} --before main --tasks 24 --rounds 2",
          "DSAgentBench's root files of {tasks} DARE tasks, main against this checkout, median of {rounds}: "
          "{before_s} -> **{after_s} s** (×{after_over_before}); same bytes: {same_bytes}", needs="{tree}",
          headline="DSAgentBench root files of {tasks} tasks, main against this checkout: ×{after_over_before}"),
    Bench("build costs", "{python} bench/bench_build_costs.py --limit 30",
          "{candidates} candidates, {built} tasks, build wall {wall_s} s = {s_per_candidate} s per candidate "
          "(× 2328 candidates = {corpus_h} h); top five steps: {top5}",
          headline="build cost: **{s_per_candidate} s per candidate** ({candidates} candidates, {built} tasks)"),
    Bench("approve then publish", "{python} bench/bench_approve.py --limit 300 --approve 3",
          "`--limit {limit}` build ({built} tasks) {build_s} s; {approved} approvals {approve_s} s; rebuild with "
          "`--publish approved` ({published} published, every task from the cache) {release_s} s = "
          "**{release_pct}%** of the build, **{approve_and_release_pct}%** with the approvals (goal < 10%)",
          headline="approving 3 tasks and publishing them: **{approve_and_release_pct}%** of the build (goal < 10%)"),
    Bench("profile", "{python} bench/bench_profile.py --repeat 1",
          "naive pandas / daregen: long table {long_naive_s} / {long_ours_s} s (×{long_ratio}), "
          "wide {wide_naive_s} / {wide_ours_s} s (×{wide_ratio})",
          headline="profiling a long table: **×{long_ratio}** faster than naive pandas"),
    Bench("demo", "{python} bench/bench_demo.py --limit 50",
          "`daregen build --limit {limit}` (what `make demo` runs), fresh build cache and Prefect home, launch to "
          "exit: **{wall_s} s**, {built} tasks ({by_type}) from {considered} candidates",
          headline="`make demo` (venv installed): **{wall_s} s**, {built} tasks from {considered} candidates"),
    Bench("cli errors", "{python} bench/bench_cli_errors.py --repeat 1",
          "{mistakes} common mistakes across the commands, each one line and exit 2: slowest **{slowest_s} s** "
          "(goal < 2 s), interpreter start-up alone {floor_s} s",
          headline="a mistyped command's one-line error: at most **{slowest_s} s** ({mistakes} mistakes)"),
]


@dataclass(frozen=True)
class Outcome:
    bench: Bench
    command: str
    cell: str
    seconds: float
    when: str = ""  # set on rows kept from an earlier run (--only)
    headline: str = ""  # the README's figure; "" for a bench that failed, was skipped or has none


# RESULTS.md keeps what follows this line as it is (measurements by hand, earlier runs).
BY_HAND = "<!-- by hand: run_all.py keeps everything below this line -->"


def run(bench: Bench, python: str) -> Outcome:
    fill = {"python": python, "examples": EXAMPLES, "tree": TREE}
    command = bench.command.format(**fill)
    # No machine path in what is published: the interpreter, the examples and the tree by their names.
    shown = command.replace(python, ".venv/bin/python").replace(EXAMPLES, "$DARE_EXAMPLES").replace(TREE, "TREE")
    needs = bench.needs.format(**fill)
    if needs and not Path(needs).exists():
        return Outcome(bench, shown, f"skipped: {needs} does not exist", 0.0)
    print(f"== {bench.name}: {shown}", flush=True)
    start = time.monotonic()
    proc = subprocess.run(shlex.split(command), cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - start
    sys.stdout.write(proc.stdout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return Outcome(bench, shown, f"failed: {tail[:200]}", seconds)
    result = json.loads(lines[-1][len("RESULT "):])
    try:
        cell, headline = bench.row.format(**result), bench.headline.format(**result)
    except (KeyError, IndexError, ValueError) as exc:
        cell, headline = f"RESULT lacks {exc}: {json.dumps(result, sort_keys=True)}", ""
    return Outcome(bench, shown, cell, seconds, headline=headline)


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def table(outcomes: list[Outcome], load_before: tuple, load_after: tuple) -> str:
    """RESULTS.md's table: every bench's whole result, with the commit and the machine's load."""
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"Regenerated by `.venv/bin/python bench/run_all.py` on {when} at commit {commit()}: "
             f"cpu_count={os.cpu_count()}, load average {load_before[0]:.2f} before and {load_after[0]:.2f} "
             "after (a shared machine: read the ratios, which each bench measures side by side in one run).",
             "", "| bench | command | headline | result | wall |", "|---|---|---|---|---|"]
    for o in outcomes:
        kept = f" (kept from the run of {o.when})" if o.when else ""
        lines.append(f"| {o.bench.name} | `{o.command}` | {o.headline.replace('|', '/')} | "
                     f"{o.cell.replace('|', '/')}{kept} | {o.seconds:.0f} s |")
    return "\n".join(lines) + "\n"


def readme_table(outcomes: list[Outcome], load_before: tuple, load_after: tuple) -> str:
    """README's short table: one headline figure per bench that gave one, beside the command that gives it
    again; no commit and no machine path (RESULTS.md has the whole rows)."""
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    lines = ["| figure | command |", "|---|---|"]
    lines += [f"| {o.headline.replace('|', '/')} | `{o.command}` |" for o in outcomes if o.headline]
    lines += ["", f"Measured by `make bench-readme` ({when}, {os.cpu_count()} cores, load average "
                  f"{load_before[0]:.1f} at the start and {load_after[0]:.1f} at the end; a shared machine, so read "
                  "ratios before seconds). Each "
                  "bench's whole result, what it includes, and earlier measurements: "
                  "[bench/RESULTS.md](bench/RESULTS.md)."]
    return "\n".join(lines) + "\n"


def earlier_rows(path: Path) -> dict[str, Outcome]:
    """The rows of an earlier RESULTS.md, by bench name, for the benches --only does not rerun."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    stamp = re.search(r" on (\d{4}-\d\d-\d\d \d\d:\d\d UTC) at commit (\S+?):", text)
    when = f"{stamp.group(1)}, commit {stamp.group(2)}" if stamp else "an earlier run"
    by_name = {b.name: b for b in BENCHES}
    rows = {}
    generated = text.split(BY_HAND, 1)[0]
    for m in re.finditer(r"^\| ([^|`]+?) \| `([^`]*)` \| ([^|]*) \| (.*) \| (\d+) s \|$", generated, re.M):
        if m.group(1) in by_name:
            cell = re.sub(r" \(kept from the run of [^)]*\)$", "", m.group(4))
            prior = re.search(r" \(kept from the run of ([^)]*)\)$", m.group(4))
            rows[m.group(1)] = Outcome(by_name[m.group(1)], m.group(2), cell, float(m.group(5)),
                                       prior.group(1) if prior else when, headline=m.group(3))
    return rows


def by_hand(path: Path) -> str:
    """What RESULTS.md holds below BY_HAND (with the marker), kept as it is; "" when it has none."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return BY_HAND + text.split(BY_HAND, 1)[1] if BY_HAND in text else ""


def write_readme(readme: Path, text: str) -> bool:
    body = readme.read_text(encoding="utf-8")
    if BEGIN not in body or END not in body:
        return False
    head, rest = body.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")
    return True


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="*", default=None, help=f"bench names ({', '.join(b.name for b in BENCHES)})")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    p.add_argument("--no-readme", action="store_true", help="do not rewrite README.md's generated table")
    args = p.parse_args()
    unknown = set(args.only or ()) - {b.name for b in BENCHES}
    if unknown:
        p.error(f"unknown bench(es) {sorted(unknown)}")
    chosen = [b for b in BENCHES if args.only is None or b.name in args.only]
    load_before = os.getloadavg()
    kept = earlier_rows(args.out) if args.only is not None else {}
    fresh = {b.name: run(b, sys.executable) for b in chosen}
    outcomes = [fresh.get(b.name) or kept[b.name] for b in BENCHES if b.name in fresh or b.name in kept]
    load_after = os.getloadavg()
    text = table(outcomes, load_before, load_after)
    kept_by_hand = by_hand(args.out)
    args.out.write_text("# Measured by bench/run_all.py\n\n" + text + (f"\n{kept_by_hand}" if kept_by_hand else ""),
                        encoding="utf-8")
    print(f"\nwrote {args.out}")
    if not args.no_readme:
        print("rewrote README.md's table" if write_readme(ROOT / "README.md", readme_table(outcomes, load_before, load_after))
              else f"README.md has no {BEGIN} ... {END} markers; left alone")
    print(text)
    return 0 if all(not o.cell.startswith("failed") for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
