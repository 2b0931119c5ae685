"""A sandboxed job sees only what it was given: an allow-listed environment (no `MY_APIKEY`,
`DATABASE_URL` or `TOKEN`), the processes of its own PID namespace, and neither the caller's working
directory (build cache, generated trees), daregen's checkout nor the other generations of a tree."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from finalize import sandbox
from finalize.sandbox import run_in_sandbox
from tests.finalize import hostile_jobs as jobs

pytestmark = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")


def test_only_allow_listed_variables_reach_the_job(monkeypatch) -> None:
    for name, value in (("MY_APIKEY", "k-1"), ("DATABASE_URL", "postgres://u:pw@db/x"), ("TOKEN", "t-1"),
                        ("LANG", "C.UTF-8")):
        monkeypatch.setenv(name, value)
    res = run_in_sandbox(jobs.look_around, ([],))
    assert res.ok, res.reason
    env = res.value["env"]
    assert env.keys().isdisjoint({"MY_APIKEY", "DATABASE_URL", "TOKEN"})
    assert env["LANG"] == "C.UTF-8" and env["PYTHONHASHSEED"] == "0" and "PATH" in env


def test_the_job_sees_its_own_processes_only() -> None:
    res = run_in_sandbox(jobs.look_around, ([],))
    assert res.ok, res.reason
    assert res.value["pids"] == [1]  # itself, PID 1 of its namespace; no host process or command line


@pytest.fixture
def outside_tmp():
    """A folder outside /tmp and the homes (which the sandbox hid before), so the test shows the new rules."""
    base = Path("/var/cache") / f"daregen-test-{uuid.uuid4().hex[:8]}"
    try:
        base.mkdir(parents=True)
    except OSError:
        pytest.skip("no writable folder outside /tmp")
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_the_cache_the_checkout_and_other_generations_are_hidden(outside_tmp: Path, monkeypatch) -> None:
    gens = outside_tmp / "out" / ".tasks.generations"
    (gens / "older" / "a_class").mkdir(parents=True)
    tree = gens / "current"
    (tree / "b_class").mkdir(parents=True)
    workdir = outside_tmp / "project"
    (workdir / ".cache" / "daregen" / "tasks").mkdir(parents=True)
    monkeypatch.chdir(workdir)
    checkout = Path(sandbox.__file__).resolve().parents[1]
    looked = [str(gens), str(workdir / ".cache"), str(checkout), str(outside_tmp)]
    res = run_in_sandbox(jobs.look_around, (looked,), hide=(tree,))
    assert res.ok, res.reason
    seen = res.value["listable"]
    assert seen[str(gens)] == [] and seen[str(workdir / ".cache")] == "refused: FileNotFoundError"
    assert seen[str(outside_tmp)] == ["out", "project"]  # the rest of the file system is as before
    if (checkout / "pyproject.toml").exists():  # a checkout (not site-packages): only the packages show
        assert set(seen[str(checkout)]) <= set(sandbox.DAREGEN_PACKAGES) | {".venv"}, seen[str(checkout)]
