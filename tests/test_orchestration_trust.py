"""A served deployment, against a real Prefect server, takes from whoever triggers a run only what is safe: every
parameter that is the operator's (an endpoint and key variable, a Dask scheduler, an output or cache folder, a
ledger, read limits, a source outside the allow-list) ends the run before any work, in one line naming the
setting and who sets it, with no traceback and no file touched. A good run (and so the schedule, which passes no
ledger) honours the ledger the operator registered, and a run restored from the build cache, which has no task
run, still shows every dataset's outcome and rejection in its artifact table."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request

from pipeline.deployment import OPERATOR_ENV, RUN_PARAMETERS
from tests.factories import write_datasets
from tests.orchestration_helpers import VENV_BIN, child_env, kill_group, registered, run_deployment

# What a trigger sent in issue 42's findings, and the setting each must be refused by.
HOSTILE = [({"designer": "llm", "designer_settings": {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1",
                                                      "api_key_env": "AWS_SECRET_ACCESS_KEY", "allow_key_env": True}},
            "designer_settings"),
           ({"runner": "dask", "dask_address": "tcp://127.0.0.1:9"}, "runner"),
           ({"out": "VICTIM", "force": True}, "out"),
           ({"sources": "local:/etc"}, "sources"),
           ({"cache_dir": "VICTIM"}, "cache_dir"),
           ({"curation": "/dev/zero"}, "curation"),
           ({"input_limits": {"max_rows": 10**12}}, "input_limits")]


HOSTILE_NAME = "<img src=x onerror=alert(1)>\x1b[31m"  # no slash: it is a file name


def _create_run(api_url: str, deployment_id: str, **body) -> str:
    """A run of the deployment as any API client may create it: with the server's schema check switched off
    (`enforce_parameter_schema`, which the API leaves to the caller), so only the flow's own check stands."""
    request = urllib.request.Request(f"{api_url}/deployments/{deployment_id}/create_flow_run", method="POST",
                                     data=json.dumps({**body, "enforce_parameter_schema": False}).encode(),
                                     headers={"Content-Type": "application/json"})
    for attempt in range(6):  # a busy server answers 503 for a while (Prefect's own client retries it too)
        try:
            with urllib.request.urlopen(request, timeout=30) as resp:
                return json.loads(resp.read())["id"]
        except urllib.error.HTTPError as exc:
            if exc.code != 503 or attempt == 5:
                raise
            time.sleep(2 + 2 * attempt)


def _finished(client, run_id, timeout: float = 600):
    deadline = time.monotonic() + timeout
    while True:
        run = client.read_flow_run(run_id)
        if run.state is not None and run.state.is_final():
            return run
        assert time.monotonic() < deadline, f"run {run_id} never finished: {run.state}"
        time.sleep(1)


def _logs(client, run_id, expected: str, timeout: float = 60) -> list[str]:
    """The run's log lines, once one holds `expected` (a run's logs reach the API in batches, after its state)."""
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    deadline = time.monotonic() + timeout
    while True:
        lines = [e.message for e in client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))]
        if any(expected in line for line in lines) or time.monotonic() > deadline:
            return lines
        time.sleep(1)


def _artifacts(client, key: str):
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    return sorted(client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))),
                  key=lambda a: a.created)


