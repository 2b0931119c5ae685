"""DARE-bench's CSV convention, defined once: in a task's CSV only the empty string is missing.

DARE-bench's reference (scripts/reference_solution.py) reads every task CSV with
`pd.read_csv(path, keep_default_na=False, na_values=[""])` and its IF instructions say
"treating only empty strings as missing values". pandas' defaults would instead read the
category levels `None`, `NA`, `null`, `n/a`, ... as missing, so a task whose level is spelled
so gets a different ground truth (jayaantanaath_student-habits-vs-academic-performance_reg:
281 of 300 rows). Every reader of a task CSV (the reference, the checks, the MM check, the
DSAgentBench oracles, the SFT solutions) uses these options; self-contained texts (the
evaluator, generated scripts) spell the same two keyword arguments, QUESTION_V1_PHRASE
says it to the agent, and our writers write a missing value as the empty string.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

CSV_READ_OPTIONS: dict[str, Any] = {"keep_default_na": False, "na_values": [""]}
# The same options as Python source, as the self-contained IF workflow (pipeline/core/if_workflow.py),
# which the oracles and SFT solutions carry, spells them (a test holds the two together).
CSV_READ_ARGS = 'keep_default_na=False, na_values=[""]'
# How question_v1 tells the agent (DARE-bench's own wording, data/eval/question_list.json).
QUESTION_V1_PHRASE = 'treating only empty strings ("") as missing values'


def read_task_csv(path: Path | str, **kwargs: Any) -> pd.DataFrame:
    """A task's CSV read as DARE-bench reads it (extra read_csv arguments pass through)."""
    return pd.read_csv(path, **CSV_READ_OPTIONS, **kwargs)
