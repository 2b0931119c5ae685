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
