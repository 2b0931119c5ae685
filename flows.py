"""Prefect flow `build-tasks`: source -> profile -> design -> postprocess -> finalize, then publish.

Only the Prefect side of a build lives here. One Prefect task per dataset and
stage, each a one-line wrapper over a step in pipeline.steps, passing an
Outcome (paths and hashes), never a DataFrame; with the local runner the step
itself runs in a worker process (pipeline.step_processes). Stages run as waves over all
datasets (every dataset's source, then every profile, ...): a stage's tasks
never wait on each other, so a small thread pool cannot deadlock on upstream
futures. What a build does between and after the waves (dedupe, the build
cache, the guard, root files, reports, publishing) is pipeline.build's; the
same chain builds one dataset without Prefect in `pipeline.build.build_one`.
The deployment `build-tasks/nightly` is served by `serve()`.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.states import Completed, Failed
from prefect.task_runners import ThreadPoolTaskRunner

from pipeline import build_cache, steps
from pipeline.build import PER_TASK_STAGES, WaveRunner, build_generation, build_inputs
from pipeline.commands import command
from pipeline.curation_check import checked_ledger
from pipeline.progress import WaveProgress
from pipeline.core import names
from pipeline.core.text import printable
from pipeline.deployment import (OPERATOR_ENV, OperatorSettings, RefusedRun, build_parameters, checked_run,
                                 load_operator_settings, run_schema)
from pipeline.publish import build_lock, check_out_target, crash_point, generations_dir, new_generation
from pipeline.review.diff import DIFF_HTML
from pipeline.review.reports import CORPUS_REPORT_HTML
from pipeline.run_report import (counts_text, nothing_published, outcome_line, outcome_rows, rejection_line,
                                 summary_markdown)
from pipeline.step_processes import run_step, step_processes, stopped_by_sigterm
from pipeline.steps import Outcome
from sourcing.registry import source_kind

# Compute-bound stages: no retries (a retry would only repeat a deterministic failure).
# Prefect's own result caching is off: the build cache keys on content, which Prefect cannot see.
_TASK = dict(cache_policy=NO_CACHE, retries=0)
# The source step of a source that downloads (sourcing.registry.SOURCES[key].needs_network) gets
# retries and a tag for a Prefect tag concurrency limit
# (`prefect concurrency-limit create daregen-network 4`), so a nightly run stays polite.
NETWORK_TAG = "daregen-network"
TASK_RUNNERS = ("local", "dask")
DEPLOYMENT_TAGS = ["daregen"]  # as prefect.yaml declares them
SUMMARY_ARTIFACT = "daregen-build-summary"  # the key the UI's Artifacts page lists runs' summaries under
OUTCOMES_ARTIFACT = "daregen-build-outcomes"  # a table: each task and each rejected dataset of a run


def _run_name(stage: str):
    """A task run's name, `finalize REF`, with the ref's control characters shown (printable): a ref holds a
    file or table name, and the name reaches the run's log and every terminal that follows it."""
    def name() -> str:
        from prefect.runtime import task_run

        return printable(f"{stage} {task_run.parameters['prev'].ref}")
    return name


def _reported(outcome: Outcome):
    """A dataset a stage rejected is a normal outcome, not a task failure, but its task run says so: a
    Completed state named "Rejected" whose message is the reason (the UI shows both)."""
    if outcome.ok:
        return outcome
    return Completed(name="Rejected", message=printable(f"rejected at {outcome.stage}: {outcome.reason}"),
                     data=outcome)


@task(name="source", task_run_name=_run_name("source"), **_TASK)
def source_task(prev: Outcome, source_key: str, source_arg: str | None, limits_json: str = "") -> Outcome:
    return _reported(run_step(steps.source_step, prev, source_key, source_arg, limits_json))


@task(name="source-network", task_run_name=_run_name("source"), cache_policy=NO_CACHE, retries=2,
      retry_delay_seconds=10, tags=[NETWORK_TAG])
