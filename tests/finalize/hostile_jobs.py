"""Hostile job programs for tests/finalize/test_sandbox.py.

They live in an importable module because the sandbox pickles a job by reference
(the fork server's child imports it). Each returns what it managed to do, as JSON.
"""

from __future__ import annotations

import ctypes
import os
import platform
import socket
import time

FORK_BOMB_MAX = 3000
FORK_BOMB_SECONDS = 10.0


def _set_comm(name: str) -> None:
    """Name the process (/proc/PID/comm) so the test can look for survivors."""
    ctypes.CDLL(None).prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME


def healthy() -> dict:
    return {"cwd": os.getcwd(), "files": sorted(os.listdir("."))}


def open_socket(port: int) -> dict:
    out = {}
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"hello")
            out["connect"] = "connected"
    except OSError as exc:
        out["connect"] = f"refused: {exc}"
    try:
        out["resolve"] = str(socket.getaddrinfo("pypi.org", 443)[0][4])
    except OSError as exc:
        out["resolve"] = f"refused: {exc}"
    return out


def read_files(paths: list[str]) -> dict:
    out = {}
    for p in paths:
        try:
            with open(os.path.expanduser(p), "rb") as fh:
                out[p] = "READ:" + fh.read(200).decode("utf-8", "replace")
        except OSError as exc:
            out[p] = f"refused: {type(exc).__name__}"
    try:
        out["listdir(..)"] = sorted(os.listdir(".."))
    except OSError as exc:
        out["listdir(..)"] = f"refused: {type(exc).__name__}"
    return out


def write_files(paths: list[str]) -> dict:
    out = {}
    for p in paths:
        try:
            with open(p, "w") as fh:
                fh.write("escaped")
            out[p] = "written"
        except OSError as exc:
            out[p] = f"refused: {type(exc).__name__}"
    return out


def fork_bomb(marker: str) -> dict:
    """Forks until refused, FORK_BOMB_MAX forks or FORK_BOMB_SECONDS: bounded here, not by the sandbox."""
    forked, error = 0, None
    deadline = time.monotonic() + FORK_BOMB_SECONDS
    while forked < FORK_BOMB_MAX and time.monotonic() < deadline:
        try:
            pid = os.fork()
        except OSError as exc:
            error = exc.errno
            break
        if pid == 0:
            _set_comm(marker)
            time.sleep(60)
            os._exit(0)
        forked += 1
    return {"forked": forked, "errno": error}


def allocate(gigabytes: int) -> int:
    block = bytearray(gigabytes << 30)
    return len(block)


def spin() -> None:
    while True:
        pass


def print_bytes(total: int) -> int:
    chunk = "x" * ((1 << 20) - 1) + "\n"
    written = 0
    while written < total:
        print(chunk, end="")
        written += len(chunk)
    return written


def read_secret(name: str, parent_pid: int) -> dict:
    out = {"env": os.environ.get(name)}
    for label, path in (("parent", f"/proc/{parent_pid}/environ"), ("init", "/proc/1/environ")):
        try:
            with open(path, "rb") as fh:
                out[label] = "READ:" + fh.read().decode("utf-8", "replace")
        except OSError as exc:
            out[label] = f"refused: {type(exc).__name__}"
    return out


def leave_daemon(marker: str) -> str:
    """Double-forks a session leader that outlives the job unless the sandbox kills it."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            _set_comm(marker)
            time.sleep(120)
        os._exit(0)
    time.sleep(0.5)  # let the daemon name itself
    return "left a daemon"


def look_around(paths: list[str]) -> dict:
    """What a curious job can see: the processes in /proc, its environment, and which paths it can list."""
    listable = {}
    for path in paths:
        try:
            listable[path] = sorted(os.listdir(path))
        except OSError as exc:
            listable[path] = f"refused: {type(exc).__name__}"
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    return {"pids": pids, "env": dict(os.environ), "listable": listable}



def _holds(data: bytes, head: bytes, tail: bytes) -> bool:
    """Whether `data` holds head + tail, found without ever building that string in this process."""
    at = data.find(head)
    while at >= 0:
        if data[at + len(head):at + len(head) + len(tail)] == tail:
            return True
        at = data.find(head, at + 1)
    return False


def _scan_memory(head: bytes, tail: bytes) -> tuple[list[str], int]:
    """The mappings of this process whose bytes hold head + tail (read through /proc/self/mem), and how
    many bytes were read: the stack (where the kernel put the environment at exec), heap and anonymous
    memory, the places an inherited or copied secret would be."""
    found, scanned, overlap = [], 0, len(head) + len(tail)
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            span, perms, name = fields[0], fields[1], (fields[5] if len(fields) > 5 else "")
            if not perms.startswith("r") or name in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
                continue
            if name and not name.startswith("[") and "w" not in perms:
                continue  # a read-only mapping of a file: the file's bytes, not this process's
            start, end = (int(x, 16) for x in span.split("-"))
            offset = start
            while offset < end:
                size = min(end - offset, 16 << 20)
                try:
                    mem.seek(offset)
                    chunk = mem.read(size + overlap if offset + size < end else size)
                except (OSError, ValueError, OverflowError):
                    break
                scanned += min(len(chunk), size)
                if _holds(chunk, head, tail):
                    found.append(line.strip())
                    break
                offset += size
    return found, scanned


def hunt_secret(head: str, tail: str, caller_pid: int) -> dict:
    """What a job that makes itself dumpable (PR_SET_DUMPABLE, so it may read its own /proc files)
    finds of the secret head + tail: in its environment, its /proc/self/environ, its memory, its
    parent's, init's and the caller's /proc/PID/environ. The secret comes in two halves so that the
    job's own arguments never hold it whole."""
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
    h, t = head.encode(), tail.encode()
    out: dict = {"env": any(_holds(f"{k}={v}".encode(), h, t) for k, v in os.environ.items())}
    for label, path in (("self_environ", "/proc/self/environ"), ("parent_environ", f"/proc/{os.getppid()}/environ"),
                        ("init_environ", "/proc/1/environ"), ("caller_environ", f"/proc/{caller_pid}/environ")):
        try:
            with open(path, "rb") as fh:
                out[label] = _holds(fh.read(), h, t)
        except OSError as exc:
            out[label] = f"refused: {type(exc).__name__}"
    try:
        out["memory"], out["memory_scanned"] = _scan_memory(h, t)
    except OSError as exc:
        out["memory"], out["memory_scanned"] = f"refused: {type(exc).__name__}", 0
    return out


