"""Prefect flow `build-tasks`: source -> profile -> design -> postprocess -> finalize, then publish.

One Prefect task per dataset and stage; each is a one-line wrapper over a step
in pipeline.steps and passes an Outcome (paths and hashes), never a DataFrame.
Stages run as waves over all datasets (every dataset's source, then every
profile, ...): a stage's tasks never wait on each other, so a small thread
pool cannot deadlock on upstream futures.

After the source wave each dataset has a build-cache key (pipeline.build_cache);
a dataset already built with the same key is copied from the cache instead of
being designed, postprocessed and finalized again. The tree is written as a new
generation and `out` is switched to it only once it is complete
(pipeline.publish). The deployment `build-tasks/nightly` is served by `serve()`.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from finalize.timeseries import ts_counts
from finalize.verify import guard_staging_tree
from pipeline import build_cache, steps
from pipeline.core import names
from pipeline.core.environment import code_version, fingerprint
from pipeline.core.jsonio import read_json, write_json
from pipeline.core.safe_io import InputLimits
from pipeline.progress import WaveProgress
from pipeline.publish import (build_lock, build_manifest, check_generation, check_out_target, crash_point,
                              new_generation, publish, published_generation, write_question_list, write_report_md)
from pipeline.steps import Outcome
from sourcing.registry import open_source, parse_sources
from task_design.config import DesignConfig
from task_design.llm_schema import LLMUsage
from task_design.registry import DESIGNER_SETTINGS, DESIGNERS

# Compute-bound stages: no retries (a retry would only repeat a deterministic failure).
# Prefect's own result caching is off: the build cache keys on content, which Prefect cannot see.
_TASK = dict(cache_policy=NO_CACHE, retries=0)
# Sources that download: their source step gets retries and a tag for a Prefect tag concurrency
# limit (`prefect concurrency-limit create daregen-network 4`), so a nightly run stays polite.
NETWORK_SOURCES = frozenset({"kaggle", "openml"})
NETWORK_TAG = "daregen-network"
RUNNERS = ("local", "dask")


@task(name="source", task_run_name="source {prev.ref}", **_TASK)
def source_task(prev: Outcome, key: str, arg: str | None, limits_json: str = "") -> Outcome:
    return steps.source_step(prev, key, arg, limits_json)


@task(name="source-network", task_run_name="source {prev.ref}", cache_policy=NO_CACHE, retries=2,
      retry_delay_seconds=10, tags=[NETWORK_TAG])
def source_network_task(prev: Outcome, key: str, arg: str | None, limits_json: str = "") -> Outcome:
    return steps.source_step(prev, key, arg, limits_json)


@task(name="profile", task_run_name="profile {prev.ref}", **_TASK)
def profile_task(prev: Outcome) -> Outcome:
    return steps.profile_step(prev)


@task(name="design", task_run_name="design {prev.ref}", **_TASK)
def design_task(prev: Outcome, seed: int, designer: str, config_json: str, settings_json: str) -> Outcome:
    return steps.design_step(prev, seed, designer, config_json, settings_json)


@task(name="postprocess", task_run_name="postprocess {prev.ref}", **_TASK)
def postprocess_task(prev: Outcome, seed: int) -> Outcome:
    return steps.postprocess_step(prev, seed)


@task(name="finalize", task_run_name="finalize {prev.ref}", **_TASK)
def finalize_task(prev: Outcome, tasks_root: str, seed: int, design_digest: str, cache_dir: str,
                  key: str) -> Outcome:
    return build_cache.finalize_and_store(prev, tasks_root, seed, design_digest, cache_dir, key)


def list_candidates(sources: str, limit: int | None) -> list[tuple[str, str | None, str]]:
    """(source key, source argument, ref) in the sources' stable order, first `limit` of them."""
    out = []
    for key, arg in parse_sources(sources):
        out += [(key, arg, ref) for ref in open_source(key, arg).candidates()]
    return out if limit is None else out[: max(0, limit)]


