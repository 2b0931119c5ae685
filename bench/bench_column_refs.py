"""How often an IF question names a selected feature by its column name, per tree, side by side.

    .venv/bin/python bench/bench_column_refs.py TREE [TREE ...] [--examples N]

DARE-bench's questions refer to a feature by what it means ("the support stat of the Pokemon"), so an
agent must map the words to a column through metadata.txt; 16% of the selected features of its 88
tabular eval tasks appear by column name. For every tabular task of each TREE (its question_list.json
and each task's verify/all_metadata.json), a selected feature *carries its name* when the column name
appears in question_v1 as a whole word, case as written (backticked or not). Prints per tree: the
share of selected features that carry their name, the share that are backticked, the tasks naming
none, and, where the tree records it (all_metadata.json's daregen.feature_references), why each
feature is referred to as it is, reasons grouped with column names and figures blanked out.
Reads files only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.core import names  # noqa: E402


def carries_name(text: str, column: str) -> bool:
    """`column` appears in `text` as a whole word (neither letters, digits nor _ touch it), case as written."""
    return re.search(rf"(?<![\w]){re.escape(column)}(?![\w])", text) is not None


def reason_kind(reason: str) -> str:
    """A recorded reason with its specifics (quoted names, figures) blanked, so reasons group."""
    return re.sub(r"\d+(\.\d+)?", "N", re.sub(r"'[^']*'", "X", reason.split(" (overlap")[0]))


def measure(tree: Path) -> dict:
    listing = json.loads((tree / names.QUESTION_LIST).read_text(encoding="utf-8"))
    features = named = backticked = tasks = tasks_naming_none = 0
    reasons: Counter = Counter()
    examples: list[str] = []
    for entry in listing:
        task_dir = tree / entry["file_path"]
        meta_path = task_dir / names.VERIFY_DIR / names.ALL_METADATA
        if not meta_path.is_file() or not entry.get("question_v1"):
            continue
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        question = meta["question"]
        if question.get("problem_type") not in ("classification", "regression"):
            continue
        text = entry["question_v1"]
        recorded = {r["column"]: r for r in (meta.get("daregen") or {}).get("feature_references", [])}
        tasks += 1
        task_named = 0
        for column in question["selected_features"]:
            features += 1
            has = carries_name(text, column)
            named += has
            task_named += has
            backticked += f"`{column}`" in text
            ref = recorded.get(column)
            kind = f"{ref['by']}: {reason_kind(ref['reason'])}" if ref else "not recorded"
            reasons[(kind, has)] += 1
            if ref and has and len(examples) < 400:
                examples.append(f"{entry['file_path']}: {column!r} by {ref['by']} ({ref['reason']})")
        tasks_naming_none += task_named == 0
    return {"tasks": tasks, "features": features, "named": named, "backticked": backticked,
            "tasks_naming_none": tasks_naming_none, "reasons": reasons, "examples": examples}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="+", type=Path)
    p.add_argument("--examples", type=int, default=0, help="also list up to N features that carry their name")
    args = p.parse_args(argv)
    for tree in args.trees:
        m = measure(tree)
        share = m["named"] / m["features"] if m["features"] else 0.0
        print(f"{tree}: {m['tasks']} tabular IF tasks, {m['features']} selected features; "
              f"{m['named']} carry their column name in question_v1 ({share:.1%}), "
              f"{m['backticked']} backticked ({m['backticked'] / max(m['features'], 1):.1%}); "
              f"{m['tasks_naming_none']} tasks name none")
        for (kind, has), n in sorted(m["reasons"].items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:5d}  {'names it  ' if has else 'no name   '} {kind}")
        for line in m["examples"][:args.examples]:
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
