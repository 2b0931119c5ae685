"""No new privileges, and no new namespaces, for a sandbox job (finalize.sandbox installs both last,
just before the job's own code runs).

Why: a job runs as `nobody` (or as root of a user namespace we made), yet the kernel still let it call
`unshare(CLONE_NEWUSER)` (or `unshare -U`) and become root of a user namespace of its own. That root can
mount file systems, configure netfilter and reach other kernel code an unprivileged process never
reaches; it is where most local privilege escalations start. No job needs a namespace, so:

- `PR_SET_NO_NEW_PRIVS`: no exec can give the job privileges it did not have (a setuid program runs
  with the job's ids, file capabilities are ignored). The kernel also requires it before an
  unprivileged process may install a seccomp filter.
- A seccomp filter, a classic BPF program the kernel runs on every system call of the job and of
  every process it starts (filters are inherited and cannot be removed), that refuses with EPERM:
  `unshare` (whatever the flags), `setns` (joining another namespace), and `clone` with any
  CLONE_NEW* flag; and answers `clone3` with ENOSYS. clone3 takes its flags in memory the filter
  cannot read, and "not implemented" makes the C library fall back to `clone`, whose flags it can
  read (threads and subprocesses keep working: the usual answer, Docker's default profile gives it too).
- The same filter refuses with EPERM the calls that reach into another process (issue 48): `ptrace`
  (attach, or ask to be traced), `process_vm_readv`/`process_vm_writev` (read or write its memory),
  `kcmp` and `pidfd_getfd` (compare or copy its file descriptors). A job's processes all run as one
  user, so the kernel's own ptrace checks would let one read another's memory and descriptors; no job
  needs to debug a process.

The program is written out below rather than taken from libseccomp, because it is seventeen or
eighteen instructions, and ctypes over libseccomp would add a C library and a binding to the trust base for
them. tests/finalize/test_sandbox_seccomp.py proves it: `os.unshare`, `unshare -U`, `setns`, a
namespace clone and ptrace, process_vm_readv and pidfd_getfd on the job's own child fail in a job, threads, fork, subprocesses and a model fit still work.
"""

from __future__ import annotations

import ctypes
import errno
import platform
from dataclasses import dataclass

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_RET_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO: the call fails with the errno in the low 16 bits
# Classic BPF opcodes (linux/bpf_common.h): load a 32-bit word at an absolute offset of seccomp_data,
# compare the accumulator with a constant (equal, greater or equal, any bit in common), return.
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x05 | 0x10  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x05 | 0x30  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x05 | 0x40  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }: the offsets read.
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # args[0]'s low 32 bits (both architectures are little-endian)
# Every CLONE_NEW* flag clone(2) accepts: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
# (CLONE_NEWTIME, 0x80, only exists for unshare and clone3: in clone's flags those bits are the exit signal.)
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_X32_BIT = 0x40000000  # x86_64's x32 ABI: the same calls under numbers with this bit set


@dataclass(frozen=True)
class _Arch:
    audit: int  # AUDIT_ARCH_* (linux/audit.h): the calling convention a system call came through
    clone: int
    clone3: int
    unshare: int
    setns: int
    x32: bool
    # Calls that reach into another process: ptrace, process_vm_readv, process_vm_writev, kcmp, pidfd_getfd.
    cross_process: tuple[int, ...] = ()


_ARCHES = {
    "x86_64": _Arch(audit=0xC000003E, clone=56, clone3=435, unshare=272, setns=308, x32=True,
                    cross_process=(101, 310, 311, 312, 438)),
    "aarch64": _Arch(audit=0xC00000B7, clone=220, clone3=435, unshare=97, setns=268, x32=False,
                     cross_process=(117, 270, 271, 272, 438)),
}
CROSS_PROCESS_CALLS = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd")


class _SockFilter(ctypes.Structure):  # struct sock_filter (linux/filter.h)
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions for `machine` (default: this one's). A jump's jt/jf
    count the instructions to skip when the test holds/fails; labels below are resolved to them."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine or platform.machine()}")
    # (label, opcode, jump if true, jump if false, constant); a jump target is a label or None (next).
    code: list[tuple[str | None, int, str | None, str | None, int]] = [
        (None, _LD_W_ABS, None, None, _ARCH),  # A = the calling convention of this call
        (None, _JEQ, None, "deny", arch.audit),  # another one (i386's int 0x80) numbers calls otherwise: refuse
        (None, _LD_W_ABS, None, None, _NR),  # A = the system call's number
        *([(None, _JGE, "deny", None, _X32_BIT)] if arch.x32 else []),  # an x32 alias of any call: refuse
        (None, _JEQ, "deny", None, arch.unshare),  # unshare: a new namespace for this process
        (None, _JEQ, "deny", None, arch.setns),  # setns: join another process's namespace
        # another process's memory, registers or descriptors (a job's own children, a wrapper beside it)
        *((None, _JEQ, "deny", None, nr) for nr in arch.cross_process),
        (None, _JEQ, "nosys", None, arch.clone3),  # clone3: flags out of reach; the C library falls back to clone
        (None, _JEQ, None, "allow", arch.clone),  # anything else than clone is allowed
        (None, _LD_W_ABS, None, None, _ARG0_LOW),  # A = clone's flags (the kernel reads their low 32 bits only)
        (None, _JSET, "deny", "allow", CLONE_NEW_FLAGS),  # a child in a new namespace: refuse; a thread, a fork: allow
        ("allow", _RET, None, None, _RET_ALLOW),
        ("deny", _RET, None, None, _RET_ERRNO | errno.EPERM),
        ("nosys", _RET, None, None, _RET_ERRNO | errno.ENOSYS),
    ]
    where = {label: i for i, (label, *_rest) in enumerate(code) if label}
    return [(op, where[jt] - i - 1 if jt else 0, where[jf] - i - 1 if jf else 0, k)
            for i, (_, op, jt, jf, k) in enumerate(code)]


def install(libc) -> None:
    """Set no-new-privileges and load the filter into the calling process (one thread: the job right
    after its fork). OSError when the kernel refuses either."""
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)):
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {errno.errorcode.get(err, err)}")
    instructions = program()
    filters = (_SockFilter * len(instructions))(*(_SockFilter(*ins) for ins in instructions))
    prog = _SockFprog(len(instructions), filters)
    if libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(prog), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)):
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {errno.errorcode.get(err, err)}")
