"""The `daregen` command line.

    daregen build [--config FILE] [--out DIR] [--limit N] [--seed S] [--sources SPEC] [--designer NAME]
                  [--llm-model MODEL] [--llm-api-base URL] [--llm-cache-dir DIR] [--llm-cache-only]
                  [--llm-api-key-env VAR] [--llm-allow-key-env] [--force]
                  [--runner local|dask] [--dask-address ADDR] [--dask-workers N]
    daregen serve [--cron EXPR] [--timezone TZ] [--out DIR] [--limit N] [--seed S] [--sources SPEC] [--designer D]
    daregen score PRED_DIR --tasks TREE [--summary FILE] [--config FILE]
    daregen verify TREE [--regenerate] [--jobs N] [--timeout S] [--no-determinism] [--config FILE]
    daregen diff OLD NEW [--out DIR] [--config FILE]
    daregen sources list [--sources SPEC | --sources-file FILE] [--limit N]
    daregen export TREE --out DIR [--holdout TREE ...] [--eval-fraction F] [--seed S] [--check] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pipeline.core.safe_io import printable
from pipeline.prefect_env import configure_prefect
from pipeline.run_report import summary_table
from sourcing.registry import open_source, parse_sources
from sourcing.sources_file import resolve_spec


LLM_API_BASE_ENV = "DAREGEN_LLM_API_BASE"  # an endpoint named in the environment, like --llm-api-base
_CONFIG_LIMITS_HELP = "TOML file whose [limits] table raises the bounds on reading untrusted files"
BUILD_DEFAULTS = {"out": Path("generated"), "limit": None, "seed": 0, "sources": "builtin", "designer": "heuristic"}


def _apply_config(args: argparse.Namespace) -> dict:
    """Fill unset build flags from --config (flags win), then the defaults; returns the file's [llm]."""
    build, llm = ({}, {})
    if args.config:
        from pipeline.config_file import load_config

        build, llm = load_config(Path(args.config))
    for key, default in BUILD_DEFAULTS.items():
        if getattr(args, key) is None:
            value = build.get(key, default)
            setattr(args, key, Path(value) if key == "out" else value)
    return llm


def cmd_build(args: argparse.Namespace) -> int:
    file_llm = _apply_config(args)
    # Check the sources before Prefect starts, so a typo costs one line, not a flow run.
    for key, arg in parse_sources(resolve_spec(args.sources)):  # a spec or a sources.toml path
        open_source(key, arg)
    if args.limit is not None and args.limit < 0:
        raise ValueError("--limit must be >= 0")
    settings = _designer_settings(args, file_llm)
    configure_prefect()  # before flows imports Prefect, which reads its settings at import
    from flows import build_tasks

    from pipeline.config_file import load_limits
    from pipeline.publish import check_out_target

    limits = load_limits(Path(args.config) if args.config else None)
    check_out_target(Path(args.out), args.force)  # before Prefect starts: a refusal costs one line
    report = build_tasks(out=str(args.out), limit=args.limit, seed=args.seed, sources=args.sources,
                         designer=args.designer, designer_settings=settings, runner=args.runner,
                         dask_address=args.dask_address, dask_workers=args.dask_workers,
                         input_limits=limits.model_dump(), force=args.force)
    print(summary_table(report, Path(args.out)))
    if not report["built"]:
        print(f"daregen: nothing was built; {args.out} is unchanged", file=sys.stderr)
        return 1
    return 0


