"""Start-up and no-op of `daregen build`, this checkout against another commit, side by side, under load.

    .venv/bin/python bench/bench_speed.py [--before main] [--limit 40] [--rounds 2] [--load 1] [--full-rounds 1]

Both codes run with this checkout's venv: the other commit is unpacked (`git archive`) in a temporary
folder and run as `python -m pipeline.cli` from there (its own packages come first on sys.path). `--load`
processes each keep one core busy for the whole bench (the issue's condition: another process using one
core fully). For each code, in this order:

  full build   `daregen build --limit N` on an empty build cache and a new Prefect home (which it
               migrates, so the runs below find it warm): wall seconds and CPU seconds (the build's
               process and every process it waited for: Prefect's server, step workers, sandboxed
               jobs); with `--full-rounds K`, K of them per code, alternating, each on an empty cache;
               the two codes' trees are then compared: every manifest entry but environment.json and
               the manifest's code_version (`same tree` in the RESULT line);
  first line   interleaved with the other code, round after round: a second build of `--limit 5` into
               a new folder, timed from the command to its first progress line, the candidate count
               (`daregen: N candidate datasets`), and to its first wave line (`  source `), then stopped
               (its process group, the server with it), so the build itself is not timed;
  no-op        interleaved the same way: the full build's command again, nothing to do: wall seconds,
               and its share of the full build (the issue's goal: within 5%).

Medians of the rounds are printed with the after/before ratio, cpu_count and the load average at each
step. Timings are of a shared machine: read the ratios, measured side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import stop_group  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parent.parent
MARKS = {"first line": "daregen: ", "candidates": "candidate dataset", "source": "  source "}


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_build(code: Path, env: dict, args: list[str]) -> tuple[float, str, float]:
    """(wall seconds, stderr, CPU seconds of the build and the processes it waited for)."""
    started, cpu = time.monotonic(), _children_cpu()
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "build", *args], cwd=code, env=env,
                          capture_output=True, text=True, timeout=7200)
    if proc.returncode != 0:
        raise RuntimeError(f"build in {code} failed: {proc.stderr[-1500:]}")
    return time.monotonic() - started, proc.stderr, _children_cpu() - cpu


def manifest_view(tree: Path) -> dict:
    """A tree's manifest without what names the code (its code_version, environment.json's hash)."""
    manifest = json.loads((tree / "manifest.json").read_text())
    manifest.pop("code_version", None)
    manifest["files"] = {k: v for k, v in manifest["files"].items() if k != "environment.json"}
    return manifest


def until_lines(code: Path, env: dict, args: list[str]) -> dict[str, float]:
    """Seconds from the command to the first line holding each of MARKS; the run is then stopped."""
    seen: dict[str, float] = {}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "build", *args], cwd=code, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in proc.stderr:
            for name, mark in MARKS.items():
                if name not in seen and mark in line:
                    seen[name] = time.monotonic() - started
            if len(seen) == len(MARKS):
                return seen
        raise RuntimeError(f"{code}: the build ended before all of {sorted(MARKS)} (exit {proc.wait()})")
    finally:
        stop_group(proc, signal.SIGKILL)
        proc.stderr.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="main", help="the commit to compare with (default main)")
    parser.add_argument("--limit", type=int, default=40, help="candidates of the full build and its no-op")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--load", type=int, default=1, help="busy processes, one core each, during the bench")
    parser.add_argument("--full-rounds", type=int, default=1,
                        help="full builds per code, alternating, each on an empty cache (default 1)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-speed-"))
    before_code = tmp / "before-code"
    before_code.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(before_code)], input=archive, check=True)
    codes = {"before": before_code, "after": ROOT}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    rows: dict[str, dict[str, list[float]]] = {c: {} for c in codes}
    notes: list[str] = []
    try:
        envs = {c: {**os.environ, "PREFECT_HOME": str(tmp / c / "prefect"), "DAREGEN_CACHE": str(tmp / c / "cache"),
                    "DARE_EXAMPLES": os.environ.get("DARE_EXAMPLES", str(ROOT.parent / "shared" / "dare-examples"))}
                for c in codes}
        for env in envs.values():
            env.pop("PREFECT_API_URL", None)
        full_args = {c: ["--limit", str(args.limit), "--out", str(tmp / c / "tree")] for c in codes}
        for k in range(args.full_rounds):
            # The last round builds into the paths the rounds below rerun; the earlier ones into their own.
            last = k == args.full_rounds - 1
            for c in (list(codes) if k % 2 == 0 else list(reversed(codes))):
                env = envs[c] if last else {**envs[c], "DAREGEN_CACHE": str(tmp / c / f"cache-{k}")}
                out = full_args[c] if last else ["--limit", str(args.limit), "--out", str(tmp / c / f"tree-{k}")]
                at = load()
                wall, err, cpu = run_build(codes[c], env, out)
                rows[c].setdefault("full build", []).append(wall)
                rows[c].setdefault("full build CPU", []).append(cpu)
                phases = next((line.split(": ", 2)[-1] for line in err.splitlines() if "seconds by phase" in line), "")
                notes.append(f"{c}: full build {k + 1} --limit {args.limit} {wall:.1f} s wall, {cpu:.1f} s CPU "
                             f"(load {at} -> {load()}); {phases}")
        same_tree = manifest_view(tmp / "before" / "tree") == manifest_view(tmp / "after" / "tree")
        notes.append(f"the two codes' last full trees: {'the same' if same_tree else 'DIFFERENT'} manifest "
                     "(code_version and environment.json aside)")
        for r in range(args.rounds):
            order = list(codes) if r % 2 == 0 else list(reversed(codes))
            for c in order:
                at = load()
                seen = until_lines(codes[c], envs[c], ["--limit", "5", "--out", str(tmp / c / f"second-{r}")])
                for name, s in seen.items():
                    rows[c].setdefault(name, []).append(s)
                wall, err, _ = run_build(codes[c], envs[c], full_args[c])
                if "unchanged" not in err:
                    raise RuntimeError(f"{c}: the rerun was not a no-op: {err[-800:]}")
                rows[c].setdefault("no-op", []).append(wall)
                notes.append(f"round {r + 1} {c}: first line {seen['first line']:.1f} s, candidates "
                             f"{seen['candidates']:.1f} s, source {seen['source']:.1f} s, no-op {wall:.1f} s "
                             f"(load {at} -> {load()})")
    finally:
        for p in busy:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"machine: {os.cpu_count()} cores, {args.load} busy process(es) during the bench, load average now {load()}")
    print("\n".join(notes))
    med = {c: {k: statistics.median(v) for k, v in rows[c].items()} for c in codes}
    for c in codes:
        if "no-op" in med[c]:
            med[c]["no-op / full build"] = med[c]["no-op"] / med[c]["full build"]
    print(f"\n{'median':<22}{'before':>10}{'after':>10}{'after/before':>14}")
    for k in med["after"]:
        b, a = med["before"][k], med["after"][k]
        unit = "" if k == "no-op / full build" else " s"
        fmt = (lambda x: f"{x:.1%}") if not unit else (lambda x: f"{x:.1f}{unit}")
        print(f"{k:<22}{fmt(b):>10}{fmt(a):>10}{a / b:>14.2f}")
    flat = {f"{c}_{k.replace(' / ', '_over_').replace(' ', '_').replace('-', '')}": round(v, 3)
            for c in codes for k, v in med[c].items()}
    print("RESULT " + json.dumps({"limit": args.limit, "rounds": args.rounds, "full_rounds": args.full_rounds,
                                  "load": args.load, "same_tree": same_tree, **flat}))


if __name__ == "__main__":
    main()
