"""Run a job (a picklable callable) in an isolated child forked from a warm fork server.

    result = run_in_sandbox(fn, args, files={"source/train.csv": path}, limits=Limits(wall_s=60))

Importing pandas and scikit-learn costs seconds, fitting a DARE-sized model
milliseconds, so jobs are forked from a multiprocessing fork server that has
them imported already; a fresh interpreter per job would dominate the run time.

Process tree of one job:

    caller ── forkserver ── supervisor (unshared namespaces, private mounts)
                               └── job (PID 1 of a new PID namespace, uid nobody, rlimits)

- The job starts in a fresh working directory holding copies of `files` only (regular files,
  never through a link); it is never handed a path into the task tree. Its root is a new,
  nearly empty file system (pivot_root): the system's programs and libraries (/usr, /lib, ...),
  the few /etc files the loader reads, the interpreter and its import path, daregen's packages
  (not the rest of the checkout), a few devices, an empty /tmp and its working directory at
  JOB_DIR. The task tree, the other generations beside it, the caller's working directory
  (build cache, `generated/`), the homes and everything else do not exist there.
- No network: a new network namespace has only a loopback that is down.
- Its own IPC namespace: System V shared memory and message queues die with the job, never reach the host's.
- Its own UTS namespace, named JOB_HOSTNAME: the host's name (often a machine's or a pod's identity)
  is not the job's to read.
- No new privileges and no new namespaces (finalize.job_seccomp): no exec gains privileges, and a
  seccomp filter refuses unshare, setns and clone into a new namespace, so a job cannot make itself
  root of a user namespace of its own (`unshare -U`), the start of most local kernel exploits.
- The programs, libraries, interpreter and daregen's packages are mounted read-only (the venv's files
  stay unwritable whatever their mode).
- All the job may write is capped: each file by RLIMIT_FSIZE, all of them together by the size of the
  one tmpfs holding /tmp and its working directory (`scratch_bytes` beyond its inputs), plus a small
  /dev/shm.
- Memory and processes are limited for the job as a whole by a cgroup of its own (finalize.job_cgroup)
  where one can be created (root, or a delegated cgroup v2), and per process by rlimits in any case.
- Root ignores RLIMIT_NPROC, so when we are root the job drops to `nobody`.
- The job is PID 1 of its PID namespace: when it exits or is killed, the kernel
  kills every process it left behind, daemons included.
- The job starts with a new, empty session keyring, never the caller's (keys there are readable by
  whoever holds the keyring).
- The environment is an allow-list of the caller's (PATH, locale, time zone, ...), never a credential;
  the fork server itself is started with that environment, so no job's memory ever held one.
- The job mounts its own /proc: it sees the processes of its PID namespace only, not the host's
  (their command lines and environments). In a user namespace (not root) the kernel refuses that
  mount where no full procfs is visible; the job then has no /proc at all.
- stdout and stderr are read through pipes by the supervisor and kept up to a cap.
- The return value travels back as JSON, never pickle: a hostile job must not be
  able to make the caller execute code when it decodes the result. The job's end of that pipe is
  in the job's hands (its code could write on it), so nothing it carries is trusted: the
  supervisor streams it to a file up to `result_bytes` (never into memory, outside the job's
  limits), and the caller accepts exactly one well-formed envelope from a job that exited 0.
  What a job writes there is what it could have returned: checks that must not trust the job
  (scoring its predictions) run in the caller on the value.

Where namespaces cannot be created (no root, no user namespaces) the sandbox
refuses with SandboxUnavailable, unless the caller opts out with
`DAREGEN_SANDBOX=off` (or `Limits(isolate=False)`): rlimits, the scrubbed
environment, the private working directory and process-group cleanup remain.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import json
import multiprocessing
import multiprocessing.util
import os
import platform
import pwd
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing import forkserver
from pathlib import Path
from typing import Any
from collections.abc import Callable

from finalize import job_cgroup, job_seccomp
from pipeline.core.environment import CODE_PACKAGES, ONE_THREAD_ENV

SANDBOX_ENV = "DAREGEN_SANDBOX"  # "off" opts out of namespaces (network, PID, mounts)
# Everything a reference run imports, so no job pays for an import: the lazy ones (pyarrow's dataset
# layer behind pandas.read_parquet, narwhals behind scikit-learn's dataframe checks) were found by
# diffing sys.modules around a run.
PRELOAD = ["finalize.reference_solution", "sklearn.linear_model", "sklearn.neural_network", "sklearn.svm",
           "sklearn.tree", "sklearn.naive_bayes", "sklearn.compose", "pyarrow.parquet", "threadpoolctl",
           "finalize.runner", "pyarrow.dataset", "pyarrow.pandas_compat", "pandas.io.formats.csvs",
           "pandas.core.arrays.arrow.extension_types", "narwhals._pandas_like.dataframe",
           "narwhals._pandas_like.namespace", "narwhals._interchange.dataframe", "narwhals.stable.v2",
           "finalize.warm_pool"]

DETERMINISTIC_ENV = {
    "PYTHONHASHSEED": "0",
    **ONE_THREAD_ENV,
    "PYTHONWARNINGS": "ignore",
}

# The only variables a job inherits (plus DETERMINISTIC_ENV, and HOME/TMPDIR set in the job): an
# allow-list, because no deny-list recognises every secret (`MY_APIKEY`, `DATABASE_URL=postgres://u:pw@h`,
# `TOKEN` all passed the old one). Locale and time zone keep text and time parsing as the caller's.
_ALLOWED_ENV = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|PYTHONPATH|LD_LIBRARY_PATH)$")

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
_CLONE_NEWIPC, _CLONE_NEWUTS = 0x08000000, 0x04000000
# The job's host name, in a UTS namespace of its own: fixed, so nothing about the machine leaks through it.
JOB_HOSTNAME = "daregen-job"
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 8, 0x1000, 0x4000, 0x40000
_PR_SET_PDEATHSIG = 1
# The job's working directory, as the job sees it when isolated: a fixed path, because some libraries
# (sqlite) resolve relative names through getcwd().
JOB_DIR = "/tmp/job"
# The host paths a job's new root holds besides the interpreter and its working directory: programs,
# libraries, the files the dynamic loader and the C library read, and harmless devices.
_SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache",
                 "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd", "/etc/group",
                 "/etc/nsswitch.conf")
_EMPTY_MOUNTS = ("/tmp", "/dev/shm")  # empty tmpfs in every job; /tmp holds JOB_DIR and is sized by scratch_bytes
_SHM_BYTES = 64 << 20
_SCRATCH_INODES = 100_000  # files the job may create: a tmpfs inode costs memory, not blocks
_PAGE = 4096
# A bind mount's read-only remount must repeat the flags the kernel locked on the source mount (it refuses
# to drop them in a user namespace); statvfs reports them in f_flag with the same bit values as MS_*.
_ST_KEPT = 2 | 4 | 8 | 1024 | 2048 | 4096  # nosuid, nodev, noexec, noatime, nodiratime, relatime
_MS_REMOUNT = 0x20
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_JOIN_SESSION_KEYRING = 1
_MNT_DETACH = 2
_HOMES = ("/root", "/home")
# The folder holding daregen's packages (a checkout, or site-packages).
_CODE_ROOT = Path(__file__).resolve().parents[1]
_GRACE_S = 10.0  # the caller's backstop beyond the supervisor's own wall-clock limit


class SandboxUnavailable(RuntimeError):
    """Isolation cannot be set up here and the caller did not opt out."""


@dataclass(frozen=True)
class Limits:
    wall_s: float = 300.0
    cpu_s: int = 600
    memory_bytes: int = 4 << 30  # the job's memory as a whole (cgroup), and each process's address space
    file_bytes: int = 256 << 20  # largest file the job may write
    scratch_bytes: int = 1 << 30  # all the job may write, beyond its inputs (isolated: one tmpfs)
    nproc: int = 64  # the job's processes (cgroup), and its user's (RLIMIT_NPROC, once not root)
    output_bytes: int = 1 << 20  # stdout and stderr kept, each
    # Largest JSON result. The caller parses it (a few times its size in memory, outside the job's limits),
    # so it is bounded well below the job's memory: a tree's batch of reference predictions is a few MB.
    result_bytes: int = 64 << 20
    isolate: bool | None = None  # None: on unless DAREGEN_SANDBOX=off

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s", "memory_bytes", "file_bytes", "scratch_bytes", "nproc", "output_bytes",
                     "result_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive")

    def isolating(self) -> bool:
        if self.isolate is not None:
            return self.isolate
        return os.environ.get(SANDBOX_ENV, "on").strip().lower() not in ("off", "0", "no", "false")


@dataclass(frozen=True)
class SandboxResult:
    status: str  # ok | timeout | memory | crash | error
    value: Any = None  # the job's return value (JSON round trip) when status is ok
    reason: str = ""  # one line, empty when ok
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_bytes: int = 0  # total printed, beyond the cap too
    stderr_bytes: int = 0
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float = 0.0
    isolated: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# ---------------------------------------------------------------- fork server

_ctx_lock = threading.Lock()
_ctx = None


@contextlib.contextmanager
def _caller_hidden():
    """What multiprocessing hands the fork server and every child of the caller, hidden while they start.

    Its main *script*: they would re-import it, re-running a script that calls the pipeline without an
    `if __name__ == "__main__"` guard; hiding its path makes them import only the modules they need.
    Its command line: they would set sys.argv to it, so a job (model-written code) could read a token
    given as an argument (`train.py --hub_token hf_...`); they get the program's name alone. Callers hold
    _ctx_lock, so no two threads swap them at once."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main_file is not None:
        del main.__file__
    argv = sys.argv
    sys.argv = argv[:1]
    try:
        yield
    finally:
        sys.argv = argv
        if main_file is not None:
            main.__file__ = main_file