def _designer_settings(args: argparse.Namespace, file_llm: dict | None = None) -> dict | None:
    """The config file's [llm] table overlaid with the --llm-* flags, as designer settings
    (checked here, so a typo costs one line, not a flow run)."""
    from pydantic import ValidationError

    from task_design.registry import DESIGNER_SETTINGS, DESIGNERS

    if args.designer not in DESIGNERS:
        raise ValueError(f"unknown designer {args.designer!r} (known: {', '.join(sorted(DESIGNERS))})")
    # An endpoint named on the command line or in the environment may receive the API key; one that
    # only a config file names may not (a shared TOML must not collect the user's key).
    api_base = args.llm_api_base or os.environ.get(LLM_API_BASE_ENV) or None
    flags = {k: v for k, v in {"model": args.llm_model, "api_base": api_base,
                               "api_key_env": args.llm_api_key_env, "cache_dir": args.llm_cache_dir,
                               "cache_only": args.llm_cache_only or None,
                               "allow_key_env": args.llm_allow_key_env or None}.items() if v is not None}
    given = {**(file_llm or {}), **flags}
    given["key_to_api_base"] = "api_base" in flags or "api_base" not in given
    if args.designer not in DESIGNER_SETTINGS:
        if flags:  # a config file may keep [llm] settings for a later --designer llm
            raise ValueError(f"--llm-* flags need --designer llm, not {args.designer!r}")
        return None
    try:
        checked = DESIGNER_SETTINGS[args.designer].model_validate(given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "api_key_env"
        raise ValueError(f"bad --llm-* setting {where!r}: {err['msg'].removeprefix('Value error, ')}") from None
    from task_design.llm import key_destination

    print(f"daregen: {key_destination(checked)}", file=sys.stderr)
    return given


def cmd_serve(args: argparse.Namespace) -> int:
    """Blocks, running scheduled and triggered runs of build-tasks/nightly (PREFECT_API_URL: the server)."""
    params = {k: getattr(args, k) for k in ("out", "limit", "seed", "sources", "designer")
              if getattr(args, k) is not None}
    if "out" in params:  # runs start in the serving process's folder; say which tree is meant
        params["out"] = os.path.abspath(params["out"])
    configure_prefect()
    from flows import serve

    serve(cron=args.cron, timezone=args.timezone, parameters=params)
    return 0


def _limits(args: argparse.Namespace):
    """The InputLimits of --config's [limits] table (the defaults without one)."""
    from pipeline.config_file import load_limits

    return load_limits(Path(args.config) if args.config else None)


def cmd_score(args: argparse.Namespace) -> int:
    from pipeline.review.score import run_score

    run_score(Path(args.pred_dir), Path(args.tasks), Path(args.summary) if args.summary else None,
              _limits(args))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from pipeline.review.verify import verify_tree

    report = verify_tree(Path(args.tree), regenerate=args.regenerate, jobs=args.jobs, timeout_s=args.timeout,
                         determinism=args.determinism, limits=_limits(args),
                         on_verdict=lambda v: print(v.line(), flush=True))
    print(report.summary())
    return 1 if report.failed else 0


def cmd_diff(args: argparse.Namespace) -> int:
    from pipeline.review.diff import diff_trees, render_summary, write_diff

    diff = diff_trees(Path(args.old), Path(args.new), _limits(args))
    md, page = write_diff(diff, Path(args.out))
    print(render_summary(diff))
    print(f"reports: {md}, {page}")
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    from sourcing.sources_file import preview_lines

    for line in preview_lines(args.sources, args.sources_file, args.limit):
        print(line, flush=True)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pipeline.export.export import export_tree

    result = export_tree(Path(args.tree), Path(args.out) if args.out else None, args.holdout, args.eval_fraction,
                         args.seed, check_only=args.check, jobs=args.jobs, on_line=lambda line: print(line, flush=True))
    if result.out is not None:  # the held-out overlaps and the totals; --check lists every family link too
        for line in result.lines:
            if not line.startswith(("link", "sft")):
                print(line)
        print(f"export written to {result.out}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="daregen", description="Build DARE-bench tasks from public datasets.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build a task tree")
    b.add_argument("--config", default=None, help="TOML file with [build] and [llm] settings (flags win)")
    b.add_argument("--out", type=Path, default=None, help="output tree (default: generated/)")
    b.add_argument("--limit", type=int, default=None, help="number of candidate datasets to consider")
    b.add_argument("--seed", type=int, default=None, help="global seed (default 0)")
    b.add_argument("--sources", default=None, help="sources spec (builtin, local:PATH, sqlite:PATH, kaggle:..., openml:...) or a sources.toml path (default builtin)")
    b.add_argument("--designer", default=None, help="task designer: heuristic (default) or llm")
    b.add_argument("--llm-model", default=None, help="litellm model for --designer llm, e.g. openai/gpt-4o-mini")
    b.add_argument("--llm-api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    b.add_argument("--llm-api-key-env", default=None,
                   help="environment variable holding the API key (default: the provider's usual variable)")
    b.add_argument("--llm-allow-key-env", action="store_true",
                   help="let --llm-api-key-env / api_key_env name a variable that does not look like an LLM key")
    b.add_argument("--force", action="store_true",
                   help="let --out be a non-empty folder daregen did not write (moved aside, never deleted)")
    b.add_argument("--llm-cache-dir", default=None,
                   help="LLM answer cache (default $DAREGEN_CACHE/llm, else .cache/daregen/llm)")
    b.add_argument("--llm-cache-only", action="store_true", help="never call the model; a cache miss falls back")
    b.add_argument("--runner", choices=("local", "dask"), default="local",
                   help="local threads (default) or dask (a LocalCluster, or --dask-address)")
    b.add_argument("--dask-address", default=None, help="scheduler of an existing Dask cluster, e.g. tcp://h:8786")
    b.add_argument("--dask-workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    b.set_defaults(func=cmd_build)
    sv = sub.add_parser("serve", help="serve the Prefect deployment build-tasks/nightly (cron schedule)")
    sv.add_argument("--cron", default="0 2 * * *", help="schedule (default '0 2 * * *': 02:00 every day)")
    sv.add_argument("--timezone", default="UTC", help="timezone of the schedule (default UTC)")
    for flag, kind in (("--out", str), ("--limit", int), ("--seed", int), ("--sources", str), ("--designer", str)):
        sv.add_argument(flag, type=kind, default=None, help="default flow parameter of the deployment")
    sv.set_defaults(func=cmd_serve)
    s = sub.add_parser("score", help="score predictions against a task tree")
    s.add_argument("pred_dir", help="folder with <task>/<v1|v2>/prediction.csv")
    s.add_argument("--tasks", required=True, help="task tree built by daregen build")
    s.add_argument("--summary", default=None, help="JSON summary path (default PRED_DIR/score_summary.json)")
    s.add_argument("--config", default=None, help=_CONFIG_LIMITS_HELP)
    s.set_defaults(func=cmd_score)
    v = sub.add_parser("verify", help="re-run every reference in the sandbox and re-check a DARE-layout tree")
    v.add_argument("tree", help="task tree (ours or DARE-bench's)")
    v.add_argument("--regenerate", action="store_true",
                   help="rewrite verify/simulated_pred_local.csv for this machine, with verify/environment.json")
    v.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="tasks verified at once (default: cores)")
    v.add_argument("--timeout", type=float, default=300.0, help="seconds per reference run (default 300)")
    v.add_argument("--no-determinism", dest="determinism", action="store_false",
                   help="skip the determinism check (on by default: every reference is re-run in two fresh "
                        "interpreters with different PYTHONHASHSEED, which must agree with each other and, for "
                        "daregen's tasks, with simulated_pred_local.csv; costs two interpreter start-ups)")
    v.add_argument("--config", default=None, help=_CONFIG_LIMITS_HELP)
    v.set_defaults(func=cmd_verify)
    d = sub.add_parser("diff", help="curator review: what changed between two task trees (Markdown + HTML)")
    d.add_argument("old", help="the previous tree (may be missing: a first generation)")
    d.add_argument("new", help="the new tree")
    d.add_argument("--out", default=".", help="folder for diff.md and diff.html (default: current folder)")
    d.add_argument("--config", default=None, help=_CONFIG_LIMITS_HELP)
    d.set_defaults(func=cmd_diff)
    so = sub.add_parser("sources", help="preview sources: candidates and each filter's verdict")
    so_sub = so.add_subparsers(dest="sources_command", required=True)
    sl = so_sub.add_parser("list", help="list candidates with each filter's verdict")
    sl_from = sl.add_mutually_exclusive_group()
    sl_from.add_argument("--sources", default=None, help="sources spec, e.g. kaggle:search=titanic?quota=5")
    sl_from.add_argument("--sources-file", default=None, help="sources.toml with [[source]] tables")
    sl.add_argument("--limit", type=int, default=50, help="candidates shown per source (default 50)")
    sl.set_defaults(func=cmd_sources)
    ex = sub.add_parser("export", help="training data: a family-safe train/eval split, rewards' specs, SFT solutions")
    ex.add_argument("tree", help="task tree to export")
    ex.add_argument("--out", default=None, help="export folder (required unless --check)")
    ex.add_argument("--holdout", action="append", default=[], metavar="TREE",
                    help="an evaluation tree (repeatable): no training task may share a dataset family with it")
    ex.add_argument("--eval-fraction", type=float, default=0.1, help="share of each problem type's tasks in eval")
    ex.add_argument("--seed", type=int, default=0, help="seed of the family split (default 0)")
    ex.add_argument("--check", action="store_true", help="report every family link and overlap; write nothing")
    ex.add_argument("--jobs", type=int, default=2, help="SFT solutions checked at once in the sandbox (default 2)")
    ex.set_defaults(func=cmd_export)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:  # bad user input, or a path that cannot be read: one clear line
        print(f"daregen: error: {printable(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
