"""The Prefect API a `daregen build` talks to: the configured server, or one ephemeral server per process.

Left to itself, Prefect starts its ephemeral API server
(prefect.server.api.server.SubprocessASGIServer) at the flow's first API call.
By then this process has imported everything the flow needs and, to reach that
class, Prefect's whole server package (~3 s of CPU on a quiet 2-core machine,
the same code the server subprocess then imports again). The server's own
start-up (~5 s, mostly imports) comes after all of that, and the two never
overlap. Here the same server command is launched as soon as the arguments
are checked. Its start-up then runs on the other core while this process
imports the pipeline and lists candidates, and this process never imports
Prefect's server package.

The server is Prefect's, started the way SubprocessASGIServer starts it (its
uvicorn factory, the private PREFECT__SERVER_EPHEMERAL flag that turns off the
UI and the services an ephemeral run does not need). tests/pipeline/test_prefect_api.py
builds through it, so a Prefect upgrade that changes the command fails there.
A configured server (PREFECT_API_URL from the environment, the active profile
or prefect.toml) is used as it is, and no server is started.

Block types are not registered at the ephemeral server's start. A build uses
no blocks, and Prefect would otherwise import every installed collection
(prefect_dask pulls in dask.distributed) to hash its block registry, on every
start. The memo of that hash is also left unwritten, so a later
`prefect server start` on the same home still registers them.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

# Defaults for the ephemeral server only; the user's environment and Prefect profile win.
EPHEMERAL_SERVER_DEFAULTS = {
    "PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
    "PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false",
}
_PORT_IN_USE = 3  # uvicorn's exit status when its port was taken between our probe and its bind
_POLL_S = 0.05


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EphemeralApi:
    """One Prefect API server in a subprocess on a loopback port. `start()` returns at once;
    `wait_ready()` blocks until /api/health answers. Stopped when this process exits."""

    def __init__(self) -> None:
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.started_at: float | None = None
        self.ready_after_s: float | None = None  # seconds from start() to a healthy server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def start(self) -> None:
        if self.process is not None:
            return
        self.started_at = time.monotonic()
        self._launch()
        atexit.register(self.stop)  # before Prefect's own exit hooks, so they flush events to it first

    def _launch(self) -> None:
        import prefect
        from prefect.settings import get_current_settings

        # Prefect makes its home but not the folders above it; without one, the server's database has
        # nowhere to go and the server never answers (a build waited out the whole start-up timeout
        # for PREFECT_HOME=/tmp/new/prefect). Made here, whole, before the server starts.
        Path(get_current_settings().home).expanduser().mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        env = {**EPHEMERAL_SERVER_DEFAULTS, **os.environ,
               **get_current_settings().to_environment_variables(exclude_unset=True),
               "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
        env.pop("PREFECT_API_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect.__module_path__.parent), "--factory",
             "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
             "--log-level", "error", "--lifespan", "on"], env=env)

    def wait_ready(self, timeout_s: float) -> None:
        if self.ready_after_s is not None:
            return
        if self.process is None:
            raise RuntimeError("the ephemeral Prefect server was never started")
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.process.poll()
            if status == _PORT_IN_USE:
                self._launch()
            elif status is not None:
                raise RuntimeError(f"the ephemeral Prefect server exited with status {status} before it answered")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as resp:
                    if resp.status == 200:
                        self.ready_after_s = time.monotonic() - self.started_at
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the ephemeral Prefect server did not answer within {timeout_s:.0f} s "
                                   "(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)")
            time.sleep(_POLL_S)

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_EPHEMERAL: EphemeralApi | None = None


def ephemeral_api() -> EphemeralApi:
    """This process's ephemeral server, started on the first call: every later build reuses it."""
    global _EPHEMERAL
    if _EPHEMERAL is None:
        _EPHEMERAL = EphemeralApi()
    _EPHEMERAL.start()
    return _EPHEMERAL


def start_prefect_api() -> EphemeralApi | None:
    """Point Prefect at its API before the pipeline loads. A configured PREFECT_API_URL is used as it is
    (None is returned). Otherwise, with Prefect's ephemeral mode on (its default profile), this process's
    ephemeral server is started without waiting for it, and every later Prefect client, in any thread or
    Dask worker, is given its URL. Call `wait_ready` on the result before the flow starts."""
    from prefect.settings import get_current_settings

    settings = get_current_settings()
    if settings.api.url or not settings.server.ephemeral.enabled:
        return None  # a configured server; or ephemeral mode off, where Prefect reports the missing URL
    api = ephemeral_api()
    os.environ["PREFECT_API_URL"] = api.url
    # Prefect read its settings when it was imported; its background services (the events and log
    # workers) read these global settings, not a caller's temporary_settings.
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()
    return api


def startup_timeout_s() -> float:
    from prefect.settings import get_current_settings

    return float(get_current_settings().server.ephemeral.startup_timeout_seconds)