def resolve_sources(sources: str) -> str:
    """A sources spec, or the path of a sources file (sources.toml, see sourcing/sources_file.py), so a
    deployment's `sources` parameter can name a file curators edit."""
    if Path(sources).is_file():
        from sourcing.sources_file import spec_from_file

        return spec_from_file(sources)
    return sources


def task_runner(runner: str = "local", dask_address: str | None = None, dask_workers: int = 2):
    """The task runner for a build: threads in this process, or Dask (a given scheduler, or a
    LocalCluster of `dask_workers` single-threaded processes: the stages hold the GIL)."""
    if runner == "local":
        return ThreadPoolTaskRunner(max_workers=max(1, os.cpu_count() or 1))
    if runner == "dask":
        import dask
        from prefect_dask import DaskTaskRunner

        # finalize forks each reference run from a fork server, and multiprocessing forbids
        # children in a daemonic process, which is what a LocalCluster worker is by default.
        dask.config.set({"distributed.worker.daemon": False})
        if dask_address:
            return DaskTaskRunner(address=dask_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": max(1, dask_workers), "threads_per_worker": 1,
                                              "processes": True, "dashboard_address": None,
                                              "silence_logs": logging.WARNING, "env": _worker_prefect_env()})
    raise ValueError(f"unknown runner {runner!r} (known: {', '.join(RUNNERS)})")


