"""A task CSV is read as DARE-bench reads it: only the empty string is missing, so a category level
spelled `None`, `NA` or `null` survives our write and read round trip."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.core.csv_convention import CSV_READ_ARGS, CSV_READ_OPTIONS, read_task_csv


def test_only_the_empty_cell_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"level": ["None", "NA", "null", None, "n/a"], "x": [1.0, None, 3.0, 4.0, 5.0]}).to_csv(
        path, index=False, lineterminator="\n")
    back = read_task_csv(path)
    assert back["level"].tolist()[:3] == ["None", "NA", "null"] and back["level"].tolist()[4] == "n/a"
    assert back["level"].isna().tolist() == [False, False, False, True, False]
    assert back["x"].isna().tolist() == [False, True, False, False, False]


def test_the_spelled_arguments_are_the_options() -> None:
    # generated scripts spell CSV_READ_ARGS; it must say what CSV_READ_OPTIONS says
    assert eval(f"dict({CSV_READ_ARGS})") == CSV_READ_OPTIONS
