"""A cgroup per sandbox job, so that its memory and process limits hold for the job as a whole.

rlimits count per process: RLIMIT_AS lets each forked child map the whole budget again (three children
reached 5 GB against a 4 GiB limit), and RLIMIT_NPROC counts the processes of a *user*, so it is shared
by every job running as `nobody` at once. A cgroup counts the job's processes and the memory they
charge (their tmpfs files included) together. cgroup v2 is used where this process's cgroup delegates
the memory and pids controllers (or lets us enable them), else the v1 memory and pids hierarchies;
where neither can be written (not root, no delegation) create() returns None and the sandbox keeps
its per-process limits.

The caller creates the cgroup and removes it after the job; the job joins it itself, before it runs
anything, by writing "0" (itself) to the `cgroup.procs` files the supervisor opened for it while
/sys was still visible.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

_PREFIX = "daregen-job-"


@dataclass(frozen=True)
class JobCgroup:
    version: int  # 2, or 1 (a memory and a pids hierarchy)
    dirs: tuple[str, ...]  # v2: the one cgroup; v1: its memory and its pids cgroup

    @property
    def procs_files(self) -> tuple[str, ...]:
        return tuple(os.path.join(d, "cgroup.procs") for d in self.dirs)

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the job for exceeding the memory limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = Path(self.dirs[0], name).read_text()
        except OSError:
            return False
        counts = dict(line.split()[:2] for line in text.splitlines() if len(line.split()) >= 2)
        return counts.get("oom_kill", "0") != "0"

    def remove(self) -> None:
        """rmdir each cgroup; the job's processes are gone (its PID namespace died with it), but the
        kernel may take a moment to release the last of them."""
        for d in self.dirs:
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _mounts() -> tuple[str | None, dict[str, str]]:
    """The cgroup2 mount point, and each v1 controller's mount point."""
    v2, v1 = None, {}
    with contextlib.suppress(OSError), open("/proc/self/mounts") as fh:
        for line in fh:
            fields = line.split()
            if len(fields) < 4:
                continue
            if fields[2] == "cgroup2" and v2 is None:
                v2 = fields[1]
            elif fields[2] == "cgroup":
                for option in fields[3].split(","):
                    v1.setdefault(option, fields[1])
    return v2, v1


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per controller ("" for v2), from /proc/self/cgroup."""
    paths = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as fh:
        for line in fh:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _write(directory: str, name: str, value: str) -> None:
    with open(os.path.join(directory, name), "w") as fh:
        fh.write(value)


def _create_v2(mount: str, own: str, name: str, memory_bytes: int, max_pids: int) -> JobCgroup | None:
    parent = os.path.join(mount, own.lstrip("/"))
    try:
        enabled = Path(parent, "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(enabled):
            # Refused (EBUSY) when processes live in `parent` itself, unless it is the root.
            _write(parent, "cgroup.subtree_control", "+memory +pids")
        directory = os.path.join(parent, name)
        os.mkdir(directory, 0o755)
    except OSError:
        return None
    group = JobCgroup(2, (directory,))
    try:
        _write(directory, "memory.max", str(memory_bytes))
        if os.path.exists(os.path.join(directory, "memory.swap.max")):
            _write(directory, "memory.swap.max", "0")
        _write(directory, "pids.max", str(max_pids))
    except OSError:
        group.remove()
        return None
    return group


def _create_v1(mounts: dict[str, str], own: dict[str, str], name: str, memory_bytes: int,
               max_pids: int) -> JobCgroup | None:
    if "memory" not in mounts or "pids" not in mounts:
        return None
    dirs: list[str] = []
    try:
        for controller in ("memory", "pids"):
            directory = os.path.join(mounts[controller], own.get(controller, "/").lstrip("/"), name)
            os.mkdir(directory, 0o755)
            dirs.append(directory)
        memory, pids = dirs
        _write(memory, "memory.limit_in_bytes", str(memory_bytes))
        if os.path.exists(os.path.join(memory, "memory.memsw.limit_in_bytes")):  # memory + swap: no swap beyond
            _write(memory, "memory.memsw.limit_in_bytes", str(memory_bytes))
        _write(pids, "pids.max", str(max_pids))
    except OSError:
        JobCgroup(1, tuple(dirs)).remove()
        return None
    return JobCgroup(1, tuple(dirs))


def create(memory_bytes: int, max_pids: int) -> JobCgroup | None:
    """A new cgroup (below this process's own) limiting the memory and process count of whatever joins
    it, or None where cgroups cannot be created here."""
    name = _PREFIX + uuid.uuid4().hex
    v2, v1 = _mounts()
    own = _own_paths()
    if v2 is not None and "" in own:
        group = _create_v2(v2, own[""], name, memory_bytes, max_pids)
        if group is not None:
            return group
    return _create_v1(v1, own, name, memory_bytes, max_pids)


def join(fds: list[int]) -> None:
    """In the job: move this process into the cgroup whose `cgroup.procs` files `fds` are open on."""
    for fd in fds:
        os.write(fd, b"0")
        os.close(fd)
