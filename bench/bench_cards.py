"""DARE-bench's own eval cards as a yardstick: does daregen, given a task's training table and its card,
build a task, and on DARE-bench's target?

    .venv/bin/python bench/bench_cards.py CHECKOUT [--work DIR] [--limit N] [--reuse] [--through design]

`--through design` takes each dataset through the design stage only (in process, no reference run): the
tasks *designed*, an upper bound of those built, in minutes rather than the full build's half hour.

CHECKOUT is a clone of DARE-bench's public repository (github.com/Snowflake-Labs/dare-bench); nothing of
it is committed here. Every classification and regression eval task under `data/eval/databases/`
whose MM training table (`source/train_v2.*`) is in the checkout becomes a local dataset, twice:

  sidecar   `<name>.parquet` + `<name>.json` whose description is the whole `metadata.txt` (the card as
            one text, no column descriptions): how issue 41 first measured it;
  card      `<name>/train.parquet` + `<name>/metadata.txt`: the card read by sourcing.cards (its
            features table and column list parsed into column descriptions, its About section).

<name> is the task folder without its `_class`/`_reg` suffix (the suffix would tell the problem type);
a dataset with both a classification and a regression task gets `-2` on the second.
Each variant is built with the real CLI (`daregen build --sources local:DIR`), and the report gives:
tasks built / tasks, the share of built datasets whose task predicts DARE-bench's target
(`verify/all_metadata.json` question.target), and the skip reasons grouped by their leading words.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
_SUFFIX = re.compile(r"_(class|reg)$")


def eval_tasks(checkout: Path) -> list[Path]:
    """Tabular eval task folders, sorted."""
    base = checkout / "data" / "eval" / "databases"
    return sorted(p for p in base.iterdir() if _SUFFIX.search(p.name))


def training_table(task: Path) -> pd.DataFrame | None:
    """The task's MM training table, or None when the checkout lacks its file (a large file left out)."""
    source = task / "source"
    for name in ("train_v2.parquet", "train_v2.csv", "train_v2.sqlite"):
        path = source / name
        if not path.is_file() or path.stat().st_size == 0:
            continue
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
        if name.endswith(".csv"):
            return pd.read_csv(path)
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
            return pd.read_sql_query('SELECT * FROM "train_set"', con)
    return None


def dare_target(task: Path) -> list[str]:
    return json.loads((task / "verify" / "all_metadata.json").read_text(encoding="utf-8"))["question"]["target"]


def prepare(checkout: Path, work: Path, limit: int | None) -> dict[str, list[str]]:
    """Both input folders under `work`; {name: DARE-bench's target}."""
    sidecar, card = work / "in_sidecar", work / "in_card"
    sidecar.mkdir(parents=True, exist_ok=True)
    card.mkdir(parents=True, exist_ok=True)
    targets: dict[str, list[str]] = {}
    for task in eval_tasks(checkout)[:limit]:
        table = training_table(task)
        if table is None:
            continue
        name = _SUFFIX.sub("", task.name)
        if name in targets:  # one Kaggle dataset with a classification and a regression task: both, apart
            name += "-2"
        text = (task / "source" / "metadata.txt").read_text(encoding="utf-8", errors="replace")
        table.to_parquet(sidecar / f"{name}.parquet", index=False)
        (sidecar / f"{name}.json").write_text(json.dumps({"description": text}), encoding="utf-8")
        (card / name).mkdir(exist_ok=True)
        table.to_parquet(card / name / "train.parquet", index=False)
        (card / name / "metadata.txt").write_text(text, encoding="utf-8")
        targets[name] = dare_target(task)
    return targets


def build(folder: Path, out: Path, log: Path) -> None:
    cmd = [str(ROOT / ".venv" / "bin" / "daregen"), "build", "--sources", f"local:{folder}", "--out", str(out),
           "--force"]
    with open(log, "w") as fh:
        subprocess.run(["nice", "-n", "10", *cmd], stdout=fh, stderr=subprocess.STDOUT, check=False,
                       env={**os.environ, "PYTHONHASHSEED": "0"})


