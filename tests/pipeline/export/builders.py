"""Tiny DARE-layout task folders for the family tests (just what families.py reads), and prediction perturbations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import names
from pipeline.core.jsonio import write_json


def table(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(50, 10, n).round(2),
                         "city": rng.choice(["a", "b", "c", "d", "e", "f"], n), "score": rng.normal(0, 1, n)})


def write_task(root: Path, name: str, frame: pd.DataFrame, target: str, ref: str | None,
               kind: str = "regression", dare_ref: str | None = None) -> Path:
    """`frame` split 75/25 into train_v2 / val_v2 + ground_truth (csv), with all_metadata.json."""
    task = root / name
    (task / names.SOURCE_DIR).mkdir(parents=True)
    (task / names.VERIFY_DIR).mkdir(parents=True)
    cut = int(len(frame) * 0.75)
    frame.iloc[:cut].to_csv(task / names.SOURCE_DIR / "train_v2.csv", index=False)
    val = frame.iloc[cut:].reset_index(drop=True).rename_axis(names.ROW_ID).reset_index()
    val.drop(columns=[target]).to_csv(task / names.SOURCE_DIR / "val_v2.csv", index=False)
    val[[names.ROW_ID, target]].to_csv(task / names.VERIFY_DIR / names.GROUND_TRUTH, index=False)
    meta = {"question": {"target": [target], "problem_type": kind, "save_file_type": "csv"},
            "data_info": {"ref": dare_ref} if dare_ref else {}}
    if ref is not None:
        meta["daregen"] = {"ref": ref}
    write_json(task / names.VERIFY_DIR / names.ALL_METADATA, meta)
    return task


def perturbations(truth: pd.DataFrame, target: str) -> dict[str, pd.DataFrame]:
    """One flipped label or shifted value, a dropped row, a shuffled row_id column."""
    changed = truth.copy()
    if changed[target].dtype.kind in "iuf":
        changed.loc[0, target] = changed.loc[0, target] + 1000.0
    else:
        values = sorted(set(changed[target]))
        changed.loc[0, target] = next(v for v in values if v != changed.loc[0, target]) if len(values) > 1 else "zz"
    out = {"changed value": changed, "dropped row": truth.iloc[1:]}
    if names.ROW_ID in truth.columns:  # a CF forecast is keyed by its identifiers instead
        out["shuffled row_id"] = truth.assign(**{names.ROW_ID: np.roll(truth[names.ROW_ID].to_numpy(), 1)})
    return out
