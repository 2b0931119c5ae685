"""The bounds of the export's split settings, checked by the split itself and by the CLI before any
table is read (so this module imports nothing heavy)."""

from __future__ import annotations


def check_eval_fraction(eval_fraction: float) -> None:
    """The share of each problem type's tasks sent to eval: at least 0, below 1 (every task in eval
    would leave no training set)."""
    if not 0.0 <= eval_fraction < 1.0:
        raise ValueError(f"--eval-fraction must be in [0, 1), got {eval_fraction}")