def _worker_prefect_env() -> dict:
    """The Prefect API for LocalCluster workers. In ephemeral mode (no PREFECT_API_URL) each worker
    process would otherwise start an ephemeral server of its own and its task runs would land
    there, not in this flow run; hand them the URL of this process's ephemeral server instead."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        return {"PREFECT_API_URL": PREFECT_API_URL.value()}
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the process's singleton: the one the flow run already talks to
    server.start()
    return {"PREFECT_API_URL": server.api_url}


def _wave(label: str, outcomes: list[Outcome], submit, progress: WaveProgress) -> list[Outcome]:
    futures = {i: submit(o) for i, o in enumerate(outcomes) if o.ok}
    done = list(outcomes)
    progress.start(label, len(futures))
    for n, (i, fut) in enumerate(futures.items()):
        done[i] = fut.result()
        progress.advance(done[i].ok)
        if n == len(futures) // 2:  # half the wave is done, the rest is still running
            crash_point(label)
    progress.finish(sum(o.ok for o in done), len(done))
    return done


@flow(name="build-tasks", task_runner=ThreadPoolTaskRunner(max_workers=max(1, os.cpu_count() or 1)))
def build_tasks(out: str = "generated", limit: int | None = None, seed: int = 0, sources: str = "builtin",
                designer: str = "heuristic", designer_settings: dict | None = None, runner: str = "local",
                dask_address: str | None = None, dask_workers: int = 2, cache_dir: str | None = None,
                keep_generations: int = 3, input_limits: dict | None = None, force: bool = False) -> dict:
    """Build a DARE-bench task tree as a new generation and publish it at `out` (a symlink); returns
    the run report.

    `sources` is a spec (`builtin`, `local:PATH`, ...) or a file of specs. `designer_settings`
    configures a designer that has settings (e.g. the LLM designer's model, api_base and cache
    folder); it never holds an API key. `runner` is `local` (threads) or `dask` (`dask_address`
    of a scheduler, or a LocalCluster of `dask_workers` processes). `cache_dir` holds the
    per-dataset build cache (default `$DAREGEN_CACHE` or `.cache/daregen`). `input_limits` raises the
    bounds on reading source files (pipeline.core.safe_io.InputLimits); `force` lets `out` be an
    existing folder daregen did not write (it is moved aside, never deleted).
    """
    started = time.monotonic()
    sources = resolve_sources(sources)
    config = DesignConfig(input_limits=InputLimits.model_validate(input_limits or {}))
    config_json, digest = config.model_dump_json(), config.digest()
    limits_json = config.input_limits.model_dump_json()
    settings_json = _designer_settings_json(designer, designer_settings)
    cache = build_cache.cache_root(cache_dir)
    out_path = Path(os.path.abspath(out))
    check_out_target(out_path, force)
    with build_lock(out_path), task_runner(runner, dask_address, dask_workers) as pool:
        staging = new_generation(out_path)
        try:
            report = _build_generation(pool, staging, out_path, limit, seed, sources, designer, settings_json,
                                       config_json, digest, cache, keep_generations, started, limits_json)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return report


def _build_generation(pool, staging: Path, out_path: Path, limit, seed, sources, designer, settings_json,
                      config_json, digest, cache: Path, keep: int, started: float, limits_json: str = "") -> dict:
    def submitter(t, params):
        return lambda o: pool.submit(t, parameters={"prev": o, **params(o)})

    progress = WaveProgress()
    laps: dict[str, float] = {}
    clock = [time.monotonic()]

    def lap(name: str) -> None:  # seconds per phase, printed at the end: where a rerun spends its time
        now = time.monotonic()
        laps[name] = round(laps.get(name, 0.0) + now - clock[0], 2)
        clock[0] = now

    work_root = staging / ".work"
    candidates = list_candidates(sources, limit)
    print(f"daregen: {len(candidates)} candidate datasets from {sources}", file=sys.stderr, flush=True)
    outcomes = [steps.start(ref, str(work_root)) for _, _, ref in candidates]
    keys = {ref: (key, arg) for key, arg, ref in candidates}

    def submit_source(o: Outcome):
        key, arg = keys[o.ref]
        t = source_network_task if key in NETWORK_SOURCES else source_task
        return pool.submit(t, parameters={"prev": o, "key": key, "arg": arg, "limits_json": limits_json})

    outcomes = _wave("source", outcomes, submit_source, progress)
    lap("source")
    outcomes = _dedupe_tables(outcomes)
    cache_keys = {o.ref: build_cache.dataset_key(o, seed=seed, designer=designer, settings_json=settings_json,
                                                 design_digest=digest) for o in outcomes if o.ok}
    outcomes, cached_dirs = _apply_cache(outcomes, cache, cache_keys)
    lap("cache lookup")
    fresh = [o if o.ref not in cached_dirs else o.failed("cached", "") for o in outcomes]
    fresh = _wave("profile", fresh, submitter(profile_task, lambda o: {}), progress)
    fresh = _wave("design", fresh, submitter(design_task, lambda o: {
        "seed": seed, "designer": designer, "config_json": config_json, "settings_json": settings_json}), progress)
    _store_rejections(fresh, cache, cache_keys, ("profile", "design"))
    outcomes = [f if o.ref not in cached_dirs else o for o, f in zip(outcomes, fresh)]
    outcomes = _dedupe_task_dirs(outcomes, cached_dirs)
    fresh = [o if o.ref not in cached_dirs else o.failed("cached", "") for o in outcomes]
    fresh = _wave("postprocess", fresh, submitter(postprocess_task, lambda o: {"seed": seed}), progress)
    _store_rejections(fresh, cache, cache_keys, ("postprocess",))
    fresh = _wave("finalize", fresh, submitter(finalize_task, lambda o: {
        "tasks_root": str(staging), "seed": seed, "design_digest": digest, "cache_dir": str(cache),
        "key": cache_keys[o.ref]}), progress)
    outcomes = [f if o.ref not in cached_dirs else o for o, f in zip(outcomes, fresh)]
    lap("build")
    for o in outcomes:  # cache hits that survived the task-folder check
        if o.ok and o.ref in cached_dirs:
            build_cache.restore(cache, cache_keys[o.ref], cached_dirs[o.ref], staging)
    lap("cache restore")
    # A cached task that already passed the guard once is not re-run in two fresh interpreters: that
    # would cost a no-op nightly rerun as much as building. Tasks the guard passes are marked so.
    verified = {o.ref for o in outcomes
                if o.ref in cached_dirs and build_cache.is_verified(cache, cache_keys[o.ref])}
    # fresh-interpreter determinism; schemas/ copy
    guarded = guard_staging_tree(staging, [o.failed("cached", "") if o.ref in verified else o for o in outcomes])
    outcomes = [o if o.ref in verified else g for o, g in zip(outcomes, guarded)]
    for o in outcomes:
        if o.ok and o.ref in cache_keys:
            build_cache.mark_verified(cache, cache_keys[o.ref])
    lap("guard")
    entries = [read_json(Path(o.work_dir) / steps.ENTRY_JSON) for o in outcomes if o.ok]
    usages = [read_json(p) for o in outcomes if (p := Path(o.work_dir) / steps.DESIGN_USAGE_JSON).exists()]
    shutil.rmtree(work_root, ignore_errors=True)  # absent when no candidate was considered
    write_question_list(staging, entries)
    from finalize.dsagent.build import write_dsagent  # DSAgentBench desktop configs, validated (issue 8)
    dsagent_report = write_dsagent(staging, seed) if entries else None
    env = fingerprint()
    write_json(staging / names.ENVIRONMENT, env)
    write_json(staging / names.MANIFEST, build_manifest(staging, {
        "seed": seed, "sources": sources, "limit": limit, "designer": designer,
        "design_config": digest, "code_version": code_version(), "tasks": len(entries)}))
    lap("root files")
    report = _report(outcomes, entries, candidates, time.monotonic() - started, seed, sources, limit)
    report["cached"] = sum(o.ok and o.ref in cached_dirs for o in outcomes)
    report["dsagentbench"] = dsagent_report  # counts and dropped desktop tasks with reasons
    report["time_series"] = ts_counts(staging, entries)  # tasks, panels, resampled (finalize/timeseries.py)
    if settings_json:
        report["llm"] = LLMUsage.total(usages)
    report["published"] = bool(entries)
    if entries:
        report["generation"] = staging.name.removesuffix(".partial")
    write_json(staging / names.RUN_REPORT_JSON, report)
    write_report_md(staging, report)
    if entries:
        _write_tree_reports(staging)  # after the run report: the corpus report charts its rejections
        lap("tree reports")
        problems = check_generation(staging)
        if problems:
            raise RuntimeError(f"generation {staging.name} not published: {'; '.join(problems[:5])}")
        previous = published_generation(out_path)
        if previous is not None:
            _write_diff_reports(previous, staging)
        lap("check and diff")
        crash_point("publish")
        publish(staging, out_path, keep)
        lap("publish")
        print(f"daregen: seconds by phase: {laps}", file=sys.stderr, flush=True)
    else:  # an empty build must never replace a published tree; its reasons stay readable beside it
        kept = staging.parent / f"unpublished-{names.RUN_REPORT_MD}"
        shutil.copyfile(staging / names.RUN_REPORT_MD, kept)
        report["run_report_md"] = str(kept)
        shutil.rmtree(staging)
    return report


def _report_warning(what: str, exc: Exception) -> None:
    """A report is a view of the tree, not part of it: its failure is a warning, never a lost build."""
    reason = (str(exc).strip().splitlines() or [""])[0][:200]
    print(f"daregen: warning: {what} not written ({type(exc).__name__}: {reason})", file=sys.stderr, flush=True)


def _write_tree_reports(tree: Path) -> None:
    from pipeline.reports import write_tree_reports

    try:
        write_tree_reports(tree)
    except Exception as exc:  # noqa: BLE001 -- see _report_warning
        _report_warning("tree reports", exc)


def _write_diff_reports(old: Path, new: Path) -> None:
    from pipeline.diff import write_diff_reports

    try:
        write_diff_reports(old, new, new)
    except Exception as exc:  # noqa: BLE001 -- see _report_warning
        _report_warning("diff reports", exc)


def _designer_settings_json(designer: str, settings: dict | None) -> str:
    """Validated settings for the designer ("" if it has none); a relative cache folder is made absolute."""
    if designer not in DESIGNERS:
        raise ValueError(f"unknown designer {designer!r} (known: {', '.join(sorted(DESIGNERS))})")
    if designer not in DESIGNER_SETTINGS:
        if settings:
            raise ValueError(f"designer {designer!r} takes no settings")
        return ""
    parsed = DESIGNER_SETTINGS[designer].model_validate(settings or {})
    if hasattr(parsed, "cache_dir"):
        parsed = parsed.model_copy(update={"cache_dir": str(Path(parsed.cache_dir).resolve())})
    return parsed.model_dump_json()


def _dedupe_tables(outcomes: list[Outcome]) -> list[Outcome]:
    """The same table reaching the build twice (two sources, two versions) is built once: the source
    step's digest is the content hash of the normalised table, and the later ref loses."""
    seen: dict[str, str] = {}
    out = []
    for o in outcomes:
        if o.ok:
            if o.digest in seen:
                o = o.failed("source", f"duplicate of {seen[o.digest]} (same table content)")
            else:
                seen[o.digest] = o.ref
        out.append(o)
    return out