def design_only(folder: Path, out: Path) -> None:
    """The design stage only (source, profile, design), in process, as `daregen build` takes each dataset: a
    minutes-long yardstick for a rule change, written as `out/designed.json` ({name: [target, evidence kind,
    evidence]} or [null, stage, reason]) and a run_report.json of its rejections for score()."""
    import tempfile

    from pipeline import steps
    from pipeline.build import BuildJob, build_one, list_candidates

    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list] = {}
    rejections = []
    with tempfile.TemporaryDirectory(prefix="bench_cards_") as tmp:
        for c in list_candidates(f"local:{folder}", None):
            for o in build_one(c.ref, c.source, c.arg, BuildJob.make(0), Path(tmp) / "work", Path(tmp) / "tasks",
                               through="design"):
                if o.ok:
                    spec = steps.load_spec(Path(o.work_dir))
                    rows.setdefault(_ref_name(c.ref), []).append(
                        [list(spec.target), spec.target_evidence_kind, spec.target_evidence])
                else:
                    rows.setdefault(_ref_name(c.ref), []).append([None, o.stage, o.reason])
                    rejections.append({"ref": c.ref, "stage": o.stage, "reason": o.reason})
    (out / "designed.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    (out / "run_report.json").write_text(json.dumps({"rejections": rejections}), encoding="utf-8")


def _ref_name(ref: str) -> str:
    """`local/<name>` (or a unit's `local/<name> (ts)`) -> <name>."""
    return re.sub(r" \([a-z]+\)$", "", ref).removeprefix("local/").split("/")[0]


def _reason_group(reason: str) -> str:
    """A skip reason's leading words, its quoted names and figures blanked, for counting (a bench summary
    of a build's report; the build itself never reads its reasons back)."""
    head = re.split(r"[:(;]", re.sub(r"'[^']*'", "'…'", reason), maxsplit=1)[0]
    return re.sub(r"\blocal/\S+", "…", head).strip()


def score(out: Path, targets: dict[str, list[str]]) -> dict:
    """Datasets with a task, those on DARE-bench's target, and grouped skip reasons."""
    picked: dict[str, list[list[str]]] = {}
    if (out / "designed.json").exists():  # --through design
        for name, rows in json.loads((out / "designed.json").read_text(encoding="utf-8")).items():
            picked.update({name: [r[0] for r in rows if r[0]]} if any(r[0] for r in rows) else {})
    for meta in sorted(out.glob("*/verify/all_metadata.json")):
        doc = json.loads(meta.read_text(encoding="utf-8"))
        picked.setdefault(_ref_name(doc["daregen"]["ref"]), []).append(doc["question"]["target"])
    report = json.loads((out / "run_report.json").read_text(encoding="utf-8")) if (out / "run_report.json").exists() \
        else {"rejections": []}
    reasons: Counter[str] = Counter()
    seen: set[str] = set()
    for rej in report.get("rejections", []):
        name = _ref_name(str(rej.get("ref", "")))
        if name in targets and name not in picked and name not in seen:  # a dataset's first reason
            seen.add(name)
            reasons[f"{rej.get('stage', '?')}: {_reason_group(str(rej.get('reason', '')))}"] += 1
    built = [n for n in targets if n in picked]
    same = [n for n in built if any(set(t) == set(targets[n]) for t in picked[n])]
    return {"tasks": len(targets), "built": len(built), "dare_target": len(same),
            "other_target": {n: picked[n] for n in built if n not in same},
            "skipped_without_reason": sorted(set(targets) - set(picked) - seen),
            "reasons": dict(reasons.most_common())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--work", type=Path, default=ROOT / ".cache" / "bench_cards")
    parser.add_argument("--limit", type=int, default=None, help="first N eval task folders only")
    parser.add_argument("--reuse", action="store_true", help="score the existing builds in --work again")
    parser.add_argument("--through", choices=("finalize", "design"), default="finalize",
                        help="design: the design stage only, in process (tasks designed, not built)")
    args = parser.parse_args(argv)
    targets = prepare(args.checkout, args.work, args.limit)
    for variant in ("sidecar", "card"):
        out = args.work / (f"out_{variant}" if args.through == "finalize" else f"design_{variant}")
        if not args.reuse and args.through == "design":
            design_only(args.work / f"in_{variant}", out)
        elif not args.reuse:
            build(args.work / f"in_{variant}", out, args.work / f"build_{variant}.log")
        result = score(out, targets)
        (args.work / f"result_{variant}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        n, b, d = result["tasks"], result["built"], result["dare_target"]
        print(f"{variant:8} built {b} of {n} ({b / max(n, 1):.0%}); DARE-bench's target in {d} of {b} "
              f"({d / max(b, 1):.0%})")
        for reason, count in result["reasons"].items():
            print(f"           {count:3}  {reason}")
        if result["skipped_without_reason"]:
            print(f"           {len(result['skipped_without_reason'])} with no task and no listed reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