def memory_in_children(children: int, megabytes: int) -> dict:
    """Forks `children` processes one after another, each touching `megabytes` of fresh memory and then
    holding it: together they want children * megabytes, whatever the limit of one process."""
    pids = []
    for _ in range(children):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                block = bytearray(megabytes << 20)
                for i in range(0, len(block), 4096):  # touch every page, so it is really charged
                    block[i] = 1
                os.write(w, b"k")
                time.sleep(60)
            finally:
                os._exit(0)  # never back into the sandbox's code, which would report for the job
        os.close(w)
        pids.append(pid)
        os.read(r, 1)  # b"k" once the child holds its share, empty if it died first
        os.close(r)
    # The children still alive now hold their shares at once (an earlier one may have been killed since).
    held = sum(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in pids)
    return {"held_mb": held * megabytes, "vm_kb": _vm_size_kb()}


def _vm_size_kb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))


def write_bomb(folders: list[str], chunk_mb: int, max_files: int) -> dict:
    """Writes files of `chunk_mb` in each folder until refused or `max_files`; the bytes that landed."""
    chunk = b"x" * (chunk_mb << 20)
    written = {}
    for folder in folders:
        total = 0
        for i in range(max_files):
            try:
                with open(os.path.join(folder, f"bomb{i}"), "wb") as fh:
                    total += fh.write(chunk)
                    fh.flush()
            except OSError:
                break
        written[folder] = total
    return written


def read_text(path: str) -> str:
    with open(path) as fh:
        return fh.read()


SHM_KEY = 0x7E57AB1E  # the System V key the job below leaves a segment under


def leave_shared_memory(mebibytes: int) -> int:
    """Creates a System V shared memory segment, touches it and returns without removing it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(SHM_KEY, mebibytes << 20, 0o1000 | 0o600)  # IPC_CREAT
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    addr = libc.shmat(shmid, None, 0)
    ctypes.memset(addr, 0x41, mebibytes << 20)
    libc.shmdt(ctypes.c_void_p(addr))
    return shmid


def read_session_keyring() -> list[str]:
    """The payloads of the keys in the job's session keyring (empty when it holds none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl, read = {"x86_64": 250, "aarch64": 219}[platform.machine()], 11  # KEYCTL_READ
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(keyctl, read, -3, buf, len(buf))  # KEY_SPEC_SESSION_KEYRING
    ids = [int.from_bytes(buf.raw[i:i + 4], "little") for i in range(0, max(n, 0), 4)]
    found = []
    for key in ids:
        m = libc.syscall(keyctl, read, key, buf, len(buf))
        found.append(buf.raw[:max(m, 0)].decode("utf-8", "replace"))
    return found


# ---------------------------------------------------------------- namespaces, host name, the result pipe

_CLONE_NEWUSER, _CLONE_NEWNET, _SIGCHLD = 0x10000000, 0x40000000, 17
_SYS_CLONE = {"x86_64": 56, "aarch64": 220}


