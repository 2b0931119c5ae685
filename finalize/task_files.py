"""A task's data files, each read once and shared by the checks that read it.

check_tabular_task and the MM check both read train_v2, val_v2 and verify/ground_truth.csv; on
a big task reading a file costs about as much as checking it. The frames are read as an agent or
the grader reads them (postprocess.formats.read_frame, the CSV convention), and every caller gets
its own shallow copy, so a check that adds or drops columns cannot change what the next one sees
(the checks never modify values in place: they are pure and return new frames).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.core import names
from pipeline.core.csv_convention import read_task_csv
from postprocess.formats import read_frame


class TaskFiles:
    def __init__(self, task_dir: Path, file_type: str):
        self.task_dir, self.file_type = task_dir, file_type
        self._frames: dict[str, pd.DataFrame] = {}

    def source(self, stem: str) -> pd.DataFrame:
        """source/<stem>.<file type>, e.g. stem names.TRAIN_V2."""
        key = f"{names.SOURCE_DIR}/{stem}"
        if key not in self._frames:
            self._frames[key] = read_frame(self.source_path(stem), self.file_type)
        return self._frames[key].copy(deep=False)

    def source_path(self, stem: str) -> Path:
        return self.task_dir / names.SOURCE_DIR / names.data_file(stem, self.file_type)

    def verify_csv(self, name: str) -> pd.DataFrame:
        """verify/<name>, a CSV such as names.GROUND_TRUTH."""
        key = f"{names.VERIFY_DIR}/{name}"
        if key not in self._frames:
            self._frames[key] = read_task_csv(self.task_dir / names.VERIFY_DIR / name)
        return self._frames[key].copy(deep=False)
