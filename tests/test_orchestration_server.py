"""The nightly deployment works end to end against a real Prefect server: served, triggered by the prefect CLI,
it publishes a generation and, from the second run on, a curator diff against the previous one."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request

from pipeline.core import names
from pipeline.publish import published_generation
from tests.factories import write_datasets
from tests.orchestration_helpers import VENV_BIN, child_env, kill_group


def _deployment(api_url: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{api_url}/deployments/name/build-tasks/nightly", timeout=10) as resp:
            return json.loads(resp.read())
    except OSError:
        return None


def _run_deployment(env: dict, *params: str) -> None:
    args = [str(VENV_BIN / "prefect"), "deployment", "run", "build-tasks/nightly", "--watch",
            "--watch-timeout", "900"]
    for p in params:
        args += ["--param", p]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1000)
    assert proc.returncode == 0 and "Completed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_served_nightly_deployment_publishes_and_diffs(tmp_path, prefect_api_url):
    data = tmp_path / "data"
    write_datasets(data, n=3)
    out = tmp_path / "published" / "tasks"
    env = child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url)
    log = open(tmp_path / "serve.log", "w")
    server = subprocess.Popen([str(VENV_BIN / "daregen"), "serve", "--cron", "30 3 * * *", "--timezone",
                               "Europe/Paris", "--out", str(out), "--sources", f"local:{data}", "--limit", "4"],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while (deployment := _deployment(prefect_api_url)) is None:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the deployment never registered"
            time.sleep(2)
        schedule = deployment["schedules"][0]["schedule"]
        assert (schedule["cron"], schedule["timezone"]) == ("30 3 * * *", "Europe/Paris")
        assert deployment["parameters"]["limit"] == 4

        _run_deployment(env, "seed=1")
        first = published_generation(out)
        assert first is not None and json.loads((out / names.QUESTION_LIST).read_text())
        assert (out / "corpus_report.html").is_file()

        _run_deployment(env, "seed=2")
        second = published_generation(out)
        assert second != first and first.is_dir()  # the previous generation is kept
        diff = (out / "diff.md").read_text()
        assert "changed" in diff.lower(), diff[:2000]
        report = json.loads((out / names.RUN_REPORT_JSON).read_text())
        assert report["seed"] == 2 and report["built"] > 0
    finally:
        kill_group(server)
        log.close()