def _apply_cache(outcomes: list[Outcome], cache: Path, cache_keys: dict[str, str]
                 ) -> tuple[list[Outcome], dict[str, str]]:
    """Cached rejections become failed outcomes; cached tasks are returned as {ref: task folder} and
    their entry is put in the work folder, where the flow collects entries."""
    out, hits = [], {}
    for o in outcomes:
        hit = build_cache.lookup(cache, cache_keys[o.ref]) if o.ok else None
        if hit is not None and not hit["ok"]:
            o = o.failed(hit["stage"], hit["reason"])
        elif hit is not None:
            hits[o.ref] = hit["task_dir"]
            write_json(Path(o.work_dir) / steps.ENTRY_JSON, hit["entry"])
        out.append(o)
    return out, hits


def _store_rejections(outcomes: list[Outcome], cache: Path, cache_keys: dict[str, str], stages) -> None:
    for o in outcomes:
        if (not o.ok and o.stage in stages and o.ref in cache_keys
                and build_cache.cacheable_rejection(o.stage, o.reason)):
            build_cache.store_rejection(cache, cache_keys[o.ref], o.stage, o.reason)


def _dedupe_task_dirs(outcomes: list[Outcome], cached_dirs: dict[str, str]) -> list[Outcome]:
    """Two datasets must never write the same task folder; the later ref loses, with a reason."""
    seen: dict[str, str] = {}
    out = []
    for o in outcomes:
        if o.ok:
            task_dir = cached_dirs.get(o.ref) or steps.load_spec(Path(o.work_dir)).task_dir
            if task_dir in seen:
                o = o.failed("design", f"task folder {task_dir} already taken by {seen[task_dir]}")
            else:
                seen[task_dir] = o.ref
        out.append(o)
    return out


