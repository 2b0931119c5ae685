"""Where a build's time goes, per step, from the per-unit timings in run_report.json.

    .venv/bin/python bench/bench_build_costs.py RUN_REPORT.json [OTHER_RUN_REPORT.json] [--top N]
    .venv/bin/python bench/bench_build_costs.py --limit 100 [--out DIR] [--top N]

With one report it prints the top costs; with two (before, after) it prints them side by
side with the ratio. `--limit N` first runs `daregen build --limit N` into a temporary
folder with an empty build cache (so every task is built, nothing restored) and reads its report.

What the figures include (run_report.json's `timings.note` says the same):
- every step of every unit the build worked on, built or rejected: source, profile, design and its
  parts (time index: is the table a regular series; time series: the time-series designer; leak
  screens and learnability: the tabular designer's checks of each target it tries, both tasks of a
  pair included, the second task's few checks inside the same single design step),
  postprocess, finalize and its parts (writes, MM check, reference run, file checks,
  instruction check, schema check), storing the task in the build cache, the determinism
  guard's reference fits (both fresh interpreters, summed) and the DSAgentBench work made from
  each finished task (making its tasks, its sandboxed validation job: oracles, evaluations);
- each figure is wall seconds measured inside one worker thread; the build runs cpu_count at a time,
  so the steps sum to about cpu_count times the wall time they cover. A stage's `(rest)` is what its
  named parts leave (reading the work folder, sandbox start-up, Python between the parts).
- not included: Prefect's start-up and task overhead, the guard's two interpreter start-ups,
  the root files other than DSAgentBench, the reports and publishing; those are in `phases`
  (the build's own phase clock), printed below the table.

Leaves, not nested totals, are ranked, so the shares add up to 100% of the measured step time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


def leaf_costs(report: dict) -> tuple[dict[str, float], int]:
    """{leaf step: seconds summed over units} and the number of units that did any step."""
    totals: dict[str, float] = {}
    units = report["timings"]["units"]
    for unit in units:
        seconds = unit["seconds"]
        parents = {name.split("/", 1)[0] for name in seconds if "/" in name}
        for name, s in seconds.items():
            if name in parents or name == "dsagent/validation job":
                continue
            totals[name] = totals.get(name, 0.0) + s
        for parent in parents:
            whole = seconds.get(parent)
            if parent == "dsagent":
                whole = seconds.get("dsagent/validation job")
                if whole is None:
                    continue
                parts = sum(seconds.get(f"dsagent/{p}", 0.0) for p in ("oracles", "evaluations"))
                totals["dsagent/validation job (rest)"] = totals.get("dsagent/validation job (rest)", 0.0) + \
                    max(0.0, whole - parts)
                continue
            if whole is None:
                continue
            parts = sum(s for name, s in seconds.items() if name.startswith(parent + "/"))
            totals[f"{parent} (rest)"] = totals.get(f"{parent} (rest)", 0.0) + max(0.0, whole - parts)
    return totals, len(units)


def table(reports: list[dict], top: int) -> str:
    costs = [leaf_costs(r) for r in reports]
    considered = [r["considered"] for r in reports]
    first, _ = costs[0]
    order = sorted(set().union(*(c for c, _ in costs)), key=lambda k: (-first.get(k, 0.0), k))[:top]
    head = f"{'step':<34}" + "".join(f"{'s total':>10}{'s/cand':>8}{'share':>7}" for _ in reports)
    if len(reports) == 2:
        head += f"{'after/before':>14}"
    lines = [head]
    for name in order:
        row = f"{name:<34}"
        for (c, _), n in zip(costs, considered):
            total = sum(c.values()) or 1.0
            row += f"{c.get(name, 0.0):>10.1f}{c.get(name, 0.0) / max(n, 1):>8.3f}{c.get(name, 0.0) / total:>7.1%}"
        if len(reports) == 2:
            before, after = costs[0][0].get(name, 0.0), costs[1][0].get(name, 0.0)
            row += f"{(after / before if before else float('nan')):>14.2f}"
        lines.append(row)
    row = f"{'all measured steps':<34}"
    for (c, _), n in zip(costs, considered):
        row += f"{sum(c.values()):>10.1f}{sum(c.values()) / max(n, 1):>8.3f}{1:>7.0%}"
    if len(reports) == 2:
        row += f"{sum(costs[1][0].values()) / (sum(costs[0][0].values()) or 1.0):>14.2f}"
    lines.append(row)
    for r, (c, units) in zip(reports, costs):
        phases = ", ".join(f"{k} {v:.1f}" for k, v in r["timings"]["phases"].items())
        lines.append(f"\n{r['considered']} candidates, {units} units timed, {r['built']} tasks built, "
                     f"build wall {r['seconds']:.1f} s ({r['seconds'] / max(r['considered'], 1):.2f} s per "
                     f"candidate; x2328 = {r['seconds'] / max(r['considered'], 1) * 2328 / 3600:.2f} h)"
                     f"\n  phases (s): {phases}")
    return "\n".join(lines)


def run_build(limit: int, out: Path | None) -> dict:
    from pipeline.cli import main

    tmp = Path(tempfile.mkdtemp(prefix="bench-build-costs-"))
    os.environ["DAREGEN_CACHE"] = str(tmp / "cache")  # empty: every task built, none restored
    target = out or tmp / "tree"
    code = main(["build", "--limit", str(limit), "--out", str(target)])
    if code:
        sys.exit(code)
    return json.loads((target / "run_report.json").read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="*", type=Path, help="run_report.json (before, after)")
    parser.add_argument("--limit", type=int, help="run a build of this many candidates first")
    parser.add_argument("--out", type=Path, help="where --limit's build goes (default: a temporary folder)")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in args.reports]
    if args.limit is not None:
        reports.append(run_build(args.limit, args.out))
    if not reports or len(reports) > 2:
        parser.error("give one or two run_report.json files, or --limit N")
    for r in reports:
        if "timings" not in r:
            parser.error("a report has no per-step timings (built before they were recorded)")
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(table(reports, args.top))
    last = reports[-1]
    leaves, _ = leaf_costs(last)
    total = sum(leaves.values()) or 1.0
    top = sorted(leaves.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    per = last["seconds"] / max(last["considered"], 1)
    print("RESULT " + json.dumps({
        "candidates": last["considered"], "built": last["built"], "wall_s": round(last["seconds"], 1),
        "s_per_candidate": round(per, 2), "corpus_h": round(per * 2328 / 3600, 2),
        "top5": "; ".join(f"{k} {v:.0f} s ({v / total:.0%})" for k, v in top)}))


if __name__ == "__main__":
    main()