_server_processes: list[subprocess.Popen] = []  # held so no Popen.__del__ ever reaps the fork server


@contextlib.contextmanager
def _servers_spawned_scrubbed():
    """multiprocessing starts the fork server (and its resource tracker) with util.spawnv_passfds, which
    hands the new interpreter this process's environment: the kernel copies it onto the server's stack,
    Python into its heap, and every job forked from it inherits both, where a job that makes itself
    dumpable reads them back (/proc/self/environ, /proc/self/mem) whatever os.environ says. Spawning
    them with the scrubbed environment instead means no secret is ever in their memory. Callers hold
    _ctx_lock."""
    original = multiprocessing.util.spawnv_passfds

    def spawn_scrubbed(path: str, args: list[str], passfds) -> int:
        proc = subprocess.Popen(args, executable=path, pass_fds=tuple(sorted(map(int, passfds))),
                                env=scrubbed_environment(dict(os.environ)), close_fds=True)
        _server_processes.append(proc)
        return proc.pid

    multiprocessing.util.spawnv_passfds = spawn_scrubbed
    try:
        yield
    finally:
        multiprocessing.util.spawnv_passfds = original


def forkserver_context():
    global _ctx
    with _ctx_lock:
        if _ctx is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
            with _caller_hidden(), _servers_spawned_scrubbed():
                forkserver.ensure_running()
            _ctx = ctx
    return _ctx


