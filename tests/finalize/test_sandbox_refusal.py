"""Where the kernel denies namespaces, the sandbox refuses with a clear message, and runs the job unisolated
only when the user opts out explicitly (DAREGEN_SANDBOX=off).

The denial is real: a child interpreter installs a seccomp filter that makes unshare(2) fail with EPERM,
as Docker's default seccomp profile does, and then uses the sandbox normally; the filter is inherited by
the fork server it starts and by every job."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

from finalize import sandbox

_UNSHARE_NR = {"x86_64": 272, "aarch64": 97}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

CHILD = textwrap.dedent("""
    import ctypes, json, os, sys

    # struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}; seccomp_data: nr at offset 0, arch at offset 4.
    LD_ABS, JEQ, RET = 0x20, 0x15, 0x06
    ALLOW, EPERM = 0x7FFF0000, 0x00050000 | 1
    arch, nr = int(sys.argv[1]), int(sys.argv[2])

    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]

    program = (Insn * 6)(Insn(LD_ABS, 0, 0, 4), Insn(JEQ, 0, 3, arch),    # another ABI: allow
                         Insn(LD_ABS, 0, 0, 0), Insn(JEQ, 0, 1, nr),      # unshare: EPERM
                         Insn(RET, 0, 0, EPERM), Insn(RET, 0, 0, ALLOW))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, required to install a filter unprivileged
        sys.exit("prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(22, 2, ctypes.byref(Prog(6, program)), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        sys.exit(f"seccomp unavailable: errno {ctypes.get_errno()}")

    from finalize import sandbox
    out = {"unshare_errno": None}
    if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS: the filter is in force here too
        out["unshare_errno"] = ctypes.get_errno()
    out["possible"] = sandbox.isolation_possible()
    try:
        sandbox.run_in_sandbox(os.getpid)
        out["refused"] = None
    except sandbox.SandboxUnavailable as exc:
        out["refused"] = str(exc)
    os.environ[sandbox.SANDBOX_ENV] = "off"  # the explicit opt-out, as a user would set it
    res = sandbox.run_in_sandbox(os.getpid)
    out["opted_out"] = {"status": res.status, "isolated": res.isolated, "notes": list(res.notes),
                        "value_is_int": isinstance(res.value, int)}
    print(json.dumps(out))
""")


@pytest.mark.skipif(platform.machine() not in _UNSHARE_NR or not sys.platform.startswith("linux"),
                    reason="the seccomp filter is written for Linux x86_64 and aarch64")
def test_denied_namespaces_refuse_clearly_unless_the_user_opts_out() -> None:
    machine = platform.machine()
    env = {k: v for k, v in os.environ.items() if k != sandbox.SANDBOX_ENV}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(_AUDIT_ARCH[machine]), str(_UNSHARE_NR[machine])],
                          env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "seccomp unavailable" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["unshare_errno"] == 1  # EPERM: the denial is the kernel's, not a flag of ours
    assert out["possible"] is False
    refusal = out["refused"]
    assert refusal is not None, "the sandbox ran a job without isolation and without an opt-out"
    assert refusal.startswith("cannot isolate the job: unshare: Operation not permitted")
    assert f"{sandbox.SANDBOX_ENV}=off" in refusal and "user namespaces" in refusal and "seccomp" in refusal
    notes = out["opted_out"].pop("notes")
    assert out["opted_out"] == {"status": "ok", "isolated": False, "value_is_int": True}
    assert "not isolated: no network, PID or filesystem namespaces" in notes  # and no cgroup, where not root
