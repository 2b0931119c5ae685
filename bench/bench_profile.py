"""Profiling speed: daregen's polars profile against a naive pandas column loop.

    .venv/bin/python bench/bench_profile.py [--rows N] [--cols K] [--repeat R]

Both compute the same statistics (missing count, distinct count, min/max/mean/std
for numbers, top-value share, sorted category set) on the same synthetic long
and wide tables, side by side in one run; the ratio is what to read, since the
machines are shared and noisy. Prints best-of-R seconds and naive/ours, and last a line
`RESULT {json}` for bench/run_all.py. Includes the profiling computation only (the tables are
built before timing; no file reading).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import pandas as pd

from task_design.profile import profile_table
from _timing import best_of  # noqa: E402  (bench/ is on sys.path when run as a script)


def naive_profile(df: pd.DataFrame) -> list[dict]:
    """The obvious pandas way: one pass per statistic per column."""
    out = []
    for name in df.columns:
        col = df[name]
        stats = {"name": name, "n_missing": int(col.isna().sum()), "n_unique": int(col.nunique())}
        if pd.api.types.is_numeric_dtype(col):
            stats.update(min=col.min(), max=col.max(), mean=col.mean(), std=col.std())
        else:
            stats["categories"] = sorted(col.dropna().unique().tolist()) if stats["n_unique"] <= 200 else None
            stats["mean_len"] = col.dropna().str.len().mean()
        counts = col.value_counts()
        stats["top_share"] = float(counts.iloc[0] / counts.sum()) if len(counts) else 0.0
        out.append(stats)
    return out


def synthetic(rows: int, cols: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {}
    for i in range(cols):
        kind = i % 4
        if kind == 0:
            v = rng.normal(size=rows)
            v[rng.random(rows) < 0.05] = np.nan
            data[f"num_{i}"] = v
        elif kind == 1:
            data[f"int_{i}"] = rng.integers(0, 1000, size=rows)
        elif kind == 2:
            data[f"cat_{i}"] = rng.choice(np.array([f"level_{k}" for k in range(12)], dtype=object), size=rows)
        else:
            data[f"code_{i}"] = rng.choice(np.array([f"c{k}" for k in range(5000)], dtype=object), size=rows)
    return pd.DataFrame(data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    shapes = [("long", 1_000_000, 12), ("wide", 5_000, 800)]
    result: dict = {"bench": "profile", "cpu_count": os.cpu_count()}
    print(f"{'table':<6}{'rows':>10}{'cols':>6}{'naive pandas s':>16}{'daregen s':>12}{'naive/ours':>12}")
    for label, rows, cols in shapes:
        df = synthetic(rows, cols)
        naive = best_of(lambda: naive_profile(df), args.repeat)
        ours = best_of(lambda: profile_table(df), args.repeat)
        print(f"{label:<6}{rows:>10}{cols:>6}{naive:>16.2f}{ours:>12.2f}{naive / ours:>12.2f}")
        result.update({f"{label}_naive_s": round(naive, 2), f"{label}_ours_s": round(ours, 2),
                       f"{label}_ratio": round(naive / ours, 2)})
    result["load_avg"] = round(os.getloadavg()[0], 2)
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