@contextlib.contextmanager
def starting_processes():
    """Hold while starting processes of forkserver_context() other than run_in_sandbox's (a
    ProcessPoolExecutor's workers start in its submit): the main script hidden, one thread at a time."""
    with _ctx_lock, _caller_hidden():
        yield


# ---------------------------------------------------------------- caller side


def scrubbed_environment(env: dict[str, str]) -> dict[str, str]:
    clean = {k: v for k, v in env.items() if _ALLOWED_ENV.match(k)}
    clean.update(DETERMINISTIC_ENV)
    return clean


def _unprivileged_ids() -> tuple[int, int] | None:
    """The uid/gid the job runs as: nobody when we are root (root ignores RLIMIT_NPROC)."""
    if os.geteuid() != 0:
        return None
    try:
        pw = pwd.getpwnam("nobody")
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        return 65534, 65534


def run_in_sandbox(fn: Callable[..., Any], args: tuple = (), files: dict[str, Path] | None = None,
                   limits: Limits | None = None, hide: tuple[Path, ...] = ()) -> SandboxResult:
    """Run `fn(*args)` in a sandboxed child; `files` maps relative names in its working directory to
    the files copied there; `hide` lists extra directories the job must not see (the task tree).

    Returns a SandboxResult whatever the job does; raises SandboxUnavailable when isolation is
    impossible here and the caller did not opt out."""
    limits = limits or Limits()
    isolate = limits.isolating()
    ids = _unprivileged_ids()
    run_dir = Path(tempfile.mkdtemp(prefix="daregen-sandbox-"))  # 0700, ours
    cgroup = None
    try:
        workdir = run_dir / "work"
        workdir.mkdir()
        (run_dir / "root").mkdir()
        for rel, src in (files or {}).items():
            dest = (workdir / rel).resolve()
            if workdir.resolve() not in dest.parents:
                raise ValueError(f"sandbox file name {rel!r} leaves the working directory")
            dest.parent.mkdir(parents=True, exist_ok=True)
            _copy_regular_file(Path(src), dest)
        if ids is not None:
            for path in [workdir, *workdir.rglob("*")]:
                if path.is_dir():  # the job may create files, but not rewrite its inputs
                    os.chown(path, *ids)
            os.chmod(run_dir, 0o711)  # the job reaches its cwd, cannot list its neighbours
        hidden = [str(Path(p).resolve()) for p in hide if str(Path(p).resolve()) != "/"]
        home = os.path.expanduser("~")
        hidden += [p for p in (home, *_HOMES, *_caller_paths(hide)) if p not in ("/", "") and os.path.isdir(p)]
        cgroup = job_cgroup.create(limits.memory_bytes, limits.nproc)
        job = _Job(fn=fn, args=tuple(args), workdir=str(workdir), env=scrubbed_environment(dict(os.environ)),
                   limits=limits, isolate=isolate, ids=ids, hidden=tuple(dict.fromkeys(hidden)),
                   root=str(run_dir / "root"), report=str(run_dir / "report.json"), stdout=str(run_dir / "stdout"),
                   stderr=str(run_dir / "stderr"), result=str(run_dir / "result.json"),
                   cgroup_procs=cgroup.procs_files if cgroup else ())
        start = time.monotonic()
        ctx = forkserver_context()
        proc = ctx.Process(target=_supervise, args=(job,), daemon=True)
        with _ctx_lock, _caller_hidden():
            proc.start()
        proc.join(limits.wall_s + _GRACE_S)
        if proc.is_alive():  # the supervisor itself hung; killing it kills the job (PDEATHSIG)
            proc.kill()
            proc.join()
        wall = time.monotonic() - start
        return _result(job, proc.exitcode, wall, cgroup is not None and cgroup.oom_killed())
    finally:
        if cgroup is not None:
            cgroup.remove()
        shutil.rmtree(run_dir, ignore_errors=True)


