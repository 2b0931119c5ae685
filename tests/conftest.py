"""Shared fixtures: task trees built once per session through the real Prefect flow.

Building is the expensive part of the suite (Prefect's ephemeral server and the
reference runs), so the tree-level tests share two builds: one in-process
through the flow, one through the `daregen` CLI in a fresh interpreter with a
different PYTHONHASHSEED, for the determinism test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pipeline.prefect_env import configure_prefect
from tests.sourcing.loopback.kaggle_api import SECRET, kaggle_server

# Enough candidates for >= 8 classification and >= 10 regression tasks in all
# three formats; kept small because CI builds it twice.
TREE_LIMIT = int(os.environ.get("DAREGEN_TEST_LIMIT", "70"))
TREE_SEED = 7
# Folders the session made for itself (removed when it ends), by environment variable.
_SESSION_DIRS: dict[str, str] = {}


def pytest_configure(config) -> None:
    """The suite's Prefect state lives in a throwaway home, never the developer's ~/.prefect, and
    its per-dataset build cache (pipeline.build_cache) is its own, so a test never reuses a
    developer's cached tasks. This hook runs before any test module is collected, so before the
    first `import prefect` (Prefect reads its settings at import). The CLI build below gets a home
    and a cache of its own: two ephemeral servers never share one SQLite database, and it must
    build, not copy."""
    for var, prefix in (("PREFECT_HOME", "daregen-test-prefect-"), ("DAREGEN_CACHE", "daregen-test-cache-")):
        if var not in os.environ:
            os.environ[var] = _SESSION_DIRS[var] = tempfile.mkdtemp(prefix=prefix)
    configure_prefect()


def pytest_unconfigure(config) -> None:
    for var, path in _SESSION_DIRS.items():
        shutil.rmtree(path, ignore_errors=True)
        os.environ.pop(var, None)
    _SESSION_DIRS.clear()


@pytest.fixture(scope="session")
def built_tree(tmp_path_factory) -> Path:
    from flows import build_tasks

    out = tmp_path_factory.mktemp("tree_a") / "tasks"
    build_tasks(out=str(out), limit=TREE_LIMIT, seed=TREE_SEED, sources="builtin")
    return out


@pytest.fixture(scope="session")
def cli_tree(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tree_b") / "elsewhere" / "tasks"
    env = {**os.environ, "PYTHONHASHSEED": "12345",
           "PREFECT_HOME": str(tmp_path_factory.mktemp("prefect_home_cli")),
           "DAREGEN_CACHE": str(tmp_path_factory.mktemp("build_cache_cli"))}
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "build", "--limit", str(TREE_LIMIT), "--seed", str(TREE_SEED),
         "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture
def kaggle_env(monkeypatch, tmp_path):
    """A loopback Kaggle API (tests/sourcing/loopback), credentials in the environment as a user sets
    them, a throwaway home and cache."""
    monkeypatch.setenv("KAGGLE_API_ENVIRONMENT", "TEST")  # kagglesdk -> http://localhost:7777
    monkeypatch.setenv("KAGGLE_USERNAME", "daregen-test")
    monkeypatch.setenv("KAGGLE_KEY", SECRET)
    monkeypatch.delenv("KAGGLE_API_TOKEN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.kaggle token of the developer's
    monkeypatch.setenv("DAREGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DAREGEN_RETRY_BASE_S", "0.01")
    monkeypatch.setenv("DAREGEN_KAGGLE_TIMEOUT_S", "3")  # generous: a busy CI box must not time out by itself
    with kaggle_server() as server:
        server.stall_s = 4.0
        yield server


@pytest.fixture(scope="session")
def prefect_api_url(tmp_path_factory) -> str:
    """A real `prefect server start` on 127.0.0.1 (own home, free port), for the orchestration tests."""
    from tests.orchestration_helpers import prefect_server

    with prefect_server(tmp_path_factory.mktemp("prefect_server_home")) as url:
        yield url
