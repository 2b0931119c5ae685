"""Computed answers in a built tree: does arithmetic on a regression task's features reproduce its target?

    .venv/bin/python bench/bench_identity.py TREE [--threshold 0.995] [--all]

For every regression task of TREE: the ridge fit of task_design.identity (the target, and its log
when positive, on the features, their logs, their pairwise products and ratios, and dummies of the
categorical ones; the 15 features most related to the target on the training rows) is fitted on
the MM training rows (train_v2) and scored on the validation rows (val_v2 with the ground truth).
Prints the plain R² on the validation rows per task (every task with --all, else the offenders at or
above --threshold), its maximum, and the R² without the 5% of rows the fit misses most (the design
screen's measure, which a transcription error in the source cannot hide an identity from). Reads
files only; nothing is built.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from finalize.reference_solution import read_table  # noqa: E402
from pipeline.core import names  # noqa: E402
from pipeline.core.csv_convention import read_task_csv  # noqa: E402
from task_design.config import DesignConfig  # noqa: E402
from task_design.identity import OUTLIER_SHARE, identity_bases, identity_terms, pooled_r2  # noqa: E402


def task_r2(task: Path) -> tuple[str, float, float, int] | None:
    """(target, R² on the validation rows, R² on 95% of them, features used) of one regression task."""
    meta = json.loads((task / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))
    question = meta["question"]
    if question.get("problem_type") != "regression" or len(question["target"]) != 1:
        return None
    target = question["target"][0]
    source = task / names.SOURCE_DIR
    ext = question["save_file_type"]
    train = read_table(source / names.data_file(names.TRAIN_V2, ext))
    val = read_table(source / names.data_file(names.VAL_V2, ext))
    truth = read_task_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH)[[names.ROW_ID, target]]
    val = val.drop(columns=[target], errors="ignore").merge(truth, on=names.ROW_ID, how="inner")
    columns = [c for c in val.columns if c in train.columns and c not in (names.ROW_ID, target)]
    both = pd.concat([train[[*columns, target]], val[[*columns, target]]], ignore_index=True)
    both = both[both[target].notna()]
    is_train = np.r_[np.ones(len(train), bool), np.zeros(len(val), bool)][both.index.to_numpy()]
    numeric, categorical = identity_bases(both[is_train], target, columns, DesignConfig().identity_max_bases)
    rows = both[[target, *numeric, *categorical]].dropna()
    fit, test = np.flatnonzero(is_train[rows.index]), np.flatnonzero(~is_train[rows.index])
    if len(fit) < 10 or len(test) < 2 or not numeric + categorical:
        return target, float("nan"), float("nan"), 0
    terms = identity_terms(rows.reset_index(drop=True), numeric, categorical)
    y = rows[target].to_numpy(dtype=float)
    (plain,) = pooled_r2(terms, y, [(fit, test)], [None])
    (trimmed,) = pooled_r2(terms, y, [(fit, test)], [None], OUTLIER_SHARE)
    return target, plain, trimmed, len(numeric) + len(categorical)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--threshold", type=float, default=0.995)
    parser.add_argument("--all", action="store_true", help="print every regression task, not only offenders")
    args = parser.parse_args(argv)
    results = []
    for task in sorted(p for p in args.tree.iterdir() if (p / names.VERIFY_DIR / names.ALL_METADATA).is_file()):
        found = task_r2(task)
        if found is not None:
            results.append((task.name, *found))
    scored = [r for r in results if r[2] == r[2]]
    for name, target, plain, trimmed, k in results:
        if args.all or plain >= args.threshold:
            flag = "OFFENDER" if plain >= args.threshold else ""
            print(f"{plain:8.4f} {trimmed:8.4f} {k:3d}  {name}  target={target!r} {flag}")
    top = max(scored, key=lambda r: r[2]) if scored else None
    top_trim = max(scored, key=lambda r: r[3]) if scored else None
    offenders = [r for r in scored if r[2] >= args.threshold]
    print(f"regression tasks: {len(results)} ({len(scored)} scored); "
          f"max validation R²: {top[2]:.4f} ({top[0]})" if top else "regression tasks: 0")
    if top_trim:
        print(f"max validation R² on 95% of rows: {top_trim[3]:.4f} ({top_trim[0]})")
    print(f"offenders (R² >= {args.threshold}): {len(offenders)}"
          + "".join(f"\n  {r[0]} {r[1]!r} {r[2]:.4f}" for r in offenders))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