def _copy_regular_file(src: Path, dest: Path) -> None:
    """Copy `src` only if it is itself a regular file: a job's input that is a link would hand it the
    link's target (`/etc/passwd`, `/proc/self/environ`: the caller's unscrubbed environment), and a
    FIFO would block the copy forever."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ValueError(f"sandbox input {src.name}: {exc.strerror} (a symbolic link is refused)") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"sandbox input {src.name} is not a regular file")
        with open(dest, "wb") as out:
            shutil.copyfileobj(fh, out)


def _caller_paths(hide: tuple[Path, ...]) -> list[str]:
    """What a job could otherwise list beyond its tree: the caller's working directory (the build cache
    and `generated/` by default), daregen's checkout (not site-packages, which holds the interpreter's
    libraries), and the folder around each hidden tree (the other generations of an output)."""
    paths = [os.getcwd(), *(str(Path(p).resolve().parent) for p in hide)]
    if _CODE_ROOT.name not in ("site-packages", "dist-packages"):
        paths.append(str(_CODE_ROOT))
    script_dir = _main_script_dir()
    if script_dir is not None:
        paths.append(script_dir)
    return paths


def _main_script_dir() -> str | None:
    """The folder of the caller's main script, which Python puts first on sys.path (the fork server's
    too), so it would be grafted like an import folder: a harness run as `python ~/rl/train.py` showed
    every job ~/rl, its `.env` included, though the homes are hidden. None without a script, or when the
    script lies in the interpreter's folders or the system's (a console script in the venv's bin/ or
    /usr/bin), or in daregen's own code (`python -m pipeline.cli` from a checkout: the checkout is hidden
    already, and its packages are grafted back for the job, which must import them)."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if not main_file:
        return None
    folder = os.path.dirname(os.path.realpath(main_file))
    needed = [*_SYSTEM_PATHS, *(os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)),
              os.path.realpath(_CODE_ROOT)]
    return None if any(_under(folder, n) for n in needed) else folder


_isolation_checked: bool | None = None


def isolation_possible() -> bool:
    """Whether this machine lets the sandbox isolate a job (tried once, with a real job)."""
    global _isolation_checked
    if _isolation_checked is None:
        try:
            _isolation_checked = run_in_sandbox(os.getpid, limits=Limits(isolate=True, wall_s=60)).ok
        except SandboxUnavailable:
            _isolation_checked = False
    return _isolation_checked


