"""A classic-BPF seccomp program that makes filesystem unix sockets unreachable.

A read-only bind does not stop ``connect()`` to a unix socket that stays visible (``/run/...``),
so, like srt and codex, the run may not create ``AF_UNIX`` sockets at all. What is refused,
each with EPERM:

- ``socket(AF_UNIX, ...)``: no socket that could connect to a path;
- ``socketpair(..., SOCK_DGRAM, ...)``: a datagram pair may still ``connect()``/``sendto()`` a
  path (``/dev/log``, journald); stream and seqpacket pairs are already connected and stay allowed;
- ``io_uring_setup``/``enter``/``register``: io_uring can create sockets without the socket
  syscall;
- any syscall of a foreign ABI (i386 or x32 on x86_64, arm32 on aarch64), whose numbers this
  program does not check.

bubblewrap reads the program from a pipe given with ``--seccomp FD``.
"""

from __future__ import annotations

import functools
import platform
import struct
from typing import NamedTuple

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_AND_K = 0x54
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1

# struct seccomp_data offsets: nr, arch, then args[] (low 32 bits first on little-endian).
_NR = 0
_ARCH = 4
_ARG0 = 16
_ARG1 = 24

_AF_UNIX = 1
_SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF
_X32_SYSCALL_BIT = 0x40000000


class _Arch(NamedTuple):
    audit_arch: int
    socket: int
    socketpair: int
    x32: bool


# io_uring has the same numbers (425-427) on both architectures.
_IO_URING = (425, 426, 427)
_ARCHES = {
    "x86_64": _Arch(audit_arch=0xC000003E, socket=41, socketpair=53, x32=True),
    "aarch64": _Arch(audit_arch=0xC00000B7, socket=198, socketpair=199, x32=False),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


# Cached so that every run hands bwrap the very bytes the host probe saw it load.
@functools.cache
def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """Build the filter for this machine's architecture; ``None`` where it is not supported."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    # Layout: header, one jump per special syscall, allow, then the argument checks. Jump
    # offsets are counted from the instruction after the jump.
    prog: list[bytes] = [
        _insn(_LD_W_ABS, _ARCH),
        _insn(_JEQ_K, arch.audit_arch, jt=1, jf=0),
        _insn(_RET_K, _RET_EPERM),
        _insn(_LD_W_ABS, _NR),
    ]
    if arch.x32:
        prog += [_insn(_JGE_K, _X32_SYSCALL_BIT, jt=0, jf=1), _insn(_RET_K, _RET_EPERM)]
    for nr in _IO_URING:
        prog += [_insn(_JEQ_K, nr, jt=0, jf=1), _insn(_RET_K, _RET_EPERM)]
    # socket -> skip 2 to the domain check; socketpair -> skip 5 to the type check.
    prog += [
        _insn(_JEQ_K, arch.socket, jt=2, jf=0),
        _insn(_JEQ_K, arch.socketpair, jt=5, jf=0),
        _insn(_RET_K, _RET_ALLOW),
        # socket(domain, ...)
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JEQ_K, _AF_UNIX, jt=0, jf=1),
        _insn(_RET_K, _RET_EPERM),
        _insn(_RET_K, _RET_ALLOW),
        # socketpair(domain, type, ...)
        _insn(_LD_W_ABS, _ARG1),
        _insn(_AND_K, _SOCK_TYPE_MASK),
        _insn(_JEQ_K, _SOCK_DGRAM, jt=0, jf=1),
        _insn(_RET_K, _RET_EPERM),
        _insn(_RET_K, _RET_ALLOW),
    ]
    return b"".join(prog)
