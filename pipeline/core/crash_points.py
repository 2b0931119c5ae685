"""Test hook: `DAREGEN_CRASH_POINT=<name>` makes the build touch `DAREGEN_CRASH_MARKER` and sleep at that point,
so a test can kill it (SIGKILL, SIGTERM) at a known place instead of racing it. In the kernel, so that a step
(pipeline.steps) and publishing (pipeline.publish) share it."""

from __future__ import annotations

import os
import time
from pathlib import Path

CRASH_POINT_ENV, CRASH_MARKER_ENV = "DAREGEN_CRASH_POINT", "DAREGEN_CRASH_MARKER"


def crash_point(name: str) -> None:
    if os.environ.get(CRASH_POINT_ENV) == name:
        Path(os.environ[CRASH_MARKER_ENV]).write_text(name, encoding="utf-8")
        time.sleep(3600)
