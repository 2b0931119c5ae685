"""A sandbox job can neither gain privileges nor make or join a namespace (finalize.job_seccomp), and it
has a host name of its own; what jobs do every day (threads, fork, subprocesses, a model fit) still works.

Found by issue 42's red team: jobs could create user namespaces (`unshare -U`, no seccomp filter,
no-new-privileges off) and read the host's name.
"""

from __future__ import annotations

import errno
import socket

import pytest

from finalize import job_seccomp, sandbox
from finalize.sandbox import Limits, run_in_sandbox
from tests.finalize import hostile_jobs as jobs

pytestmark = pytest.mark.skipif(not sandbox.isolation_possible(), reason="no namespaces here (not root, no userns)")


@pytest.mark.parametrize("isolate", [True, False])
def test_no_namespace_can_be_made_or_joined(isolate: bool) -> None:
    """Isolated or not (DAREGEN_SANDBOX=off keeps the filter where the kernel takes it)."""
    res = run_in_sandbox(jobs.make_namespaces, limits=Limits(isolate=isolate))
    assert res.ok and res.isolated == isolate, res.reason
    tried = res.value
    for call in ("unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNET)", "clone(CLONE_NEWUSER)", "setns"):
        assert tried[call] == "EPERM", (call, tried)
    assert tried["clone3"] == "ENOSYS", tried  # the C library falls back to clone, whose flags the filter reads
    assert tried["unshare -U"].startswith("exit 1") and "Operation not permitted" in tried["unshare -U"], tried
    assert (tried["NoNewPrivs"], tried["Seccomp"]) == ("1", "2"), tried  # 2: SECCOMP_MODE_FILTER


@pytest.mark.parametrize("isolate", [True, False])
def test_no_job_reads_or_steers_another_process(isolate: bool) -> None:
    """Issue 48: no ptrace block. A job's processes share one user, so the kernel alone let one attach to,
    read or copy the descriptors of another (a job's child here; the wrapper that writes its result)."""
    res = run_in_sandbox(jobs.reach_into_another_process, limits=Limits(isolate=isolate))
    assert res.ok, res.reason
    tried = res.value
    for call in ("ptrace(PTRACE_ATTACH)", "ptrace(PTRACE_SEIZE)", "ptrace(PTRACE_TRACEME)", "process_vm_readv",
                 "kcmp", "pidfd_getfd"):
        assert tried[call] == "EPERM", (call, tried)
    assert tried["read"] == "", tried


def test_ordinary_work_goes_through_the_filter() -> None:
    res = run_in_sandbox(jobs.ordinary_work)
    assert res.ok, res.reason
    assert res.value == {"thread": ["thread"], "fork": 3, "subprocess": "spawned", "fit": [1.0, 1.0]}


def test_the_job_has_its_own_host_name() -> None:
    res = run_in_sandbox(jobs.host_name)
    assert res.ok, res.reason
    assert res.value == {"gethostname": sandbox.JOB_HOSTNAME, "uname": sandbox.JOB_HOSTNAME}
    assert socket.gethostname() != sandbox.JOB_HOSTNAME  # the host's own name is untouched


# ---- the program itself, run by a small classic-BPF interpreter: both architectures, every branch


def _run(program: list[tuple[int, int, int, int]], nr: int, arch: int, arg0: int = 0) -> int:
    """What the filter returns for one system call (seccomp_data packed as the kernel does)."""
    words = {0: nr, 4: arch, 16: arg0 & 0xFFFFFFFF, 20: arg0 >> 32}
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:
            acc = words[k]
        elif code == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        pc += 1


ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS


@pytest.mark.parametrize("machine", sorted(job_seccomp._ARCHES))
def test_the_program_refuses_exactly_the_namespace_calls(machine: str) -> None:
    program = job_seccomp.program(machine)
    arch = job_seccomp._ARCHES[machine]
    jumps = [(pc, jt, jf) for pc, (code, jt, jf, _) in enumerate(program) if code & 0x07 == 0x05]
    assert all(pc + 1 + max(jt, jf) < len(program) for pc, jt, jf in jumps)  # every jump lands in the program
    assert program[-1][0] == 0x06  # and it ends on a return

    def verdict(nr: int, arg0: int = 0, audit: int = arch.audit) -> int:
        return _run(program, nr, audit, arg0)

    assert verdict(arch.unshare, 0x200) == EPERM  # even CLONE_FS: unshare is refused whatever the flags
    assert verdict(arch.setns) == EPERM
    assert len(arch.cross_process) == len(job_seccomp.CROSS_PROCESS_CALLS)
    for nr in arch.cross_process:  # ptrace, process_vm_readv/writev, kcmp, pidfd_getfd
        assert verdict(nr) == EPERM, nr
    assert verdict(arch.clone3) == ENOSYS
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert verdict(arch.clone, flag | 17) == EPERM, hex(flag)
    thread_flags = 0x003D0F00  # CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
    assert verdict(arch.clone, thread_flags) == ALLOW
    assert verdict(arch.clone, 0x01200011) == ALLOW  # fork: CLONE_CHILD_SETTID|CHILD_CLEARTID|SIGCHLD
    assert verdict(arch.clone, (1 << 40) | 17) == ALLOW  # the kernel ignores clone's high flag bits
    assert verdict(0) == ALLOW and verdict(arch.clone - 1) == ALLOW
    assert verdict(arch.unshare, audit=0x40000003) == EPERM  # i386's convention: refused whatever the number
    if arch.x32:
        assert verdict(0x40000000 | arch.unshare) == EPERM and verdict(0x40000000) == EPERM
