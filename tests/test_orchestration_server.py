"""The nightly deployment works end to end against a real Prefect server: served, triggered by the prefect CLI,
it publishes a generation and, from the second run on, a curator diff against the previous one; and the run is
readable in Prefect itself: the deployment's tag, the build summary as an artifact, each rejection with its reason
in the run's log and in the state of the task run that rejected it."""

from __future__ import annotations

import json
import subprocess

from pipeline.core import names
from pipeline.publish import published_generation
from tests.factories import write_datasets
from tests.orchestration_helpers import VENV_BIN, child_env, kill_group, registered, run_deployment


def _summary_and_rejections(api_url: str) -> tuple[str, list[str], list[str]]:
    """Through the Prefect client: the latest run's summary artifact, its log lines, and the messages of the
    task runs in a "Rejected" state."""
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.client.schemas.filters import (ArtifactFilter, ArtifactFilterKey, LogFilter, LogFilterFlowRunId,
                                                TaskRunFilter, TaskRunFilterState, TaskRunFilterStateName)

    from flows import SUMMARY_ARTIFACT

    with SyncPrefectClient(api_url) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[SUMMARY_ARTIFACT])))
        latest = max(artifacts, key=lambda a: a.created)
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[latest.flow_run_id])))
        rejected = client.read_task_runs(task_run_filter=TaskRunFilter(
            state=TaskRunFilterState(name=TaskRunFilterStateName(any_=["Rejected"]))))
    return latest.data, [log.message for log in logs], [t.state.message for t in rejected]


def test_served_nightly_deployment_publishes_and_diffs(tmp_path, prefect_api_url):
    data = tmp_path / "data"
    write_datasets(data, n=3)
    (data / "tiny.csv").write_text("x,y\n" + "".join(f"{i},{i % 3}\n" for i in range(8)))  # rejected: too few rows
    out = tmp_path / "published" / "tasks"
    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url)
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([str(VENV_BIN / "daregen"), "serve", "--cron", "30 3 * * *", "--timezone",
                               "Europe/Paris", "--out", str(out), "--sources", f"local:{data}", "--limit", "5"],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deployment = registered(prefect_api_url, server, tmp_path / "serve.log")
        schedule = deployment["schedules"][0]["schedule"]
        assert (schedule["cron"], schedule["timezone"]) == ("30 3 * * *", "Europe/Paris")
        assert deployment["parameters"]["limit"] == 5
        assert deployment["tags"] == ["daregen"] and "Europe/Paris" in deployment["description"]

        run_deployment(env, "seed=1")
        first = published_generation(out)
        assert first is not None and json.loads((out / names.QUESTION_LIST).read_text())
        assert (out / "corpus_report.html").is_file()

        run_deployment(env, "seed=2")
        second = published_generation(out)
        assert second != first and first.is_dir()  # the previous generation is kept
        diff = (out / "diff.md").read_text()
        assert "changed" in diff.lower(), diff[:2000]
        report = json.loads((out / names.RUN_REPORT_JSON).read_text())
        assert report["seed"] == 2 and report["built"] > 0

        summary, logs, rejected = _summary_and_rejections(prefect_api_url)
        assert f"built:** {report['built']} task" in summary and "too few rows" in summary
        for name in (names.RUN_REPORT_MD, "corpus_report.html", "diff.html"):
            assert f"{second / name}`" in summary, summary
        assert any("rejected local/tiny at" in line and "too few rows" in line for line in logs), logs
        assert any(m.startswith("rejected at ") and "too few rows" in m for m in rejected), rejected
    finally:
        kill_group(server)
        log.close()


def _latest_run(api_url: str) -> tuple:
    """Through the Prefect client: the flow run of the latest outcomes table, its log lines, its summary artifact
    and the table's rows."""
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey, LogFilter, LogFilterFlowRunId

    from flows import OUTCOMES_ARTIFACT, SUMMARY_ARTIFACT

    with SyncPrefectClient(api_url) as client:
        latest = {key: max(client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))),
                           key=lambda a: a.created) for key in (OUTCOMES_ARTIFACT, SUMMARY_ARTIFACT)}
        run_id = latest[OUTCOMES_ARTIFACT].flow_run_id
        assert latest[SUMMARY_ARTIFACT].flow_run_id == run_id
        run = client.read_flow_run(run_id)
        logs = [log.message for log in client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))]
    table = latest[OUTCOMES_ARTIFACT].data
    return run, logs, latest[SUMMARY_ARTIFACT].data, json.loads(table) if isinstance(table, str) else table


def test_a_served_run_that_publishes_nothing_fails_and_counts_alike_everywhere(tmp_path, prefect_api_url):
    """publish=approved with stale approvals: the CLI would exit 1, so the flow run ends Failed with the one-line
    reason, and its log, outcomes table and summary artifact count the withheld tasks apart from the rejected."""
    data = tmp_path / "data"
    write_datasets(data, n=3)  # d0, d1, d2 and d0_copy (rejected: a duplicate of d0)
    ledger = tmp_path / "curation.toml"
    ledger.write_text("".join(f'[[approve]]\nref = "local/d{i}"\ndigest = "{"0" * 32}"\n\n' for i in (0, 1)))
    out = tmp_path / "published" / "tasks"
    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url)
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([str(VENV_BIN / "daregen"), "serve", "--out", str(out), "--sources", f"local:{data}",
                               "--curation", str(ledger), "--publish", "approved", "--limit", "5"],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        registered(prefect_api_url, server, tmp_path / "serve.log")
        proc = run_deployment(env, completed=False)
        assert proc.returncode != 0 and "Failed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert published_generation(out) is None  # nothing was published, nothing replaced
        run, logs, summary, table = _latest_run(prefect_api_url)
        assert run.state.is_failed(), run.state
        reason = run.state.message
        assert reason.startswith("nothing published: none of the 3 built tasks is approved") and "\n" not in reason
        assert "2 changed since approval" in reason and "1 unreviewed" in reason, reason
        assert any(line == f"daregen: {reason}" for line in logs), logs
        counts = "rejected: 1; withheld: 3"
        assert any(counts in line for line in logs), logs
        assert counts in summary and reason in summary, summary
        outcomes = [row["outcome"] for row in table]
        assert sorted(outcomes) == ["rejected", "withheld", "withheld", "withheld"], table
        withheld_lines = [line for line in logs if line.startswith("daregen: withheld local/d")]
        assert len(withheld_lines) == 3 and not any(line.startswith("daregen: rejected local/d0 at withheld")
                                                    for line in logs), logs
    finally:
        kill_group(server)
        log.close()
