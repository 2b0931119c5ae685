"""A build talks to exactly one Prefect API: a configured one (PREFECT_API_URL, from the environment or the active
profile) is used and no server is started; otherwise one ephemeral server per process, started by daregen before
the pipeline loads, serves every build of that process, and Prefect never starts one of its own."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.factories import write_datasets
from tests.orchestration_helpers import child_env

# Builds through the CLI's own entry point, in one fresh interpreter, then reports which API they used.
TWO_BUILDS = r"""
import json, sys
from pipeline.cli import main
from pipeline import prefect_api

source, outs = sys.argv[1], sys.argv[2:]
codes, pids = [], []
for seed, out in enumerate(outs):  # a seed each: a build the caches answer alone never starts Prefect
    codes.append(main(["build", "--sources", source, "--limit", "1", "--out", out, "--seed", str(seed)]))
    api = prefect_api._EPHEMERAL
    pids.append(api.process.pid if api is not None and api.process is not None else None)
from prefect.client.orchestration import get_client
with get_client(sync_client=True) as client:
    runs = [r.parameters.get("out") for r in client.read_flow_runs()]
    url = str(client.api_url).rstrip("/")
print(json.dumps({"codes": codes, "pids": pids, "runs": runs, "url": url,
                  "ephemeral_url": prefect_api._EPHEMERAL.url if prefect_api._EPHEMERAL else None,
                  "prefect_server_imported": "prefect.server.api.server" in sys.modules}))
"""

WHICH_API = r"""
from pipeline.prefect_api import start_prefect_api
print(start_prefect_api())
"""


def _child(script: str, args: list[str], env: dict, timeout: float = 1200) -> str:
    proc = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


def _builds(tmp_path, env: dict, n: int) -> dict:
    write_datasets(tmp_path / "data", n=1)
    outs = [str(tmp_path / f"out{i}" / "tasks") for i in range(n)]
    return json.loads(_child(TWO_BUILDS, [f"local:{tmp_path / 'data'}", *outs], env)), outs


def test_two_builds_in_one_process_share_the_one_ephemeral_server_daregen_started(tmp_path):
    # A Prefect home under folders that do not exist yet: Prefect makes only the last one, and its
    # server then never answered (the build waited out the 600 s start-up timeout); daregen makes it.
    home = tmp_path / "not" / "yet" / "home"
    result, outs = _builds(tmp_path, child_env(home, tmp_path / "cache"), 2)
    assert home.is_dir()
    assert result["codes"] == [0, 0]
    assert result["pids"][0] is not None and result["pids"][0] == result["pids"][1]  # started once, kept
    assert result["url"] == result["ephemeral_url"]
    assert sorted(result["runs"]) == sorted(outs)  # both flow runs are on that server
    assert not result["prefect_server_imported"]  # Prefect never started (nor loaded) a server of its own


def test_a_configured_api_url_is_used_and_no_server_is_started(tmp_path, prefect_api_url):
    result, outs = _builds(tmp_path, child_env(tmp_path / "home", tmp_path / "cache", prefect_api_url), 1)
    assert result["codes"] == [0] and result["pids"] == [None] and result["ephemeral_url"] is None
    assert result["url"] == prefect_api_url.rstrip("/")
    assert outs[0] in result["runs"]
    assert not result["prefect_server_imported"]


def test_an_api_url_from_the_profile_or_disabled_ephemeral_mode_starts_nothing(tmp_path):
    profiles = tmp_path / "profiles.toml"
    profiles.write_text('active = "remote"\n[profiles.remote]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n')
    env = child_env(tmp_path / "home", tmp_path / "cache", PREFECT_PROFILES_PATH=str(profiles))
    assert _child(WHICH_API, [], env, timeout=300) == "None"
    env = child_env(tmp_path / "home", tmp_path / "cache", PREFECT_SERVER_EPHEMERAL_ENABLED="false")
    assert _child(WHICH_API, [], env, timeout=300) == "None"  # Prefect itself then reports the missing URL
