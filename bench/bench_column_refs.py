"""How often an IF question names a selected feature by its column name, per tree, side by side.

    .venv/bin/python bench/bench_column_refs.py TREE [TREE ...] [--examples N]

DARE-bench's questions refer to a feature by what it means ("the support stat of the Pokemon"), so an
agent must map the words to a column through metadata.txt. For every tabular task of each TREE (its
question_list.json and each task's verify/all_metadata.json), a selected feature *carries its name*
when the column name appears in question_v1 as a word in any case (pipeline.core.column_refs.name_match:
"the mother's age in years" carries `age`, "community income level" carries `Income`); that strict
share is the headline. Beside it: the share that appear case as written, and the share that are
backticked. The issue's DARE-bench figure (16% of the selected features of its 88 tabular eval tasks)
counts case as written: the two published examples in ../shared/dare-examples carry 0 of 7 that way
and 5 of 7 strictly ("the child's age" for `Age`), so point the bench at them to compare.

Every feature that carries its name is listed with why, as the tree records it (all_metadata.json's
daregen.feature_references, name_in_question), or worked out from the recorded references for a
tree built before that was recorded; reasons are grouped with column names, quotes and figures
blanked out. Reads files only.
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
from pipeline.core.column_refs import name_match, why_name_appears  # noqa: E402
from pipeline.core.task_metadata import FeatureReference  # noqa: E402


def carries_name_as_written(text: str, column: str) -> bool:
    """`column` appears in `text` as a word, case as written (the issue's count of DARE-bench)."""
    return re.search(rf"(?<!\w){re.escape(column)}(?!\w)", text) is not None


def reason_kind(reason: str) -> str:
    """A recorded reason with its specifics (quoted names and phrases, figures) blanked, so reasons group."""
    reason = re.sub(r" \(overlap[^)]*\)", "", reason)
    return re.sub(r"\d+(\.\d+)?", "N", re.sub(r"(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)", "X", reason))


def _why(column: str, recorded: dict[str, dict], text: str) -> str:
    """Why the name appears, as recorded; for an older tree, worked out from its recorded references."""
    ref = recorded.get(column)
    if ref is None:  # DARE-bench's own tasks: what the question says is all there is
        return (f"not recorded (a tree without daregen.feature_references): the question has "
                f"{name_match(text, column)[0]!r}")
    if ref.get("name_in_question"):
        return ref["name_in_question"]
    refs = {c: FeatureReference(**{k: r[k] for k in ("column", "by", "phrase", "reason")}) for c, r in recorded.items()}
    return why_name_appears(column, refs, text) or "recorded as not appearing"


def measure(tree: Path) -> dict:
    listing = json.loads((tree / names.QUESTION_LIST).read_text(encoding="utf-8"))
    features = strict = as_written = backticked = tasks = tasks_naming_none = tasks_writing_none = 0
    causes: Counter = Counter()
    carriers: list[str] = []
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
        task_named = task_written = 0
        for column in question["selected_features"]:
            features += 1
            task_written += carries_name_as_written(text, column)
            as_written += carries_name_as_written(text, column)
            backticked += f"`{column}`" in text
            if not name_match(text, column):
                continue
            strict += 1
            task_named += 1
            why = _why(column, recorded, text)
            causes[reason_kind(why)] += 1
            carriers.append(f"{entry['file_path']}: {column!r}: {why}")
        tasks_naming_none += task_named == 0
        tasks_writing_none += task_written == 0
    return {"tasks": tasks, "features": features, "strict": strict, "as_written": as_written,
            "backticked": backticked, "tasks_naming_none": tasks_naming_none,
            "tasks_writing_none": tasks_writing_none, "causes": causes,
            "carriers": carriers}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trees", nargs="+", type=Path)
    p.add_argument("--examples", type=int, default=0,
                   help="also list up to N features that carry their name, each with why (-1: all)")
    args = p.parse_args(argv)
    for tree in args.trees:
        m = measure(tree)
        n = max(m["features"], 1)
        print(f"{tree}: {m['tasks']} tabular IF tasks, {m['features']} selected features; "
              f"{m['strict']} carry their column name in question_v1 as a word in any case ({m['strict'] / n:.1%}); "
              f"{m['as_written']} case as written ({m['as_written'] / n:.1%}), "
              f"{m['backticked']} backticked ({m['backticked'] / n:.1%}); "
              f"{m['tasks_naming_none']} tasks name none in any case, {m['tasks_writing_none']} as written "
              f"(DARE-bench's 88 tabular eval tasks, case as written: 16% of features, 55 tasks name none)")
        for kind, count in sorted(m["causes"].items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {count:5d}  {kind}")
        shown = m["carriers"] if args.examples < 0 else m["carriers"][:args.examples]
        for line in shown:
            print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
