"""A sandboxed job holds nothing of the caller's secrets: not in its environment, its /proc/self/environ,
its stack or heap (read back after making itself dumpable), nor in its parent's, init's or the caller's
/proc/PID/environ; the same for a script run through run_script_sandboxed, isolated or not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from finalize import sandbox

pytestmark = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")

REPO = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter whose environment holds the secret from the start, so that the fork server
# is started by a caller holding it (this test process's fork server may be running already).
_CALLER = r"""
import json, os, sys
from pathlib import Path
from finalize.sandbox import Limits, run_in_sandbox
from pipeline.export.sft import run_script_sandboxed
from tests.finalize import hostile_jobs as jobs

secret = os.environ["BARSLEAK_SECRET"]
head, tail = secret[:12], secret[12:]
out = {}
for label, isolate in (("isolated", True), ("not_isolated", False)):
    res = run_in_sandbox(jobs.hunt_secret, (head, tail, os.getpid()), limits=Limits(isolate=isolate))
    out[label] = [res.status, res.reason, res.value]
# What a hostile model-written script sends home: its environment and /proc/self/environ in its prediction.
script = ("import ctypes, os\n"
          "ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)\n"
          "dump = repr(dict(os.environ)) + open('/proc/self/environ', 'rb').read().decode('latin-1')\n"
          "open('prediction.csv', 'w').write(dump)\n")
res = run_script_sandboxed(script, {}, timeout_s=60)
out["script"] = [res.status, res.reason, res.value]
print(json.dumps(out))
"""


def test_a_dumpable_job_finds_no_secret_of_the_caller(tmp_path: Path) -> None:
    secret = f"BARSLEAK-{uuid.uuid4().hex}"
    env = {**os.environ, "BARSLEAK_SECRET": secret, "PYTHONPATH": str(REPO), "DAREGEN_SANDBOX": "on"}
    proc = subprocess.run([sys.executable, "-c", _CALLER], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert secret not in proc.stdout
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for label in ("isolated", "not_isolated"):
        status, reason, found = out[label]
        assert status == "ok", (label, reason)
        assert found["memory_scanned"] > 100 << 20, found  # it did read its heap and stack (pandas is loaded)
        leaks = {k: v for k, v in found.items() if k != "memory_scanned" and v not in (False, []) and
                 not str(v).startswith("refused")}
        assert leaks == {}, (label, leaks)
    status, reason, dump = out["script"]
    assert status == "ok", reason
    assert "PATH" in dump and "BARSLEAK_SECRET" not in dump
