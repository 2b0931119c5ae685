"""Prefect flow `build-tasks`: source -> profile -> design -> postprocess -> finalize.

One Prefect task per dataset and stage; each is a one-line wrapper over a step
in pipeline.steps and passes an Outcome (paths and hashes), never a DataFrame.
Stages run as waves over all datasets (every dataset's source, then every
profile, ...): a stage's tasks never wait on each other, so a small thread
pool cannot deadlock on upstream futures.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from pipeline import names, steps
from pipeline.environment import code_version, fingerprint
from pipeline.jsonio import read_json, write_json
from pipeline.publish import build_manifest, publish, staging_dir, write_question_list, write_report_md
from pipeline.steps import Outcome
from sourcing.registry import open_source, parse_sources
from task_design.config import DesignConfig
from task_design.llm_schema import LLMUsage
from task_design.registry import DESIGNER_SETTINGS, DESIGNERS

# Compute-bound stages: no retries (a retry would only repeat a deterministic failure).
_TASK = dict(cache_policy=NO_CACHE, retries=0)


@task(name="source", task_run_name="source {prev.ref}", **_TASK)
def source_task(prev: Outcome, key: str, arg: str | None) -> Outcome:
    return steps.source_step(prev, key, arg)


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
def finalize_task(prev: Outcome, tasks_root: str, seed: int, design_digest: str) -> Outcome:
    return steps.finalize_step(prev, tasks_root, seed, design_digest)


def list_candidates(sources: str, limit: int | None) -> list[tuple[str, str | None, str]]:
    """(source key, source argument, ref) in the sources' stable order, first `limit` of them."""
    out = []
    for key, arg in parse_sources(sources):
        out += [(key, arg, ref) for ref in open_source(key, arg).candidates()]
    return out if limit is None else out[: max(0, limit)]


def _wave(label: str, outcomes: list[Outcome], submit) -> list[Outcome]:
    futures = {i: submit(o) for i, o in enumerate(outcomes) if o.ok}
    done = list(outcomes)
    for i, fut in futures.items():
        done[i] = fut.result()
    ok = sum(o.ok for o in done)
    print(f"  {label:<12} {ok:>5} of {len(done)} datasets still in", file=sys.stderr, flush=True)
    return done


@flow(name="build-tasks", task_runner=ThreadPoolTaskRunner(max_workers=max(1, os.cpu_count() or 1)))
def build_tasks(out: str = "generated", limit: int | None = None, seed: int = 0, sources: str = "builtin",
                designer: str = "heuristic", designer_settings: dict | None = None) -> dict:
    """Build a DARE-bench task tree into `out`; returns the run report.

    `designer_settings` configures a designer that has settings (e.g. the LLM
    designer's model, api_base and cache folder); it never holds an API key.
    """
    started = time.monotonic()
    config = DesignConfig()
    config_json, digest = config.model_dump_json(), config.digest()
    settings_json = _designer_settings_json(designer, designer_settings)
    out_path = Path(out)
    staging = staging_dir(out_path)
    try:
        work_root = staging / ".work"
        candidates = list_candidates(sources, limit)
        print(f"daregen: {len(candidates)} candidate datasets from {sources}", file=sys.stderr, flush=True)
        outcomes = [steps.start(ref, str(work_root)) for _, _, ref in candidates]
        keys = {ref: (key, arg) for key, arg, ref in candidates}
        outcomes = _wave("source", outcomes, lambda o: source_task.submit(o, *keys[o.ref]))
        outcomes = _wave("profile", outcomes, lambda o: profile_task.submit(o))
        outcomes = _wave("design", outcomes, lambda o: design_task.submit(o, seed, designer, config_json,
                                                                          settings_json))
        outcomes = _dedupe_task_dirs(outcomes)
        outcomes = _wave("postprocess", outcomes, lambda o: postprocess_task.submit(o, seed))
        outcomes = _wave("finalize", outcomes, lambda o: finalize_task.submit(o, str(staging), seed, digest))
        entries = [read_json(Path(o.work_dir) / steps.ENTRY_JSON) for o in outcomes if o.ok]
        usages = [read_json(p) for o in outcomes if (p := Path(o.work_dir) / steps.DESIGN_USAGE_JSON).exists()]
        shutil.rmtree(work_root, ignore_errors=True)  # absent when no candidate was considered
        write_question_list(staging, entries)
        env = fingerprint()
        write_json(staging / names.ENVIRONMENT, env)
        write_json(staging / names.MANIFEST, build_manifest(staging, {
            "seed": seed, "sources": sources, "limit": limit, "designer": designer,
            "design_config": digest, "code_version": code_version(), "tasks": len(entries)}))
        report = _report(outcomes, entries, candidates, time.monotonic() - started, seed, sources, limit)
        if settings_json:
            report["llm"] = LLMUsage.total(usages)
        report["published"] = bool(entries)
        write_json(staging / names.RUN_REPORT_JSON, report)
        write_report_md(staging, report)
        if entries:
            publish(staging, out_path)
        else:  # an empty build must never replace a published tree
            shutil.rmtree(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


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


def _dedupe_task_dirs(outcomes: list[Outcome]) -> list[Outcome]:
    """Two datasets must never write the same task folder; the later ref loses, with a reason."""
    seen: dict[str, str] = {}
    out = []
    for o in outcomes:
        if o.ok:
            task_dir = steps.load_spec(Path(o.work_dir)).task_dir
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


if __name__ == "__main__":
    build_tasks()