def test_a_served_run_takes_only_safe_parameters_and_the_registered_ledger(tmp_path, prefect_api_url):
    from prefect.client.orchestration import SyncPrefectClient

    from flows import OUTCOMES_ARTIFACT, SUMMARY_ARTIFACT

    data = tmp_path / "data"
    write_datasets(data, n=2)
    # rejected (too few rows) under a hostile name: its markup and escape bytes reach Prefect inert
    (data / f"tiny{HOSTILE_NAME}.csv").write_text("x,y\n" + "".join(f"{i},{i % 3}\n" for i in range(8)))
    ledger = tmp_path / "curation.toml"
    ledger.write_text('[[reject]]\nref = "local/d1"\nreason = "not an outcome, says the curator"\n', encoding="utf-8")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "id_rsa").write_text("the operator's key\n")
    out = tmp_path / "published" / "tasks"
    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url, AWS_SECRET_ACCESS_KEY="server-secret")
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([str(VENV_BIN / "daregen"), "serve", "--out", str(out), "--sources", f"local:{data}",
                               "--curation", str(ledger), "--max-limit", "5", "--cache-dir", str(tmp_path / "c")],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deployment = registered(prefect_api_url, server, tmp_path / "serve.log")
        # The run form offers what a run may set; the operator's settings are not parameters at all.
        assert set(deployment["parameter_openapi_schema"]["properties"]) == set(RUN_PARAMETERS)
        assert "curation" not in deployment["parameters"] and deployment["parameters"]["limit"] == 5

        with SyncPrefectClient(prefect_api_url) as client:
            runs = []
            for params, setting in HOSTILE:
                params = {k: str(victim) if v == "VICTIM" else v for k, v in params.items()}
                runs.append((_create_run(prefect_api_url, deployment["id"], parameters=params), f"'{setting}' refused"))
            runs.append((_create_run(prefect_api_url, deployment["id"], parameters={}, job_variables={
                "env": {OPERATOR_ENV: str(tmp_path / "mine.toml")}}), "job variables ['env'] refused"))
            for run_id, expected in runs:
                run = _finished(client, run_id)
                message = run.state.message or ""
                assert run.state.is_failed() and expected in message and "\n" not in message, message
                logs = _logs(client, run_id, expected)
                assert any(expected in line for line in logs), logs
                assert not any("Traceback" in line for line in logs), "\n".join(logs)
        assert (victim / "id_rsa").read_text() == "the operator's key\n" and sorted(victim.iterdir()) == [
            victim / "id_rsa"]
        assert not out.exists() and not (tmp_path / "published").exists()  # nothing built, nothing written

        # Through the prefect CLI as a user would: a value out of the operator's bounds is refused by Prefect as
        # the run is created, in one line, and no run starts.
        for param, words in (("limit=50", "maximum of 5"), ("sources=local:/etc", "is not one of")):
            refused = run_deployment(env, param, completed=False)
            said = refused.stdout + refused.stderr
            assert refused.returncode != 0 and words in said and "Created flow run" not in said, said[-2000:]
            # one message (which rich wraps at the terminal's width), no traceback
            assert said.count("Error creating flow run") == 1 and "Traceback" not in said, said

        run_deployment(env, "seed=1")  # no ledger among its parameters: the registered one decides
        run_deployment(env, "seed=1")  # unchanged: every outcome restored from the build cache, no task run
        with SyncPrefectClient(prefect_api_url) as client:
            first, second = _artifacts(client, OUTCOMES_ARTIFACT)[-2:]
        for artifact in (first, second):
            rows = artifact.data if isinstance(artifact.data, list) else json.loads(artifact.data)
            by_name = {row["dataset or task"]: row for row in rows}
            assert by_name["local/d1"]["outcome"] == "rejected", rows
            assert "not an outcome, says the curator" in by_name["local/d1"]["reason"], rows
            assert by_name["local/d0_copy"]["outcome"] == "rejected", rows
            assert any(name.startswith("local_d0_") for name in by_name), rows
        rows = json.loads(second.data) if isinstance(second.data, str) else second.data
        hostile = next(row for row in rows if row["dataset or task"].startswith("local/tiny"))
        assert "too few rows" in hostile["reason"] and "\x1b" not in hostile["dataset or task"], hostile
        with SyncPrefectClient(prefect_api_url) as client:
            summary = _artifacts(client, SUMMARY_ARTIFACT)[-1].data
            logs = _logs(client, second.flow_run_id, "rejected local/tiny")
            names = [t.name for t in client.read_task_runs()]
        assert "<img" not in summary and "\x1b" not in summary and "too few rows" in summary, summary
        assert any("rejected local/tiny" in line for line in logs), logs
        assert not any("\x1b" in line for line in logs + names), [n for n in logs + names if "\x1b" in n]
        assert {row["outcome"] for row in rows if not row["dataset or task"].startswith("local/")} == {
            "kept (unchanged)"}
        assert all(row["from the build cache"] == "yes" for row in rows if row["outcome"] != "rejected"), rows
        # Stopped as an operator stops it (SIGTERM: Prefect's runner shuts down gracefully), serve says so; its
        # banner names its one source rather than counting "sources among 1" (issue 49).
        kill_group(server, signal.SIGTERM)
        said = (tmp_path / "serve.log").read_text()
        assert f"sources (only local:{data})" in said and "stopped serving build-tasks/nightly" in said, said[-3000:]
    finally:
        kill_group(server)
        log.close()


def test_a_served_run_is_bounded_by_serve_limit_and_the_operators_publish_pin(tmp_path, prefect_api_url):
    """Issue 48, against a real server: `daregen serve --limit 3` alone bounds every run at 3 (a trigger's
    `limit: null` or 10**9 is no longer "every candidate"), and `--publish approved --pin-publish` makes the
    served release approved-only and its limit the operator's (a trigger's `limit: 1` would publish a subset of
    the approved tasks): a run asking `publish: all` or another limit ends Failed in one line naming the setting and
    who sets it, before any work."""
    from prefect.client.orchestration import SyncPrefectClient

    data = tmp_path / "data"
    write_datasets(data, n=2)
    out = tmp_path / "published" / "tasks"
    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url)
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([str(VENV_BIN / "daregen"), "serve", "--out", str(out), "--sources", f"local:{data}",
                               "--limit", "3", "--publish", "approved", "--pin-publish",
                               "--cache-dir", str(tmp_path / "c")],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deployment = registered(prefect_api_url, server, tmp_path / "serve.log")
        schema = deployment["parameter_openapi_schema"]["properties"]
        assert schema["limit"]["maximum"] == 3 and "anyOf" not in schema["limit"], schema["limit"]
        assert schema["publish"]["enum"] == ["approved"], schema["publish"]
        assert deployment["parameters"]["publish"] == "approved" and deployment["parameters"]["limit"] == 3
        assert schema["limit"]["minimum"] == 3  # pinned: the operator's limit only (red team 48 #9)
        pinned_limit = "'limit' refused: the operator pins publish to 'approved' and with it the limit to 3"
        cases = [({"limit": None}, f"{pinned_limit} (daregen serve --max-limit, else --limit, with daregen serve "
                                   "--pin-publish); a run may not ask every candidate"),
                 ({"limit": 10**9}, f"{pinned_limit} (daregen serve --max-limit"),
                 ({"limit": 1}, f"{pinned_limit} (daregen serve --max-limit"),  # a subset release: refused too
                 ({"publish": "all"}, "'publish' refused: the operator pins it to 'approved' (daregen serve "
                                      "--pin-publish)")]
        with SyncPrefectClient(prefect_api_url) as client:
            runs = [(_create_run(prefect_api_url, deployment["id"], parameters=params), expected)
                    for params, expected in cases]
            for run_id, expected in runs:
                run = _finished(client, run_id)
                message = run.state.message or ""
                assert run.state.is_failed() and expected in message and "\n" not in message, message
                logs = _logs(client, run_id, expected)
                assert not any("Traceback" in line for line in logs), "\n".join(logs)
        assert not (tmp_path / "published").exists()  # refused before any work: nothing built, nothing written
    finally:
        kill_group(server)
        log.close()


def test_the_locked_work_pool_template_ignores_a_runs_job_variables(prefect_api_url):
    """Issue 48: with a worker, a run's job variables are applied by the worker before the flow can refuse them
    (a process pool's default template runs `{{ command }}` with `{{ env }}`: any command, any operator settings).
    The repository's work-pool.json, accepted by a real server as a process pool's template, gives Prefect's own
    rendering (what the worker runs) nothing of them: the engine's command, the worker's environment."""
    import asyncio
    from pathlib import Path

    from prefect.client.orchestration import PrefectClient, SyncPrefectClient
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.workers.process import ProcessJobConfiguration, ProcessWorker

    template = json.loads((Path(__file__).parents[1] / "work-pool.json").read_text(encoding="utf-8"))
    with SyncPrefectClient(prefect_api_url) as client:
        pool = client.create_work_pool(WorkPoolCreate(name="daregen-locked", type="process",
                                                      base_job_template=template), overwrite=True)
    assert pool.base_job_template == template
    hostile = {"command": "sh -c 'id > /tmp/pwned'", "env": {OPERATOR_ENV: "/tmp/mine.toml"},
               "env.PREFECT_API_URL": "http://198.51.100.7/api", "working_dir": "/tmp"}

    async def rendered(base: dict):
        async with PrefectClient(prefect_api_url) as client:
            return await ProcessJobConfiguration.from_template_and_values(base, hostile, client=client)

    locked = asyncio.run(rendered(pool.base_job_template))
    assert (locked.command, locked.env, locked.working_dir) == (None, {}, None), locked
    default = asyncio.run(rendered(ProcessWorker.get_default_base_job_template()))
    assert default.command == hostile["command"] and default.env[OPERATOR_ENV] == "/tmp/mine.toml"  # the hole
