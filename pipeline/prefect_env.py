"""Prefect settings daregen needs before Prefect is imported.

`daregen build` runs Prefect in ephemeral mode: it starts a temporary API server
in a subprocess. On a loaded 2-core machine that start-up can take well over
Prefect's default 20 s timeout, so the timeout is raised. Per-task "Finished in
state" lines would drown the build summary, so logs are warnings only, and
telemetry (which would try to reach the internet) is off. Users' own settings
win: these are defaults only.
"""

from __future__ import annotations

import os

PREFECT_DEFAULTS = {
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "600",
}


def configure_prefect() -> None:
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
