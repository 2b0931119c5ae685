"""Warming the root phase during the waves starts this process's sandbox fork server and loads the guard's and
the root files' modules in the background, and importing the build alone still loads none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: the test process may have started a fork server or imported the modules already.
_PROBE = """
import json, sys
from multiprocessing import forkserver
from pipeline.build import ROOT_PHASE_MODULES, warm_root_phase
before = [m for m in ROOT_PHASE_MODULES if m in sys.modules]
server_before = forkserver._forkserver._forkserver_pid
warm_root_phase().join(timeout=300)
pid = forkserver._forkserver._forkserver_pid
print(json.dumps({"before": before, "server_before": server_before, "server": pid,
                  "after": [m for m in ROOT_PHASE_MODULES if m in sys.modules]}))
"""


def test_warm_root_phase_starts_the_fork_server_and_imports_the_root_modules() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == [] and seen["server_before"] is None  # the build's import stays light
    assert isinstance(seen["server"], int) and seen["server"] > 0
    assert seen["after"] == ["pipeline.guard", "finalize.dsagent.build", "finalize.timeseries"]