def _read_capped(path: str, cap: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(cap)
    except FileNotFoundError:
        return b""


def _envelope(path: str) -> tuple[dict | None, str]:
    """(the job's result envelope, "") if the file at `path` (what the supervisor kept of the result pipe, at
    most result_bytes) holds exactly one of the two the job's wrapper writes,
    {"ok": true, "value": V} or {"ok": false, "type": NAME, "message": TEXT}; (None, why) otherwise.
    A job's code holds the pipe too: whatever else it wrote there (a second envelope after its own,
    extra keys, a type that is no exception name) is refused, never half-read."""
    try:  # read as text, so only the text and the value are held at once (no bytes beside them)
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"not one JSON document: {str(exc).splitlines()[0][:80]}"
    if isinstance(payload, dict) and payload.get("ok") is True and set(payload) == {"ok", "value"}:
        return payload, ""
    if (isinstance(payload, dict) and payload.get("ok") is False and set(payload) == {"ok", "type", "message"}
            and isinstance(payload["type"], str) and payload["type"].isidentifier()
            and isinstance(payload["message"], str)):
        return payload, ""
    return None, "not the envelope the job's wrapper writes"


def _result(job: _Job, supervisor_exit: int | None, wall: float, oom_killed: bool = False) -> SandboxResult:
    lim = job.limits
    out, err = _read_capped(job.stdout, lim.output_bytes), _read_capped(job.stderr, lim.output_bytes)
    try:
        report = json.loads(Path(job.report).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        report = None
    if report is None:
        return SandboxResult("crash", reason=f"sandbox supervisor died (exit code {supervisor_exit})",
                             stdout=out, stderr=err, wall_s=wall, isolated=job.isolate)
    if report.get("unavailable"):
        # Root can be denied too: container runtimes' default seccomp profiles block unshare(2).
        raise SandboxUnavailable(
            f"cannot isolate the job: {report['unavailable']}. Run as root or enable unprivileged user "
            f"namespaces (sysctl kernel.unprivileged_userns_clone=1); in a container, allow unshare "
            f"(e.g. docker run --security-opt seccomp=unconfined); or opt out with {SANDBOX_ENV}=off "
            f"(no network, PID or filesystem isolation then)")
    common = dict(stdout=out, stderr=err, stdout_bytes=report["stdout_bytes"], stderr_bytes=report["stderr_bytes"],
                  exit_code=report["exit_code"], signal=report["signal"], wall_s=wall, isolated=job.isolate,
                  notes=tuple(report.get("notes", ())))
    sig = report["signal"]
    payload, malformed = None, ""
    if not report.get("result_truncated") and report.get("result_bytes"):
        payload, malformed = _envelope(job.result)
    if report["timed_out"]:
        return SandboxResult("timeout", reason=f"timed out after {lim.wall_s:g}s (wall clock)", **common)
    # As PID 1 of its namespace the job ignores the kernel's SIGXCPU and dies of the SIGKILL at the
    # hard limit, one second later: recognise it by the CPU time spent.
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and report.get("cpu_s", 0) >= lim.cpu_s):
        return SandboxResult("timeout", reason=f"exceeded {lim.cpu_s}s of CPU time", **common)
    if payload is not None and payload.get("ok") is False:
        if payload["type"] == "MemoryError":
            return SandboxResult("memory", reason=f"exceeded the memory limit ({lim.memory_bytes / 2**30:g} GiB)",
                                 **common)
        return SandboxResult("error", reason=f"{payload['type']}: {payload['message']}"[:300], **common)
    if sig == signal.SIGKILL and oom_killed:  # the cgroup's limit: the kernel killed the job, or one of its own
        return SandboxResult("memory", reason=f"exceeded the memory limit ({lim.memory_bytes / 2**30:g} GiB for the "
                             f"job as a whole)", **common)
    if sig is not None:
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        hint = " (likely out of memory)" if sig in (signal.SIGKILL, signal.SIGSEGV, signal.SIGBUS) else ""
        return SandboxResult("crash", reason=f"crashed: killed by {name}{hint}", **common)
    if malformed:
        return SandboxResult("crash", reason=f"crashed: malformed result ({malformed})", **common)
    if payload is None or report["exit_code"] != 0:
        why = (f"result too large: over {lim.result_bytes} bytes (result_bytes)" if report.get("result_truncated")
               else f"exit code {report['exit_code']}")
        return SandboxResult("crash", reason=f"crashed: no result ({why})", **common)
    return SandboxResult("ok", value=payload["value"], **common)


# ---------------------------------------------------------------- child side


@dataclass(frozen=True)
class _Job:
    fn: Callable[..., Any]
    args: tuple
    workdir: str
    env: dict
    limits: Limits
    isolate: bool
    ids: tuple[int, int] | None
    hidden: tuple[str, ...]
    root: str  # an empty folder that becomes the job's root
    report: str
    stdout: str
    stderr: str
    result: str  # where the supervisor keeps what the job wrote on its result pipe (up to result_bytes)
    cgroup_procs: tuple[str, ...] = ()  # the job's cgroup (finalize.job_cgroup), which it joins first


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _code_dirs(hidden: list[str]) -> list[str]:
    """The interpreter, its import path and daregen's packages: what the job's file system must hold
    besides its working directory. An entry that holds a hidden folder (the checkout, the caller's
    working directory) is left out; daregen's packages inside it are listed on their own. An entry inside
    a hidden folder (a home) is kept only when it is the interpreter's, daregen's or a site-packages
    folder: a project of the caller's installed in development mode (`pip install -e ~/rl`) puts ~/rl
    on sys.path, which showed every job that project, its `.env` included."""
    packages = [os.path.realpath(_CODE_ROOT / name) for name in CODE_PACKAGES]  # not the rest of the checkout
    prefixes = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)]
    dirs = sorted({os.path.realpath(p) for p in (*prefixes, *sys.path, *packages) if p and os.path.isdir(p)}, key=len)
    kept: list[str] = []
    for d in dirs:
        private = (any(_under(d, h) for h in hidden) and not any(_under(d, n) for n in (*prefixes, *packages))
                   and os.path.basename(d) not in ("site-packages", "dist-packages"))
        # A folder that is or holds /tmp or /dev/shm would bring the host's over the job's empty ones.
        if (d != "/" and not private and not any(_under(h, d) for h in (*hidden, *_EMPTY_MOUNTS))
                and not any(_under(d, k) for k in kept)):
            kept.append(d)
    return kept


