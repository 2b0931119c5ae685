"""`daregen --version` names the version and the code digest the build cache keys on, and `--help` shows each
flag's default and choices instead of repeating a phrase."""

from __future__ import annotations

import subprocess
import sys

from pipeline.core.environment import code_digest, code_version


def _daregen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, text=True, timeout=120)


def test_version_prints_the_version_and_the_code_digest():
    proc = _daregen("--version")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == f"daregen {code_version()} (code digest {code_digest()})\n"


def test_serve_help_shows_each_runs_defaults_and_the_designers():
    text = " ".join(_daregen("serve", "--help").stdout.split())
    assert "default flow parameter" not in text
    for shown in ("(default generated/tasks/)", "(default 0)", "(default builtin)", "(default heuristic)",
                  "{heuristic,llm}", "(default: every candidate)"):
        assert shown in text, shown
    assert "{heuristic,llm}" in " ".join(_daregen("build", "--help").stdout.split())
