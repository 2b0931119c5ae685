"""The IF reference solution, derived only from verify/all_metadata.json.

    python -m finalize.reference_solution TASK_DIR OUT_CSV

It runs the one IF workflow (pipeline/core/if_workflow.py: the steps question_v1 spells out) on
the task's clean training rows, `train_v1_no_err`, reading SQLite files through the kernel's
read-only connection. Ground truth for IF is what this prints into verify/simulated_pred_local.csv;
the DSAgentBench oracle and the SFT solution run the same workflow, rendered as a script, on
`train_v1` with the range filter, and must reproduce it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from pipeline.core import names
from pipeline.core.if_workflow import if_workflow
from pipeline.core.if_workflow import read_table as _read_table
from pipeline.core.sqlite import connect_read_only


def read_table(path: Path, table: str | None = None) -> pd.DataFrame:
    """A task file, SQLite through a connection that cannot write it."""
    return _read_table(path, table, connect_read_only)


def predict_from(q: dict, source_dir: Path) -> pd.DataFrame:
    """The workflow of question_v1, from the question block and the task's clean source/ files."""
    ftype = q["save_file_type"]
    return if_workflow(q, source_dir / names.data_file(names.TRAIN_V1_NO_ERR, ftype),
                       source_dir / names.data_file(names.VAL_V1, ftype), noisy=False, connect=connect_read_only)


def predict(task_dir: Path) -> pd.DataFrame:
    q = json.loads((task_dir / names.VERIFY_DIR / names.ALL_METADATA).read_text(encoding="utf-8"))["question"]
    return predict_from(q, task_dir / names.SOURCE_DIR)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m finalize.reference_solution TASK_DIR OUT_CSV", file=sys.stderr)
        return 2
    out = predict(Path(args[0]))
    out.to_csv(args[1], index=False, lineterminator="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
