"""Processes for the orchestration tests: a real Prefect server on loopback, builds in a child process that
can be killed. (The datasets they build are tests/factories.py's.)"""

from __future__ import annotations

import os
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env(home: Path, cache: Path, api_url: str | None = None, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API_", "DAREGEN_CRASH"))}
    env.update({"PREFECT_HOME": str(home), "DAREGEN_CACHE": str(cache),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"})
    if api_url:
        env["PREFECT_API_URL"] = api_url
    env.update(extra)
    return env


@contextmanager
def prefect_server(home: Path):
    """`prefect server start` on 127.0.0.1 with its own home; yields the API URL."""
    port = free_port()
    home.mkdir(parents=True, exist_ok=True)
    env = child_env(home, home / "unused-cache", PREFECT_UI_ENABLED="false")
    log = open(home / "server.log", "w")
    proc = subprocess.Popen([str(VENV_BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port",
                             str(port)], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"prefect server did not start: {(home / 'server.log').read_text()[-2000:]}")
            time.sleep(1)
        yield url
    finally:
        kill_group(proc, signal.SIGTERM)
        log.close()


def kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Signal the child's own process group (it was started in a new session), then reap it."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def daregen_build(args: list[str], env: dict, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline.cli", "build", *args], env=env,
                            start_new_session=True, **popen)


def deployment(api_url: str, name: str = "build-tasks/nightly") -> dict | None:
    """The deployment as the Prefect API holds it, None before it is registered."""
    try:
        with urllib.request.urlopen(f"{api_url}/deployments/name/{name}", timeout=10) as resp:
            return json.loads(resp.read())
    except OSError:
        return None


SERVING = "build-tasks/nightly is served"  # what `daregen serve` prints once the deployment is complete


def registered(api_url: str, server: subprocess.Popen, log: Path) -> dict:
    """Wait for `daregen serve` (`server`, writing `log`) to register build-tasks/nightly; the deployment."""
    deadline = time.monotonic() + 300
    while SERVING not in log.read_text() or (found := deployment(api_url)) is None:
        assert server.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "the deployment never registered"
        time.sleep(2)
    return found


def run_deployment(env: dict, *params: str, completed: bool = True) -> subprocess.CompletedProcess:
    """`prefect deployment run build-tasks/nightly --watch` with `--param` for each of `params`; asserts the run
    completed (unless `completed` is False) and returns the finished command."""
    args = [str(VENV_BIN / "prefect"), "deployment", "run", "build-tasks/nightly", "--watch", "--watch-timeout", "900"]
    for p in params:
        args += ["--param", p]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1000)
    if completed:
        assert proc.returncode == 0 and "Completed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc
