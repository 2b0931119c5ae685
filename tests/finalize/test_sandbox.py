"""Every job run through finalize.sandbox is contained: no network, no ground truth, no writes outside its
directory, bounded processes, memory, time and output, no credentials, nothing left running; each failure
comes back with its reason, and the warm pool serves the next job afterwards."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import threading
import uuid
from pathlib import Path

import pandas as pd
import pytest

from finalize import sandbox
from finalize.reference_solution import predict
from finalize.runner import run_reference, run_reference_sandboxed
from finalize.sandbox import Limits, run_in_sandbox
from pipeline.core import names
from pipeline.core.records import DatasetRejected
from tests.factories import DARE_EXAMPLES, NO_DARE_EXAMPLES, TABULAR_EXAMPLES
from tests.finalize import hostile_jobs as jobs

pytestmark = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")


def _survivors(marker: str) -> list[int]:
    """Host PIDs whose /proc/PID/comm is `marker`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == marker:
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """A task tree with a readable verify/ next to the job's files, to try to steal from."""
    task_dir = tmp_path / "tree" / "some_task_class"
    (task_dir / names.SOURCE_DIR).mkdir(parents=True)
    (task_dir / names.VERIFY_DIR).mkdir()
    (task_dir / names.SOURCE_DIR / "train_v1.csv").write_text("a,b\n1,2\n")
    (task_dir / names.VERIFY_DIR / names.GROUND_TRUTH).write_text("row_id,y\n1,SECRET-TRUTH\n")
    return task_dir


def _files(task: Path) -> dict[str, Path]:
    return {f"{names.SOURCE_DIR}/train_v1.csv": task / names.SOURCE_DIR / "train_v1.csv"}


@pytest.fixture(autouse=True)
def pool_serves_the_next_job():
    """After every hostile job, the same pool runs an honest one."""
    yield
    res = run_in_sandbox(jobs.healthy)
    assert res.ok, res.reason


def test_an_honest_job_sees_only_its_files(task: Path) -> None:
    res = run_in_sandbox(jobs.healthy, files=_files(task), hide=(task.parent,))
    assert res.ok and res.isolated, res.reason
    assert res.value["files"] == [names.SOURCE_DIR]


def test_socket_to_loopback_and_name_resolution_fail() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(5)
    accepted = []
    threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True).start()
    try:
        res = run_in_sandbox(jobs.open_socket, (server.getsockname()[1],))
    finally:
        server.close()
    assert res.ok, res.reason
    assert res.value["connect"].startswith("refused"), res.value
    assert res.value["resolve"].startswith("refused"), res.value
    assert accepted in ([], [None])


def _accept(server: socket.socket):
    try:
        return server.accept()
    except OSError:
        return None


def test_ground_truth_and_home_files_are_unreadable(task: Path, tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text("machine x password SECRET-HOME\n")
    monkeypatch.setenv("HOME", str(home))
    truth = task / names.VERIFY_DIR / names.GROUND_TRUTH
    targets = ["../verify/ground_truth.csv", "../../verify/ground_truth.csv", str(truth),
               "~/.netrc", str(home / ".netrc"), "/root/.bashrc"]
    res = run_in_sandbox(jobs.read_files, (targets,), files=_files(task), hide=(task.parent,))
    assert res.ok, res.reason
    leaked = {p: v for p, v in res.value.items() if isinstance(v, str) and v.startswith("READ:")}
    assert not leaked, leaked
    assert "SECRET" not in json.dumps(res.value)


def test_writes_outside_the_working_directory_do_not_land(task: Path) -> None:
    token = uuid.uuid4().hex[:8]
    targets = [str(task / names.SOURCE_DIR / "train_v1.csv"), str(task / f"escape-{token}"),
               f"../escape-{token}", f"/tmp/daregen-escape-{token}", str(Path.cwd() / f"escape-{token}")]
    res = run_in_sandbox(jobs.write_files, (targets,), files=_files(task), hide=(task.parent,))
    assert res.ok, res.reason
    assert (task / names.SOURCE_DIR / "train_v1.csv").read_text() == "a,b\n1,2\n"
    for p in targets[1:]:
        assert not Path(p).exists() and not (Path("/tmp") / Path(p).name).exists(), p
    assert res.value[str(task / names.SOURCE_DIR / "train_v1.csv")].startswith("refused")


def test_fork_bomb_hits_the_process_limit_and_leaves_nothing() -> None:
    marker = f"dgbomb{uuid.uuid4().hex[:8]}"
    res = run_in_sandbox(jobs.fork_bomb, (marker,), limits=Limits(nproc=32, wall_s=30))
    assert res.ok, res.reason
    assert res.value["errno"] == errno.EAGAIN and res.value["forked"] < 32, res.value
    assert _survivors(marker) == []


def test_50_gb_allocation_is_a_memory_limit() -> None:
    res = run_in_sandbox(jobs.allocate, (50,))
    assert res.status == "memory", (res.status, res.reason)
    assert "memory limit" in res.reason


def test_infinite_loop_is_a_timeout() -> None:
    res = run_in_sandbox(jobs.spin, limits=Limits(wall_s=3))
    assert res.status == "timeout" and "timed out after 3s" in res.reason, res.reason
    assert res.wall_s < 3 + 10


def test_infinite_loop_hits_the_cpu_limit_too() -> None:
    res = run_in_sandbox(jobs.spin, limits=Limits(wall_s=30, cpu_s=1))
    assert res.status == "timeout" and "CPU" in res.reason, res.reason


def test_printing_1_gb_is_captured_up_to_the_cap() -> None:
    res = run_in_sandbox(jobs.print_bytes, (1 << 30,), limits=Limits(wall_s=120, output_bytes=1 << 16))
    assert res.ok, res.reason
    assert res.stdout_bytes >= 1 << 30
    assert len(res.stdout) == 1 << 16


def test_credentials_are_scrubbed_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-daregen-test-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-daregen-test-secret")
    res = run_in_sandbox(jobs.read_secret, ("OPENAI_API_KEY", os.getpid()))
    assert res.ok, res.reason
    assert res.value["env"] is None
    assert "daregen-test-secret" not in json.dumps(res.value)
    assert sandbox.scrubbed_environment(dict(os.environ)).keys().isdisjoint({"OPENAI_API_KEY", "MY_SERVICE_TOKEN"})


def test_a_daemon_child_is_killed_with_the_job() -> None:
    marker = f"dgdmn{uuid.uuid4().hex[:8]}"
    res = run_in_sandbox(jobs.leave_daemon, (marker,))
    assert res.ok, res.reason
    assert _survivors(marker) == []


def test_a_failing_job_reports_its_exception() -> None:
    res = run_in_sandbox(jobs.read_files, (None,))
    assert res.status == "error" and "TypeError" in res.reason


def test_opting_out_runs_unisolated(monkeypatch) -> None:
    monkeypatch.setenv(sandbox.SANDBOX_ENV, "off")
    res = run_in_sandbox(jobs.healthy)
    assert res.ok and not res.isolated


# ---------------------------------------------------------------- the reference runner uses the sandbox


@pytest.mark.parametrize("name", TABULAR_EXAMPLES)
def test_sandboxed_reference_matches_reference_solution(name: str, tmp_path: Path) -> None:
    if not (DARE_EXAMPLES / name).exists():
        pytest.skip(NO_DARE_EXAMPLES)
    task_dir = Path(shutil.copytree(DARE_EXAMPLES / name, tmp_path / name))
    out = tmp_path / "pred.csv"
    run_reference(task_dir, out)
    pd.testing.assert_frame_equal(pd.read_csv(out), predict(task_dir))


def test_reference_failures_are_dataset_rejections(tmp_path: Path) -> None:
    name = TABULAR_EXAMPLES[0]
    if not (DARE_EXAMPLES / name).exists():
        pytest.skip(NO_DARE_EXAMPLES)
    task_dir = Path(shutil.copytree(DARE_EXAMPLES / name, tmp_path / name))
    q = json.loads((task_dir / names.VERIFY_DIR / names.ALL_METADATA).read_text())["question"]
    res = run_reference_sandboxed(task_dir, question={**q, "numerical_features": ["no_such_column"]})
    assert res.status == "error" and "no_such_column" in res.reason
    (task_dir / names.SOURCE_DIR / names.data_file(names.VAL_V1, q["save_file_type"])).unlink()
    with pytest.raises(DatasetRejected, match="reference solution failed"):
        run_reference(task_dir, tmp_path / "pred.csv")


def test_an_interpreter_under_tmp_is_visible_to_the_job(tmp_path: Path) -> None:
    """A checkout cloned under /tmp (its .venv there too) must not lose its interpreter to the job's empty
    /tmp: the guard's fresh interpreters exec it. A venv under tmp_path (itself under /tmp) runs a job that
    execs its own python; the host's other /tmp files stay out of sight."""
    import subprocess
    import sys
    import sysconfig

    assert str(tmp_path.resolve()).startswith("/tmp/")
    venv = tmp_path / "clone" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(subprocess.check_output([str(venv / "bin" / "python"), "-c",
                                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    # This project's code and its libraries, reachable from the new venv as from ours.
    (site / "daregen-under-test.pth").write_text(
        f"{Path(sysconfig.get_paths()['purelib'])}\n{Path(__file__).resolve().parents[2]}\n")
    (tmp_path / "host-secret.txt").write_text("not for the job")
    script = (
        "import subprocess, sys\n"
        "from finalize.sandbox import run_in_sandbox\n"
        "res = run_in_sandbox(subprocess.call, args=([sys.executable, '-c', 'raise SystemExit(42)'],))\n"
        "print(res.status, res.value, res.reason)\n"
        f"seen = run_in_sandbox(__import__('os').path.exists, args=({str(tmp_path / 'host-secret.txt')!r},))\n"
        "print(seen.status, seen.value)\n")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line.strip() for line in out.stdout.strip().splitlines()]
    assert lines[0] == "ok 42", out.stdout + out.stderr[-2000:]  # the job ran its interpreter
    assert lines[1] == "ok False"