def source_network_task(prev: Outcome, source_key: str, source_arg: str | None, limits_json: str = "") -> Outcome:
    return _reported(run_step(steps.source_step, prev, source_key, source_arg, limits_json))


@task(name="profile", task_run_name=_run_name("profile"), **_TASK)
def profile_task(prev: Outcome) -> Outcome:
    return _reported(run_step(steps.profile_step, prev))


@task(name="design", task_run_name=_run_name("design"), **_TASK)
def design_task(prev: Outcome, seed: int, designer: str, config_json: str, settings_json: str,
                pin_json: str = "", budget_s: float = steps.DEFAULT_DESIGN_BUDGET_S) -> Outcome:
    return _reported(run_step(steps.bounded_design_step, prev, seed, designer, config_json, settings_json, pin_json,
                              budget_s=budget_s))


@task(name="postprocess", task_run_name=_run_name("postprocess"), **_TASK)
def postprocess_task(prev: Outcome, seed: int) -> Outcome:
    return _reported(run_step(steps.postprocess_step, prev, seed))


@task(name="finalize", task_run_name=_run_name("finalize"), **_TASK)
def finalize_task(prev: Outcome, tasks_root: str, seed: int, design_digest: str, cache_dir: str,
                  key: str) -> Outcome:
    return _reported(run_step(build_cache.finalize_and_store, prev, tasks_root, seed, design_digest, cache_dir, key))


STAGE_TASKS = {"source": source_task, "profile": profile_task, "design": design_task,
               "postprocess": postprocess_task, "finalize": finalize_task}


def task_runner(runner: str = "local", dask_address: str | None = None, dask_workers: int = 2):
    """The task runner for a build: threads in this process (which hand their steps to worker processes,
    pipeline.step_processes), or Dask (a given scheduler, or a LocalCluster of `dask_workers`
    single-threaded processes: the stages hold the GIL)."""
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
    raise ValueError(f"unknown runner {runner!r} (known: {', '.join(TASK_RUNNERS)})")


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
    progress.start(label, len(futures), "task" if label in PER_TASK_STAGES else "dataset")
    for n, (i, fut) in enumerate(futures.items()):
        done[i] = fut.result()
        progress.advance(done[i].ok)
        if n == len(futures) // 2:  # half the wave is done, the rest is still running
            crash_point(label)
    progress.finish()
    return done


def prefect_waves(pool) -> WaveRunner:
    """Run a stage's wave as Prefect tasks on `pool` (the flow's task runner)."""
    progress = WaveProgress()

    def run_wave(stage: str, outcomes: list[Outcome], args) -> list[Outcome]:
        def submit(o: Outcome):
            params = args(o)
            t = STAGE_TASKS[stage]
            if stage == "source" and source_kind(params["source_key"]).needs_network:
                t = source_network_task
            return pool.submit(t, parameters={"prev": o, **params})
        return _wave(stage, outcomes, submit, progress)
    return run_wave


