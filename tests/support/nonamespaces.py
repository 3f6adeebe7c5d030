"""Run a command the way a container's default seccomp profile, or Ubuntu's AppArmor, would.

``python tests/support/nonamespaces.py MODE -- ARGV...`` installs a seccomp filter, then execs
``ARGV``; the filter is inherited by everything it starts and cannot be removed:

- ``userns``: creating a user namespace (``unshare`` or ``clone`` with ``CLONE_NEWUSER``) fails
  with ``EPERM``, as for an unprivileged user on Ubuntu 23.10+ and GitHub's ubuntu-24.04
  runners (``kernel.apparmor_restrict_unprivileged_userns=1``);
- ``all``: ``unshare``, ``setns`` and ``clone`` with any ``CLONE_NEW*`` flag fail with
  ``EPERM``, as under Docker's default profile (GitLab's Docker executor, GitHub ``container:``
  jobs), even for root.

``clone3`` fails with ``ENOSYS`` in both modes (its flags live in memory a filter cannot read),
so that the C library falls back to ``clone``, as container runtimes arrange. Nothing of the host
is changed: the filter lives and dies with the process tree. x86_64 only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWTIME = 0x00000080
ALL_NEW = (
    CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
    | CLONE_NEWTIME
)

_SYS = {"clone": 56, "unshare": 272, "setns": 308, "clone3": 435}
_AUDIT_ARCH_X86_64 = 0xC000003E
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL = 0x80000000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
# BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06
# Offsets in struct seccomp_data.
_NR, _ARCH, _ARG0 = 0, 4, 16


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program(mode: str) -> bytes:
    """The filter of ``mode`` as BPF instructions."""
    flags = CLONE_NEWUSER if mode == "userns" else ALL_NEW
    refuse = _RET_ERRNO | errno.EPERM
    body = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, _AUDIT_ARCH_X86_64, 1, 0),
        _op(_RET_K, _RET_KILL),
        _op(_LD_W_ABS, _NR),
        _op(_JEQ_K, _SYS["clone3"], 0, 1),
        _op(_RET_K, _RET_ERRNO | errno.ENOSYS),
        # clone and unshare: their first argument holds the flags.
        _op(_JEQ_K, _SYS["clone"], 1, 0),
        _op(_JEQ_K, _SYS["unshare"], 0, 3),
        _op(_LD_W_ABS, _ARG0),
        _op(_JSET_K, flags, 0, 1),
        _op(_RET_K, refuse),
        _op(_RET_K, _RET_ALLOW),
    ]
    if mode == "all":
        # setns joins a namespace: refused whatever its arguments.
        # (The jumps above that skip to the last instruction now land on this test.)
        body[-1:] = [
            _op(_JEQ_K, _SYS["setns"], 0, 1),
            _op(_RET_K, refuse),
            _op(_RET_K, _RET_ALLOW),
        ]
    return b"".join(body)


def install(mode: str) -> None:
    """Install the filter of ``mode`` on this process (and all it will start)."""
    if platform.machine() != "x86_64":
        raise OSError("the namespace-refusing launcher is written for x86_64")
    code = program(mode)
    instructions = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    fprog = SockFprog(len(code) // 8, ctypes.addressof(instructions))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def main(argv: list[str]) -> None:
    """``MODE -- ARGV...``: install the filter, then exec ``ARGV``."""
    mode, separator, *command = argv
    if mode not in ("userns", "all") or separator != "--" or not command:
        raise SystemExit("usage: nonamespaces userns|all -- ARGV...")
    install(mode)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
