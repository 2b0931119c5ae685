"""Reward speed: pipeline.reward on CSV text against `daregen score`'s own path on files, side by side.

    .venv/bin/python bench/bench_reward.py EXPORT_DIR [--n 1000]

Scores N predictions (every row's ground truth and its perturbations, round robin) two ways:

  (a) reward: pipeline.reward.compute_score, verl's signature, the prediction as CSV text, its cache
              of already-seen texts cleared before each call (the cold path);
  (b) files:  pipeline.review.score.score_prediction on prediction files already on disk (what
              `daregen score` does per task and variant);
  (c) cached: (a) again without clearing, as GRPO's repeated completions are scored.

Prints seconds, rewards per second and (a)/(b): the adapters' cost over the scoring itself (the text
is scored in memory; the ground truth's hash is checked once). Shared machines are noisy: read the ratio.
Includes the scoring calls only (the export is read and the prediction files written before timing).
The last line is `RESULT {json}` for bench/run_all.py.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from pipeline.export.export import split_files
from pipeline.review.score import score_prediction as score_file
from pipeline.reward import clear_score_cache, compute_score


def _predictions(root: Path, n: int) -> list[tuple[dict, str]]:
    rows = [r for path in split_files(root).values() for r in pq.read_table(path).to_pylist()]
    out = []
    for r in rows:
        truth = pd.read_csv(root / r["reward_spec"]["ground_truth_path"])
        target = r["reward_spec"]["targets"][0]
        shifted = truth.copy()
        if shifted[target].dtype.kind in "iuf":
            shifted[target] = shifted[target] + np.arange(len(truth)) % 3
        out += [(r, truth.to_csv(index=False)), (r, shifted.to_csv(index=False)),
                (r, truth.iloc[1:].to_csv(index=False))]
    return [out[i % len(out)] for i in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("export_dir", type=Path)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    root = args.export_dir.resolve()
    preds = _predictions(root, args.n)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, (r, text) in enumerate(preds):
            path = Path(tmp) / f"{i}.csv"
            path.write_text(text)
            files.append((r, path))
        def reward(r: dict, text: str, cold: bool) -> float:
            if cold:
                clear_score_cache()
            return compute_score(r["data_source"], text, r["reward_model"]["ground_truth"], r["extra_info"],
                                 export_dir=str(root))

        start = time.perf_counter()
        a = [reward(r, text, cold=True) for r, text in preds]
        reward_s = time.perf_counter() - start
        start = time.perf_counter()
        c = [reward(r, text, cold=False) for r, text in preds]
        cached_s = time.perf_counter() - start
        start = time.perf_counter()
        b = [score_file(root / r["task_dir"], r["dare_variant"], path).score for r, path in files]
        files_s = time.perf_counter() - start
    if not a == b == c:
        raise SystemExit("the two paths disagree")
    print(f"{args.n} predictions: (a) reward {reward_s:.2f} s ({args.n / reward_s:.0f}/s), "
          f"(b) files {files_s:.2f} s ({args.n / files_s:.0f}/s), (a)/(b) {reward_s / files_s:.2f}; "
          f"(c) cached {cached_s:.2f} s ({len({t for _, t in preds})} distinct texts)")
    print("RESULT " + json.dumps({"bench": "reward", "n": args.n, "reward_s": round(reward_s, 2),
                                  "files_s": round(files_s, 2), "cached_s": round(cached_s, 2),
                                  "reward_over_files": round(reward_s / files_s, 2), "cpu_count": os.cpu_count(),
                                  "load_avg": round(os.getloadavg()[0], 2)}, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
