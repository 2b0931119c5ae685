"""Tiny builders shared by the stage tests (tests/conftest.py is owned elsewhere, so they live here).

Each builder returns a fresh object; `**overrides` replace or add columns / fields.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import names
from pipeline.core.jsonio import write_json
from pipeline.core.records import DatasetRejected, DatasetRecord, TaskPackage, TaskSpec
from pipeline.core.seeding import rng_for
from sourcing.normalize import normalize_table
from task_design.config import DesignConfig
from task_design.heuristic import design
from task_design.profile import profile_table

REF = "local/synthetic"


def build_record(ref: str = REF, **overrides) -> DatasetRecord:
    fields = dict(ref=ref, source="local", slug=ref.replace("/", "_").lower(), title="Synthetic data")
    fields.update(overrides)
    return DatasetRecord(**fields)


def build_table(n: int = 200, seed: int = 0, **overrides) -> pd.DataFrame:
    """A normalised, learnable classification table: float, int, categorical and missing-heavy features.

    `overrides` add or replace columns (a callable gets the row count); a value of None drops a column.
    """
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    columns: dict[str, object] = {
        "x": x,
        "visits": rng.integers(0, 40, size=n),
        "colour": rng.choice(["red", "green", "blue"], size=n),
        "sparse": np.where(rng.random(n) < 0.4, np.nan, rng.uniform(-5, 5, size=n)),
        "label": np.where(x + rng.normal(scale=1.0, size=n) > 0, "yes", "no"),
    }
    for name, value in overrides.items():
        if value is None:
            columns.pop(name, None)
        else:
            columns[name] = value(n) if callable(value) else value
    return normalize_table(pd.DataFrame(columns))


# The builders' tables carry deliberately weak or absent signals (a noise target is how a test
# reaches a rejection); the design-time learnability estimate is tested on its own
# (tests/task_design/test_learnable.py), so the other design tests leave it to the MM check.
UNIT_CONFIG = DesignConfig(learnable_margin=None)


def build_spec(table: pd.DataFrame, ref: str = REF, seed: int = 0, config: DesignConfig | None = None,
          **record_overrides) -> TaskSpec:
    """The heuristic designer's spec for `table`, seeded like the pipeline does it."""
    return design(build_record(ref, **record_overrides), profile_table(table), table,
                  rng_for(seed, ref, "design"), config or UNIT_CONFIG)


def spec_where(table: pd.DataFrame, accept, ref: str = REF, config: DesignConfig | None = None,
                seeds=range(60), **record_overrides) -> TaskSpec:
    """The first seeded spec satisfying `accept(spec)`. The target follows the evidence, not the seed,
    so when no seed gives the wanted target, each column is then offered as the source's target hint."""
    hints = [record_overrides.pop("target_hint", None)] + (
        [] if "target_hint" in record_overrides else [str(c) for c in table.columns])
    for hint in hints:
        for seed in seeds:
            try:
                spec = build_spec(table, ref=ref, seed=seed, config=config, target_hint=hint, **record_overrides)
            except DatasetRejected:
                break
            if accept(spec):
                return spec
    raise AssertionError("no seed gave a spec with the wanted shape")


def write_task_by_hand(pkg: TaskPackage, root: Path) -> Path:
    """Write a task tree like finalize.layout.write_task, minus the reference run and the guard.

    simulated_pred_local.csv copies the ground truth, which is all check_tabular_task
    needs of it (row ids, no missing values). Used to plant defects cheaply.
    """
    from finalize.layout import question_block, write_data_files

    task_dir = root / pkg.spec.task_dir
    src, verify = task_dir / names.SOURCE_DIR, task_dir / names.VERIFY_DIR
    src.mkdir(parents=True)
    verify.mkdir()
    (src / names.METADATA_TXT).write_text("synthetic\n", encoding="utf-8")
    write_data_files(pkg, src)
    pkg.ground_truth.to_csv(verify / names.GROUND_TRUTH, index=False, lineterminator="\n")
    pkg.ground_truth.to_csv(verify / names.SIMULATED_PRED, index=False, lineterminator="\n")
    write_json(verify / names.ALL_METADATA, {"question": question_block(pkg.spec), "data_info": {}, "meta_data": {}})
    return task_dir
