"""Prefect settings daregen needs before Prefect is imported.

Without a configured server, `daregen build` runs Prefect in ephemeral mode: a
temporary API server in a subprocess (pipeline.prefect_api starts it). On a
loaded 2-core machine that start-up can take well over Prefect's default 20 s
timeout, so the timeout is raised. Per-task "Finished in state" lines would
drown the build summary, so logs are warnings only, and telemetry (which would
try to reach the internet) is off. The temporary server is stopped when the
build's process exits, and on a fresh Prefect home it then logs tracebacks about
task-run events it had not flushed yet; they are harmless for a server that is
going away, so its own logger reports critical errors only.
A served deployment is different: its runs are read in the Prefect UI, so the flow
run's own INFO lines (the build summary, each rejection with its reason) are kept
there, while per-task state lines stay off. Users' own settings win: these are
defaults only.
"""

from __future__ import annotations

import os

PREFECT_DEFAULTS = {
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "600",
    "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
}


# Overrides Prefect's logging.yml `loggers.prefect.flow_runs.level` (PREFECT_LOGGING_<path>).
SERVICE_DEFAULTS = {"PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL": "INFO"}


def configure_prefect(service: bool = False) -> None:
    for key, value in {**PREFECT_DEFAULTS, **(SERVICE_DEFAULTS if service else {})}.items():
        os.environ.setdefault(key, value)