def _errno_of(ret: int) -> str:
    import errno

    return "succeeded" if ret >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def make_namespaces() -> dict:
    """Every way into a new or another namespace a job might try; what each call answered."""
    import subprocess

    libc = ctypes.CDLL(None, use_errno=True)
    out = {"unshare(CLONE_NEWUSER)": _errno_of(libc.unshare(_CLONE_NEWUSER)),
           "unshare(CLONE_NEWNET)": _errno_of(libc.unshare(_CLONE_NEWNET))}
    # clone straight into a new user namespace; a child that got there leaves at once.
    pid = libc.syscall(_SYS_CLONE[platform.machine()], _CLONE_NEWUSER | _SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    out["clone(CLONE_NEWUSER)"] = _errno_of(pid)
    if pid > 0:
        os.waitpid(pid, 0)
    out["clone3"] = _errno_of(libc.syscall(435, 0, 0))
    try:
        fd = os.open("/proc/self/ns/uts", os.O_RDONLY)
        out["setns"] = _errno_of(libc.setns(fd, 0))
        os.close(fd)
    except OSError as exc:
        out["setns"] = f"no ns file: {exc.strerror}"
    proc = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True)
    out["unshare -U"] = f"exit {proc.returncode}: {proc.stderr.strip()}"
    status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
    out["NoNewPrivs"], out["Seccomp"] = status.get("NoNewPrivs", "?").strip(), status.get("Seccomp", "?").strip()
    return out


def reach_into_another_process() -> dict:
    """Every way a job might read or steer another process of its own (a child, here: the same user, so the
    kernel's ptrace checks alone let it): what each call answered."""
    import errno
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = {"x86_64": {"process_vm_readv": 310, "kcmp": 312, "pidfd_open": 434, "pidfd_getfd": 438},
          "aarch64": {"process_vm_readv": 270, "kcmp": 272, "pidfd_open": 434, "pidfd_getfd": 438}}[platform.machine()]
    secret = ctypes.create_string_buffer(b"the other process's memory")
    pid = os.fork()
    if pid == 0:
        signal.pause()
        os._exit(0)
    try:
        out = {"ptrace(PTRACE_ATTACH)": _errno_of(libc.ptrace(16, pid, None, None)),
               "ptrace(PTRACE_SEIZE)": _errno_of(libc.ptrace(0x4206, pid, None, None))}
        local = ctypes.create_string_buffer(64)
        iov_local = (ctypes.c_void_p * 2)(ctypes.cast(local, ctypes.c_void_p), 64)
        iov_remote = (ctypes.c_void_p * 2)(ctypes.cast(secret, ctypes.c_void_p), len(secret.raw))
        out["process_vm_readv"] = _errno_of(libc.syscall(nr["process_vm_readv"], pid, iov_local, 1, iov_remote, 1, 0))
        out["kcmp"] = _errno_of(libc.syscall(nr["kcmp"], os.getpid(), pid, 0, 0, 0))
        pidfd = libc.syscall(nr["pidfd_open"], pid, 0)
        out["pidfd_getfd"] = _errno_of(libc.syscall(nr["pidfd_getfd"], pidfd, 0, 0)) if pidfd >= 0 else "no pidfd"
        out["read"] = local.value.decode(errors="replace")
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    child = os.fork()
    if child == 0:  # asking to be traced by the parent is refused too
        os._exit(100 + (ctypes.get_errno() if libc.ptrace(0, 0, None, None) else 0))
    out["ptrace(PTRACE_TRACEME)"] = errno.errorcode.get(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) - 100,
                                                        "allowed")
    return out


def ordinary_work() -> dict:
    """What jobs do every day, through the filter: threads, fork, a subprocess, a model fit (on threads of a
    pool: each one a clone with thread flags)."""
    import subprocess
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    from sklearn.ensemble import RandomForestClassifier

    seen = []
    thread = threading.Thread(target=lambda: seen.append("thread"))
    thread.start()
    thread.join()
    pid = os.fork()
    if pid == 0:
        os._exit(3)
    forked = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    echoed = subprocess.run(["echo", "spawned"], capture_output=True, text=True).stdout.strip()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    with ThreadPoolExecutor(2) as pool:
        models = list(pool.map(lambda seed: RandomForestClassifier(n_estimators=8, random_state=seed).fit(
            x, x[:, 0] > 0), (0, 1)))
    return {"thread": seen, "fork": forked, "subprocess": echoed,
            "fit": [float(m.score(x, x[:, 0] > 0)) for m in models]}


def host_name() -> dict:
    return {"gethostname": socket.gethostname(), "uname": os.uname().nodename}


def _result_pipe() -> int:
    """The job's result pipe: the one open descriptor past stderr that is a pipe."""
    import stat

    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2:
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    return fd
            except OSError:
                continue
    raise RuntimeError("no result pipe found")


def forge_result(payload: str, then_exit: bool) -> str:
    """Write `payload` on the result pipe ourselves; then leave at once, or return as usual (the wrapper
    writes its own envelope after ours)."""
    os.write(_result_pipe(), payload.encode())
    if then_exit:
        os._exit(0)
    return "honest"


def big_result(megabytes: int) -> str:
    return "x" * (megabytes << 20)
