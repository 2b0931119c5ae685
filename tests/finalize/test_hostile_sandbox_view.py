"""A sandboxed job sees only what it was given: an allow-listed environment (no `MY_APIKEY`,
`DATABASE_URL` or `TOKEN`), the processes of its own PID namespace, and neither the caller's working
directory (build cache, generated trees), daregen's checkout, the other generations of a tree, nor any
other path but the system's programs and libraries and the interpreter."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

from finalize import sandbox
from finalize.sandbox import run_in_sandbox
from pipeline.core.environment import CODE_PACKAGES
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


def test_the_job_sees_no_path_but_its_folder_the_system_and_the_interpreter(tmp_path: Path, monkeypatch) -> None:
    """Not the other generations beside the tree, the build cache in the working directory, the rest of
    daregen's checkout, the homes or /etc: only the system's programs and libraries, the interpreter,
    daregen's packages, a few devices, an empty /tmp and the job's folder."""
    gens = tmp_path / ".tasks.generations"
    (gens / "older" / "a_class").mkdir(parents=True)
    tree = gens / "current"
    (tree / "b_class").mkdir(parents=True)
    workdir = tmp_path / "project"
    (workdir / ".cache" / "daregen" / "tasks").mkdir(parents=True)
    monkeypatch.chdir(workdir)
    checkout = Path(sandbox.__file__).resolve().parents[1]
    looked = ["/", "/etc", "/tmp", "/dev", str(gens), str(workdir / ".cache"), str(checkout), "/root", "/home", "/var"]
    res = run_in_sandbox(jobs.look_around, (looked,), hide=(tree,))
    assert res.ok, res.reason
    seen = res.value["listable"]
    assert all(seen[p] == "refused: FileNotFoundError" for p in (str(gens), str(workdir / ".cache"), "/var"))
    # The job's /tmp is empty but for its folder, and, for a checkout or venv cloned under /tmp, the way to
    # the interpreter and daregen's packages grafted there (whose own listing is checked below).
    code = [Path(p).resolve() for p in (sys.base_prefix, sys.prefix, checkout)]
    code_under_tmp = {p.relative_to("/tmp").parts[0] for p in code if p.is_relative_to("/tmp") and p != Path("/tmp")}
    assert set(seen["/tmp"]) == {"job", *code_under_tmp}, seen["/tmp"]
    assert set(seen["/dev"]) == {"null", "zero", "full", "random", "urandom", "shm"}
    assert set(seen["/etc"]) <= {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group",
                                 "nsswitch.conf"}
    assert set(seen["/"]) <= {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "tmp", "proc",
                              *(Path(p).parts[1] for p in (sys.base_prefix, sys.prefix, str(checkout)))}
    if (checkout / "pyproject.toml").exists():  # a checkout (not site-packages): only the packages show
        assert set(seen[str(checkout)]) <= set(CODE_PACKAGES) | {".venv"}, seen[str(checkout)]


_HARNESS = '''
import json, sys
sys.path.insert(0, sys.argv[1])
from finalize.sandbox import run_in_sandbox
from tests.finalize import hostile_jobs
res = run_in_sandbox(hostile_jobs.read_files, ([sys.argv[2]],))
print(json.dumps({"ok": res.ok, "reason": res.reason, "value": res.value}))
'''


def test_the_callers_script_folder_is_not_shown_to_the_job(tmp_path: Path) -> None:
    """Python puts the main script's folder first on sys.path, the fork server's included: a harness run
    as `python ~/rl/train.py` must not show the job ~/rl and the `.env` beside the script."""
    import json
    import subprocess

    harness = tmp_path / "rl"
    harness.mkdir()
    (harness / "train.py").write_text(_HARNESS, encoding="utf-8")
    secret = harness / ".env"
    secret.write_text("OPENAI_API_KEY=sk-planted-secret\n", encoding="utf-8")
    secret.chmod(0o644)
    checkout = Path(sandbox.__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(harness / "train.py"), str(checkout), str(secret)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    res = json.loads(run.stdout.strip().splitlines()[-1])
    assert res["ok"], res["reason"]
    assert res["value"][str(secret)] == "refused: FileNotFoundError", res["value"]


def test_a_job_of_python_m_pipeline_cli_still_imports_daregen(tmp_path: Path) -> None:
    """`python -m pipeline.cli build` from a checkout makes daregen's own package folder the main script's
    folder: hiding it as the caller's left every job unable to import pipeline.core (all CF desktop
    variants of such a build were dropped, so it differed from a `daregen build`)."""
    import subprocess

    checkout = Path(sandbox.__file__).resolve().parents[1]
    probe = ("import sys; sys.argv[0] = ''; import __main__; __main__.__file__ = sys.argv[1]\n"
             "from finalize.sandbox import run_in_sandbox\n"
             "res = run_in_sandbox(eval, (\"__import__('pipeline.core.metrics').core.metrics.__name__\",))\n"
             "print(res.ok, res.reason)")
    run = subprocess.run([sys.executable, "-c", probe, str(checkout / "pipeline" / "cli.py")], cwd=checkout,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1].startswith("True"), run.stdout


def test_shared_memory_a_job_leaves_dies_with_it() -> None:
    """System V segments outlive their creator: in the host's IPC namespace a job left its memory behind
    after every run (and a message for the next job). In its own, the segment goes with the job."""
    import ctypes

    res = run_in_sandbox(jobs.leave_shared_memory, (16,))
    assert res.ok, res.reason
    libc = ctypes.CDLL(None, use_errno=True)
    left = libc.shmget(jobs.SHM_KEY, 0, 0)
    if left >= 0:  # clean up before failing, so no later run trips over it
        libc.shmctl(left, 0, None)  # IPC_RMID
    assert left < 0, "the job's shared memory segment survived it on the host"


_KEYRING_HARNESS = '''
import ctypes, json, platform, sys
sys.path.insert(0, sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
keyctl, add_key = {"x86_64": (250, 248), "aarch64": (219, 217)}[platform.machine()]
if libc.syscall(keyctl, 1, b"daregen-test-session") < 0:  # KEYCTL_JOIN_SESSION_KEYRING: a fresh one
    print(json.dumps({"skip": "no keyctl here"})); sys.exit(0)
libc.syscall(add_key, b"user", b"hf_token", b"hf-planted-in-keyring", 21, -3)  # into it
from finalize.sandbox import run_in_sandbox
from tests.finalize import hostile_jobs
res = run_in_sandbox(hostile_jobs.read_session_keyring)
print(json.dumps({"ok": res.ok, "reason": res.reason, "value": res.value}))
'''


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="keyctl syscall number unknown")
def test_the_job_cannot_read_the_callers_session_keyring(tmp_path: Path) -> None:
    """A caller holding a token in its session keyring (`keyctl add user ... @s`, a Kerberos KEYRING cache):
    the fork server and every job inherited that keyring, and a possessor reads its keys."""
    import json
    import subprocess

    script = tmp_path / "harness.py"
    script.write_text(_KEYRING_HARNESS, encoding="utf-8")
    checkout = Path(sandbox.__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(script), str(checkout)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    res = json.loads(run.stdout.strip().splitlines()[-1])
    if "skip" in res:
        pytest.skip(res["skip"])
    assert res["ok"], res["reason"]
    assert res["value"] == [], res["value"]


def test_a_project_of_the_callers_on_sys_path_is_not_shown_to_the_job(tmp_path: Path) -> None:
    """`pip install -e ~/rl` puts ~/rl on sys.path, the fork server's included: the job must not see it
    (the homes are hidden), though the interpreter and daregen's packages stay importable."""
    import json
    import os
    import subprocess

    home = tmp_path / "home"
    project = home / "rl"
    project.mkdir(parents=True)
    secret = project / ".env"
    secret.write_text("OPENAI_API_KEY=sk-planted-secret\n", encoding="utf-8")
    secret.chmod(0o644)
    harness = tmp_path / "harness.py"
    harness.write_text(_HARNESS.replace("sys.path.insert(0, sys.argv[1])",
                                        "sys.path.insert(0, sys.argv[1]); sys.path.append(sys.argv[3])"),
                       encoding="utf-8")
    checkout = Path(sandbox.__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(harness), str(checkout), str(secret), str(project)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "HOME": str(home)})
    assert run.returncode == 0, run.stderr[-2000:]
    res = json.loads(run.stdout.strip().splitlines()[-1])
    assert res["ok"], res["reason"]
    assert res["value"][str(secret)] == "refused: FileNotFoundError", res["value"]