def _graft(libc, path: str, root: str, writable: bool = False) -> None:
    """Make `path` of the host appear at the same path under `root`: a link as the same link, a folder
    or file by a bind mount, read-only unless `writable` (a device); nothing if it does not exist. Read-only
    because a bind mount keeps the host's permissions: the venv's `.lock` (mode 0666) was writable."""
    target = root + path
    if os.path.islink(path):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
        return
    if not os.path.exists(path):
        return
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _check(libc.mount(path.encode(), target.encode(), None, _MS_BIND | _MS_REC, None), f"bind {path}")
    if not writable:
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | (os.statvfs(path).f_flag & _ST_KEPT)
        _check(libc.mount(None, target.encode(), None, flags, None), f"read-only {path}")


def _tree_bytes(folder: str) -> int:
    """What the files under `folder` take in a tmpfs (whole pages)."""
    total = 0
    for top, _, files in os.walk(folder):
        total += sum(-(-os.lstat(os.path.join(top, f)).st_size // _PAGE) * _PAGE for f in files)
    return total


def _copy_inputs(workdir: str, target: str, ids: tuple[int, int] | None) -> None:
    """The job's input files into its scratch tmpfs (the caller copied them as regular files, never through
    a link): folders the job may add to, files it cannot rewrite."""
    shutil.copytree(workdir, target, symlinks=True)
    if ids is not None:
        for top, dirs, _ in os.walk(target):
            os.chown(top, *ids)


def _pivot_root(libc, root: str) -> None:
    """Make `root` the file system's root and drop the old one, so nothing else is reachable."""
    os.chdir(root)
    os.mkdir(".old-root")
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:  # an architecture whose syscall number we do not know: chroot, a weaker fence
        os.chroot(".")
    else:
        _check(libc.syscall(number, b".", b".old-root"), "pivot_root")
        os.chdir("/")
        _check(libc.umount2(b"/.old-root", _MNT_DETACH), "umount the old root")
        os.rmdir("/.old-root")
    os.chdir("/")


def _isolate(job: _Job, libc) -> None:
    """In the supervisor: new mount, network, PID, IPC and UTS namespaces, and a new root holding only the
    system's programs and libraries, the interpreter, daregen's packages, a few devices, an empty
    /tmp and the job's working directory at JOB_DIR. The IPC namespace because System V shared memory
    and message queues outlive their creator: in the host's, a job left a segment of its memory limit's
    size behind after every run, readable by the next job."""
    flags = _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWUTS
    if os.geteuid() != 0:
        flags |= _CLONE_NEWUSER
    _check(libc.unshare(flags), "unshare")
    _check(libc.sethostname(JOB_HOSTNAME.encode(), len(JOB_HOSTNAME)), "sethostname")
    # Mounts below must not propagate back to the host's mount namespace.
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
    root = job.root
    _check(libc.mount(b"tmpfs", root.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,mode=0755"),
           "mount the new root")
    # The empty /tmp and /dev/shm first: a venv or checkout that lives under /tmp is grafted on top of
    # them below; mounted after, they would hide it and the job would find no interpreter.
    # /tmp holds the job's working directory too: one tmpfs caps all it writes (scratch_bytes beyond its
    # inputs), where a bind mount of a host folder let a write bomb fill the host's disk.
    sizes = {"/tmp": job.limits.scratch_bytes + _tree_bytes(job.workdir) + (1 << 20), "/dev/shm": _SHM_BYTES}
    for path in _EMPTY_MOUNTS:
        os.makedirs(root + path, exist_ok=True)
        options = f"size={sizes[path]},nr_inodes={_SCRATCH_INODES},mode=1777".encode()
        _check(libc.mount(b"tmpfs", (root + path).encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options),
               f"mount tmpfs on {path}")
    _copy_inputs(job.workdir, root + JOB_DIR, job.ids)
    hidden = list(job.hidden)
    grafted = [*_SYSTEM_PATHS, *_DEVICES, *_code_dirs(hidden)]
    for path in grafted:
        _graft(libc, path, root, writable=path in _DEVICES)
    for path in hidden:  # a hidden folder inside a grafted one (a checkout under /usr/src, say)
        if any(_under(path, g) and path != g for g in grafted) and os.path.isdir(root + path):
            _check(libc.mount(b"tmpfs", (root + path).encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m"),
                   f"mount tmpfs on {path}")
    os.makedirs(root + "/proc", exist_ok=True)  # the job mounts its own procfs there
    _pivot_root(libc, root)


def _supervise(job: _Job) -> None:
    """The fork server's child: set up isolation, fork the job, pump its output, enforce the wall clock."""
    # The fork server's heap (pandas, scikit-learn) is shared copy-on-write with every job; a garbage
    # collection in the job would walk, and so copy, all of it. Frozen objects are never collected.
    gc.freeze()
    libc = _libc()
    notes: list[str] = []
    report: dict[str, Any] = {"timed_out": False, "exit_code": None, "signal": None, "stdout_bytes": 0,
                              "stderr_bytes": 0}
    report_fd = os.open(job.report, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    out_fd = os.open(job.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err_fd = os.open(job.stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    res_fd = os.open(job.result, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)

    def finish() -> None:
        report["notes"] = notes
        os.write(report_fd, json.dumps(report).encode())
        os.close(report_fd)
        os._exit(0)

    # Opened while /sys is still visible (the new root has none); the job writes itself into them.
    cgroup_fds = [os.open(path, os.O_WRONLY) for path in job.cgroup_procs]
    if not cgroup_fds:
        notes.append("no cgroup here: the memory and process limits hold per process")
    if job.isolate:
        try:
            _isolate(job, libc)
        except OSError as exc:
            report["unavailable"] = exc.strerror or str(exc)
            finish()
    work_fd = os.open(JOB_DIR if job.isolate else job.workdir, os.O_RDONLY | os.O_DIRECTORY)
    pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, result
    pid = os.fork()
    if pid == 0:
        _run_job(job, libc, work_fd, [w for _, w in pipes], [r for r, _ in pipes], cgroup_fds)
    for fd in cgroup_fds:
        os.close(fd)
    for _, w in pipes:
        os.close(w)
    lim = job.limits
    # The result goes to a file like the output, never into this process's memory: it is the job's
    # to write (see the module's notes), and a 200 MB result grew the supervisor past 1 GB, outside
    # the job's cgroup. The caller reads it back, bounded, once the job is gone.
    sinks = {pipes[0][0]: (out_fd, "stdout_bytes", lim.output_bytes),
             pipes[1][0]: (err_fd, "stderr_bytes", lim.output_bytes),
             pipes[2][0]: (res_fd, "result_bytes", lim.result_bytes)}
    report["result_bytes"] = 0

    def keep(target: tuple, chunk: bytes) -> None:
        """Count every byte; keep (to the sink file) only up to the cap."""
        sink, key, cap = target
        kept = max(0, min(len(chunk), cap - report[key]))
        report[key] += len(chunk)
        if kept:
            os.write(sink, chunk[:kept])
    deadline = time.monotonic() + lim.wall_s
    status = None  # set once the job has been reaped
    # A pidfd turns readable when the job exits, so the loop below sleeps in select until there is
    # output or an exit to handle, instead of polling wait4 every few milliseconds.
    try:
        exit_fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # kernels before 5.3: poll
        exit_fd = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)  # PID 1 of its namespace: everything it started dies with it
            report["timed_out"] = True
            break
        watched = [*sinks, *([exit_fd] if exit_fd is not None else [])]
        if watched:
            ready, _, _ = select.select(watched, [], [], min(left, 0.2))
            for fd in ready:
                if fd not in sinks:  # the pidfd: the job has exited; reaped just below
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    os.close(fd)
                    del sinks[fd]
                    continue
                keep(sinks[fd], chunk)
        done, polled, usage = os.wait4(pid, os.WNOHANG)
        if done:
            status = polled
            break
        if not watched:
            time.sleep(0.01)
    if exit_fd is not None:
        os.close(exit_fd)
    if status is None:
        _, status, usage = os.wait4(pid, 0)
    report["cpu_s"] = usage.ru_utime + usage.ru_stime
    # The job is gone, and with it (PID namespace) everything holding the pipes; drain what is left.
    for fd, (sink, key, cap) in list(sinks.items()):
        os.set_blocking(fd, False)
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(fd, 1 << 16):
                keep((sink, key, cap), chunk)
    if os.WIFSIGNALED(status):
        report["signal"] = os.WTERMSIG(status)
    else:
        report["exit_code"] = os.WEXITSTATUS(status)
    if not job.isolate:  # no PID namespace: kill the job's process group (a setsid daemon escapes this)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        notes.append("not isolated: no network, PID or filesystem namespaces")
    report["result_truncated"] = report["result_bytes"] > lim.result_bytes
    os.close(res_fd)
    finish()


def _leave_session_keyring(libc) -> None:
    """Give the job a new, empty session keyring. It inherits the caller's across fork and setuid, and a
    possessor may read every key in it: a token the caller kept there (`keyctl add user ... @s`, a Kerberos
    KEYRING cache) was the job's to read. Where keyctl is refused (a container's seccomp profile), the job
    cannot read keys either."""
    number = _SYS_KEYCTL.get(platform.machine())
    if number is None:
        raise OSError(0, f"keyctl: unknown syscall number on {platform.machine()}")
    if libc.syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EPERM):
            raise OSError(err, f"keyctl join session keyring: {os.strerror(err)}")


def _run_job(job: _Job, libc, work_fd: int, writers: list[int], readers: list[int], cgroup_fds: list[int]) -> None:
    """The job process. Never returns."""
    try:
        job_cgroup.join(cgroup_fds)  # before anything else, so every process the job starts counts there
        _leave_session_keyring(libc)
        for fd in readers:
            os.close(fd)
        out_w, err_w, res_w = writers
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        keep = sorted({0, 1, 2, res_w, work_fd})
        for low, high in zip(keep, [*keep[1:], resource.getrlimit(resource.RLIMIT_NOFILE)[0]]):
            os.closerange(low + 1, high)
        if not job.isolate:
            os.setsid()  # its own process group, killed as a whole afterwards
        else:  # PID 1 of its PID namespace: a procfs of its own lists this namespace's processes only
            try:
                _check(libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None),
                       "mount /proc")
            except OSError:
                # In a user namespace the kernel refuses a new procfs where no full one is visible (the
                # new root has none): the job then has no /proc at all, which hides the host as well.
                if job.ids is not None:
                    raise
        lim = job.limits
        resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_AS, (lim.memory_bytes, lim.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim.file_bytes, lim.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.fchdir(work_fd)
        os.close(work_fd)
        if job.ids is not None:
            uid, gid = job.ids
            os.setgroups([])
            os.setgid(gid)
            resource.setrlimit(resource.RLIMIT_NPROC, (lim.nproc, lim.nproc))
            os.setuid(uid)
        elif os.geteuid() != 0:
            resource.setrlimit(resource.RLIMIT_NPROC, (lim.nproc, lim.nproc))
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after setuid, which clears it
        os.environ.clear()
        os.environ.update(job.env)
        os.environ["HOME"] = os.environ["TMPDIR"] = "/tmp" if job.isolate else os.getcwd()
        sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
        sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
        # Last, once every mount and id change above is done: no new privileges, no new namespaces. Where
        # the kernel refuses it (no seccomp), an isolated job does not run; an unisolated one (opted out)
        # runs with what it has.
        try:
            job_seccomp.install(libc)
        except OSError:
            if job.isolate:
                raise
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(2, f"sandbox setup failed: {exc!r}\n".encode())
        os._exit(70)
    code = 0
    try:
        payload = {"ok": True, "value": job.fn(*job.args)}
        try:
            data = json.dumps(payload).encode("utf-8")
        except (TypeError, ValueError) as exc:
            data = json.dumps({"ok": False, "type": "TypeError",
                               "message": f"job returned a value JSON cannot hold: {exc}"}).encode()
            code = 1
    except BaseException as exc:  # report the reason to the caller, then die
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        data = json.dumps({"ok": False, "type": type(exc).__name__, "message": last}).encode()
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        code = 1
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        view = memoryview(data)
        while view:
            view = view[os.write(res_w, view):]
    os._exit(code)