def _report(outcomes: list[Outcome], entries: list[dict], candidates: list, seconds: float, seed: int,
            sources: str, limit: int | None) -> dict:
    by_type: dict[str, int] = {}
    formats: dict[str, int] = {}
    for e in entries:
        by_type[e["task"]] = by_type.get(e["task"], 0) + 1
        ftype = e["needed_files_v1"][0].rsplit(".", 1)[-1]
        formats[ftype] = formats.get(ftype, 0) + 1
    rejections = [{"ref": o.ref, "stage": o.stage, "reason": o.reason} for o in outcomes if not o.ok]
    return {
        "considered": len(candidates),
        "built": len(entries),
        "by_type": dict(sorted(by_type.items())),
        "by_format": dict(sorted(formats.items())),
        "tasks": sorted(e["file_path"] for e in entries),
        "rejections": rejections,
        "seconds": round(seconds, 2),
        "seed": seed,
        "sources": sources,
        "limit": limit,
    }


def serve(cron: str = "0 2 * * *", timezone: str = "UTC", parameters: dict | None = None) -> None:
    """Serve the deployment `build-tasks/nightly` on the Prefect API in PREFECT_API_URL: it runs on
    `cron` (in `timezone`) and whenever `prefect deployment run build-tasks/nightly` is called."""
    from prefect.schedules import Cron

    build_tasks.serve(name="nightly", schedules=[Cron(cron, timezone=timezone)], parameters=parameters or {},
                      description="Nightly regeneration of the daregen task tree", pause_on_shutdown=False)


if __name__ == "__main__":
    build_tasks()