@flow(name="build-tasks", task_runner=ThreadPoolTaskRunner(max_workers=max(1, os.cpu_count() or 1)))
def build_tasks(out: str = names.DEFAULT_OUT, limit: int | None = None, seed: int = 0, sources: str = "builtin",
                designer: str = "heuristic", designer_settings: dict | None = None, runner: str = "local",
                dask_address: str | None = None, dask_workers: int = 2, cache_dir: str | None = None,
                keep_generations: int = 3, input_limits: dict | None = None, force: bool = False,
                column_references: str = "dare", curation: str | None = None, publish: str = "all",
                design_budget_s: float = steps.DEFAULT_DESIGN_BUDGET_S) -> dict:
    """Build a DARE-bench task tree as a new generation and publish it at `out` (a symlink); returns
    the run report (pipeline.build.build_generation).

    `sources` is a spec (`builtin`, `local:PATH`, ...) or a file of specs. `designer_settings`
    configures a designer that has settings (e.g. the LLM designer's model, api_base and cache
    folder); it never holds an API key. `runner` is `local` (threads) or `dask` (`dask_address`
    of a scheduler, or a LocalCluster of `dask_workers` processes). `cache_dir` holds the
    per-dataset build cache (default `$DAREGEN_CACHE`, else pipeline.core.cache.default_cache_root()). `input_limits` raises the
    bounds on reading source files (pipeline.core.safe_io.InputLimits); `force` lets `out` be an
    existing folder daregen did not write (it is moved aside, never deleted). `column_references`
    is how IF texts name features (pipeline.core.records.ColumnReferences; part of the design digest,
    so of every cache key and task fingerprint). `curation` is the path of the curators' ledger
    (pipeline.core.curation), checked against the sources before any work; `publish` is `all` or
    `approved` (only tasks approved at their current design digest). `design_budget_s` bounds one dataset's
    design in wall-clock seconds (0: none): a design past it rejects its dataset, and the build goes on.

    Called in-process (`daregen build`, a test) every parameter is the caller's. A run of the deployment
    takes only pipeline.deployment.RunParameters from its trigger and the rest from the operator's settings
    (OperatorSettings, in the serving process's environment); any other parameter ends the run before any
    work, Failed with one line naming it; so does a run that publishes nothing (every dataset skipped, or every
    task withheld by `publish=approved`), with the run report's one-line reason, as the CLI exits 1.
    """
    served = _served_run()
    if served is not None:  # a run of the deployment: its trigger's choices, the operator's settings
        return _refused(served) if isinstance(served, str) else _build(**served, served=True)
    return _build(out, limit, seed, sources, designer, designer_settings, runner, dask_address, dask_workers,
                  cache_dir, keep_generations, input_limits, force, column_references, curation, publish,
                  design_budget_s)


def _build(out: str, limit: int | None, seed: int, sources: str, designer: str, designer_settings: dict | None,
           runner: str, dask_address: str | None, dask_workers: int, cache_dir: str | None, keep_generations: int,
           input_limits: dict | None, force: bool, column_references: str, curation: str | None,
           publish: str, design_budget_s: float = steps.DEFAULT_DESIGN_BUDGET_S, served: bool = False) -> dict:
    started = time.monotonic()
    out_path = Path(os.path.abspath(out))
    try:
        job, sources, cache = build_inputs(seed, designer, designer_settings, sources, input_limits, cache_dir,
                                           column_references=column_references,
                                           ledger=checked_ledger(curation, sources), publish=publish,
                                           design_budget_s=design_budget_s)
        check_out_target(out_path, force)
    except ValueError as exc:  # the checks before any work (the ledger, `out`): a served run says it in one line
        if served:
            return _refused(str(exc))
        raise
    # The local runner's threads hand their steps to as many worker processes (a Dask worker is a process).
    workers = max(1, os.cpu_count() or 1) if runner == "local" else 1
    with (stopped_by_sigterm(), build_lock(out_path), task_runner(runner, dask_address, dask_workers) as pool,
          step_processes(workers)):
        staging = new_generation(out_path)
        try:
            report = build_generation(prefect_waves(pool), job, staging, out_path, sources=sources, limit=limit,
                                      cache=cache, keep=keep_generations, started=started)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    _log_summary(report, out_path)
    headline = nothing_published(report)
    if served and headline:  # the nightly stopped releasing: a failed run, which an operator's alerts see
        return _refused(headline)
    return report


def _served_run() -> dict | str | None:
    """None for a build whose caller runs it (the CLI, a test: the operator at their own shell). For a run of the
    deployment, whoever triggered it may set only what pipeline.deployment allows: the build's parameters (the
    run's choices, the operator's settings), or the one line that refuses the run before any work."""
    from prefect.context import get_run_context

    flow_run = get_run_context().flow_run
    if flow_run is None or flow_run.deployment_id is None:
        return None
    try:
        operator = load_operator_settings()
        run = checked_run(dict(flow_run.parameters or {}), operator, flow_run.job_variables)
    except RefusedRun as exc:
        return str(exc)
    return build_parameters(run, operator)


def _refused(reason: str) -> Failed:
    """A run that may not start, or published nothing, ends Failed with the reason as its message and one log
    line (no traceback)."""
    line = printable(reason)
    get_run_logger().error("daregen: %s", line)
    return Failed(message=line)


def _log_summary(report: dict, out: Path) -> None:
    """The summary and every rejection with its reason to the run's log, and the summary as a Markdown
    artifact of the run: where a served run is read (the Prefect UI, `prefect deployment run --watch`)."""
    logger = get_run_logger()
    tree = generations_dir(out) / report["generation"] if report.get("generation") else None
    # printable: a dataset's ref and reasons carry column and file names, whose escape bytes would reach
    # every terminal that shows the log (`--watch`, `prefect flow-run logs`).
    logger.info("daregen: %s %d tasks from %d candidate datasets; %s; %s",
                "kept" if report.get("unchanged") else "built", report["built"], report["considered"],
                counts_text(report), printable(outcome_line(report, out, tree)))
    for r in report["rejections"]:
        logger.info("daregen: %s", printable(rejection_line(r)))
    files = {"run report": names.RUN_REPORT_MD, "corpus report": CORPUS_REPORT_HTML, "diff": DIFF_HTML}
    reports = {title: tree / name for title, name in files.items() if tree and (tree / name).is_file()}
    if report.get("run_report_md"):  # an unpublished build's run report, kept beside the output
        reports["run report"] = Path(report["run_report_md"])
    create_markdown_artifact(markdown=summary_markdown(report, out, tree, reports), key=SUMMARY_ARTIFACT,
                             description=printable(f"daregen build of {out}"))
    # Every dataset's outcome, also for a run restored from the build cache, which has no task run to show it.
    create_table_artifact(table=outcome_rows(report), key=OUTCOMES_ARTIFACT,
                          description="every task built and every dataset rejected, with its reason")


def serve(operator: OperatorSettings, cron: str = "0 2 * * *", timezone: str = "UTC",
          parameters: dict | None = None) -> None:
    """Serve the deployment `build-tasks/nightly` on the Prefect API in PREFECT_API_URL: it runs on
    `cron` (in `timezone`) and whenever `prefect deployment run build-tasks/nightly` is called. Every run
    takes `operator`'s settings (from this process's environment, which the runs inherit; never from a
    run's parameters) and `parameters` (RunParameters fields) unless its trigger chooses others."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import DeploymentUpdate
    from prefect.runner import Runner
    from prefect.schedules import Cron

    os.environ[OPERATOR_ENV] = operator.model_dump_json()  # the runs are this process's children
    runner = Runner(name="nightly", pause_on_shutdown=False)
    # add_flow keeps the flow in memory: a run starts in a child process of this one (its environment), and a
    # refused run's log holds the one line, not the engine's traceback of a `python -m prefect.engine` process.
    deployment_id = runner.add_flow(build_tasks, name="nightly", schedules=[Cron(cron, timezone=timezone)],
                                    parameters=parameters or {}, tags=DEPLOYMENT_TAGS,
                                    description=f"Regeneration of the daregen task tree, cron {cron!r} in {timezone}")
    # The UI's run form and the API's schema offer only what a run may set, within the operator's bounds.
    schema = run_schema(build_tasks.parameters.model_dump_for_openapi(), operator)
    with get_client(sync_client=True) as client:
        client.update_deployment(deployment_id, DeploymentUpdate(parameter_openapi_schema=schema))
    print(f"daregen: build-tasks/nightly is served; a run now: "
          f"{command('deployment', 'run', 'build-tasks/nightly', name='prefect')}", file=sys.stderr, flush=True)
    asyncio.run(runner.start())


if __name__ == "__main__":
    build_tasks()
