"""The classic-BPF seccomp program every bubblewrap run is started under.

A read-only bind does not stop ``connect()`` to a unix socket that stays visible (``/run/...``),
and the kernel offers channels that no mount covers. The filter, checked per architecture:

- socket families are an allowlist: ``socket()`` only for ``AF_INET``, ``AF_INET6`` and
  ``AF_NETLINK`` (inside the run's empty network namespace); ``AF_UNIX`` only through
  ``socketpair()`` of ``SOCK_STREAM``/``SOCK_SEQPACKET`` pairs, which are connected to each other
  and cannot reach a path (a ``SOCK_DGRAM`` pair, or ``SOCK_RAW``, which the kernel turns into
  one, can ``sendto()`` any socket file); every other family (``AF_VSOCK``, ``AF_PACKET``,
  ``AF_ALG``, ...) is refused;
- refused outright: the kernel keyrings (``keyctl``, ``add_key``, ``request_key``), tracing and
  cross-process memory (``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``), io_uring
  (which creates sockets without the socket syscall), ``bpf``, ``perf_event_open``,
  ``userfaultfd``, mounts and namespace changes (``mount`` and the new mount API, ``setns``, and
  ``clone``/``unshare`` with ``CLONE_NEWUSER``), modules, kexec, handles
  (``open_by_handle_at``), ``TIOCSTI`` injection into a terminal;
- the sandbox's own process is out of reach of the calls that act on another process of the
  same uid without ptrace's checks: ``prlimit64`` only for the caller itself (pid 0; the C
  library's ``setrlimit`` is that call), and ``setpriority``, ``ioprio_set`` and the
  ``sched_set*`` calls never for pid 1 (that process), its process group (pgrp 1, or 0 from a
  member) or a whole uid;
- ``clone3`` answers ENOSYS: its flags sit in memory a filter cannot read, and libc then falls
  back to ``clone``, whose flags it can;
- any syscall of a foreign ABI (i386 or x32 on x86_64, arm32 on aarch64) is refused.

bubblewrap reads the program from a pipe given with ``--seccomp FD``.
"""

from __future__ import annotations

import functools
import platform
import struct
from typing import NamedTuple

__all__ = ["syscall_filter"]

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_AND_K = 0x54
_RET_K = 0x06

RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | 1
RET_ENOSYS = 0x00050000 | 38

# struct seccomp_data offsets: nr, arch, then args[] (low 32 bits first on little-endian).
_NR = 0
_ARCH = 4
_ARG0 = 16
_ARG1 = 24
_ARG2 = 32

AF_UNIX = 1
AF_INET = 2
AF_INET6 = 10
AF_NETLINK = 16
_SOCKET_FAMILIES = (AF_INET, AF_INET6, AF_NETLINK)
_SOCK_STREAM = 1
_IPPROTO_TCP = 6
_NETLINK_ROUTE = 0
_PAIR_TYPES = (_SOCK_STREAM, 5)  # SOCK_STREAM, SOCK_SEQPACKET
_SOCK_TYPE_MASK = 0xF
_CLONE_NEWUSER = 0x10000000
_STAGE_PID = 1  # bubblewrap --as-pid-1: the sandbox's own process, and the group it leads
# setpriority's and ioprio_set's "which": a process, a process group, a uid.
_PRIORITY_WHICH = (0, 1, 2)
_IOPRIO_WHICH = (1, 2, 3)
_TIOCSTI = 0x5412
# FS_IOC_SETFLAGS (64- and 32-bit), FS_IOC_FSSETXATTR, FS_IOC_ENABLE_VERITY: a file's flags,
# project id and verity, which an open descriptor changes whatever its mode.
_FILE_IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x40806685)
_F_SETLEASE = 1024
_X32_SYSCALL_BIT = 0x40000000


class _Arch(NamedTuple):
    audit_arch: int
    x32: bool
    socket: int
    socketpair: int
    clone: int
    unshare: int
    ioctl: int
    fcntl: int
    prlimit64: int
    setpriority: int
    ioprio_set: int
    sched_set: tuple[int, ...]
    """sched_setparam, sched_setscheduler, sched_setaffinity, sched_setattr: pid first."""
    denied: tuple[int, ...]
    hostwide: tuple[int, ...]
    """Refused where the run shares the host's namespaces: ``listen`` (which binds an
    ephemeral port no Landlock rule sees), ``bind`` (a unix socket of a pair could take a host
    abstract name, which Landlock's scoping does not cover), SysV IPC and POSIX message queues
    (the host's), inotify and fanotify (they watch directories the run may not read)."""
    metadata: tuple[int, ...]
    """chmod, chown, utime and xattr calls, by path or descriptor: Landlock does not mediate
    them, so a run of the caller's own uid could change any of the caller's files."""


# Numbers shared by both architectures (the generic table's newer calls).
_COMMON_DENIED = (
    425,  # io_uring_setup
    426,  # io_uring_enter
    427,  # io_uring_register
    428,  # open_tree
    429,  # move_mount
    430,  # fsopen
    431,  # fsconfig
    432,  # fsmount
    433,  # fspick
    438,  # pidfd_getfd
    442,  # mount_setattr
)
_CLONE3 = 435
_COMMON_METADATA = (452, 463, 466)  # fchmodat2, setxattrat, removexattrat

_ARCHES = {
    "x86_64": _Arch(
        audit_arch=0xC000003E,
        x32=True,
        socket=41,
        socketpair=53,
        clone=56,
        unshare=272,
        ioctl=16,
        fcntl=72,
        prlimit64=302,
        setpriority=141,
        ioprio_set=251,
        sched_set=(142, 144, 203, 314),
        denied=(
            101,  # ptrace
            103,  # syslog
            155,  # pivot_root
            163,  # acct
            165,  # mount
            166,  # umount2
            167,  # swapon
            168,  # swapoff
            169,  # reboot
            175,  # init_module
            176,  # delete_module
            179,  # quotactl
            246,  # kexec_load
            248,  # add_key
            249,  # request_key
            250,  # keyctl
            298,  # perf_event_open
            303,  # name_to_handle_at
            304,  # open_by_handle_at
            308,  # setns
            310,  # process_vm_readv
            311,  # process_vm_writev
            313,  # finit_module
            320,  # kexec_file_load
            321,  # bpf
            323,  # userfaultfd
            *_COMMON_DENIED,
        ),
        # listen; shmget, shmat, shmctl; semget, semop, semctl; msgget, msgsnd, msgrcv,
        # msgctl; semtimedop; mq_open .. mq_getsetattr.
        # bind; inotify_init, inotify_add_watch, inotify_init1; fanotify_init, fanotify_mark.
        hostwide=(
            *(50, 29, 30, 31, 64, 65, 66, 68, 69, 70, 71, 220, *range(240, 246)),
            *(49, 253, 254, 294, 300, 301),
        ),
        # chmod, fchmod, chown, fchown, lchown; utime; setxattr .. fremovexattr; utimes;
        # fchownat, futimesat, fchmodat; utimensat; fchmodat2, setxattrat, removexattrat.
        metadata=(
            *(90, 91, 92, 93, 94, 132, *range(188, 191), *range(197, 200), 235, 260, 261),
            *(268, 280, *_COMMON_METADATA),
        ),
    ),
    "aarch64": _Arch(
        audit_arch=0xC00000B7,
        x32=False,
        socket=198,
        socketpair=199,
        clone=220,
        unshare=97,
        ioctl=29,
        fcntl=25,
        prlimit64=261,
        setpriority=140,
        ioprio_set=30,
        sched_set=(118, 119, 122, 274),
        denied=(
            39,  # umount2
            40,  # mount
            41,  # pivot_root
            60,  # quotactl
            89,  # acct
            104,  # kexec_load
            105,  # init_module
            106,  # delete_module
            116,  # syslog
            117,  # ptrace
            142,  # reboot
            217,  # add_key
            218,  # request_key
            219,  # keyctl
            224,  # swapon
            225,  # swapoff
            241,  # perf_event_open
            264,  # name_to_handle_at
            265,  # open_by_handle_at
            268,  # setns
            270,  # process_vm_readv
            271,  # process_vm_writev
            273,  # finit_module
            280,  # bpf
            282,  # userfaultfd
            294,  # kexec_file_load
            *_COMMON_DENIED,
        ),
        # listen; mq_open .. mq_getsetattr, msgget .. msgsnd, semget .. semop, shmget ..
        # shmat (the generic table keeps them in one block).
        # bind; inotify_init1, inotify_add_watch; fanotify_init, fanotify_mark.
        hostwide=(201, *range(180, 197), 200, 26, 27, 262, 263),
        # setxattr .. fremovexattr; fchmod, fchmodat, fchownat, fchown; utimensat;
        # fchmodat2, setxattrat, removexattrat.
        metadata=(5, 6, 7, 14, 15, 16, 52, 53, 54, 55, 88, *_COMMON_METADATA),
    ),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _one_of(values: tuple[int, ...]) -> list[bytes]:
    """Allow if the accumulator is one of ``values``, else refuse (ends in both returns)."""
    body = [_insn(_JEQ_K, v, jt=len(values) - i, jf=0) for i, v in enumerate(values)]
    return [*body, _insn(_RET_K, RET_EPERM), _insn(_RET_K, RET_ALLOW)]


def _none_of(values: tuple[int, ...]) -> list[bytes]:
    """Refuse if the accumulator is one of ``values``, else allow (ends in both returns)."""
    body = [_insn(_JEQ_K, v, jt=len(values) - i, jf=0) for i, v in enumerate(values)]
    return [*body, _insn(_RET_K, RET_ALLOW), _insn(_RET_K, RET_EPERM)]


def _spares_the_stage(which: tuple[int, int, int]) -> list[bytes]:
    """Refuse ``(which, who)`` aimed at the stage; allow every other target.

    Aimed at the stage: pid 1, its group (1, or 0 from a member), or a whole uid; ``which``
    names the process, group and uid kinds of the call, in that order.
    """
    process, group, uid = which
    return [
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JEQ_K, uid, jt=8, jf=0),
        _insn(_JEQ_K, process, jt=0, jf=2),
        _insn(_LD_W_ABS, _ARG1),
        _insn(_JEQ_K, _STAGE_PID, jt=5, jf=4),
        _insn(_JEQ_K, group, jt=0, jf=3),
        _insn(_LD_W_ABS, _ARG1),
        _insn(_JEQ_K, 0, jt=2, jf=0),
        _insn(_JEQ_K, _STAGE_PID, jt=1, jf=0),
        _insn(_RET_K, RET_ALLOW),
        _insn(_RET_K, RET_EPERM),
    ]


def _not_the_stage() -> list[bytes]:
    """Refuse a call whose first argument (a pid) is the stage's."""
    return [
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JEQ_K, _STAGE_PID, jt=0, jf=1),
        _insn(_RET_K, RET_EPERM),
        _insn(_RET_K, RET_ALLOW),
    ]


def _only_itself(process: int) -> list[bytes]:
    """Allow ``(which, who)`` only for the calling process itself: ``(process, 0)``.

    Without a PID namespace the sandbox's own process has an ordinary pid, of the run's uid
    and process group: no other target is known to be safe.
    """
    return [
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JEQ_K, process, jt=0, jf=2),
        _insn(_LD_W_ABS, _ARG1),
        _insn(_JEQ_K, 0, jt=1, jf=0),
        _insn(_RET_K, RET_EPERM),
        _insn(_RET_K, RET_ALLOW),
    ]


def _on_syscall(nr: int, body: list[bytes]) -> list[bytes]:
    """Run ``body`` (which always returns) for syscall ``nr``; skip it for any other."""
    return [_insn(_JEQ_K, nr, jt=0, jf=len(body)), *body]


# Cached so that every run hands bwrap the very bytes the host probe saw it load.
@functools.cache
def syscall_filter(
    machine: str | None = None, *, own_network: bool = True, own_files: bool = True
) -> bytes | None:
    """Build the filter for this machine's architecture; ``None`` where it is not supported.

    ``own_network`` false (a run without namespaces, the ``landlock`` backend): of the inet
    families only stream sockets, whose bind and connect Landlock refuses; datagram and raw
    sockets (UDP, ICMP, DNS) are refused here, as no Landlock rule covers them. And priority,
    I/O priority and scheduling may be set for the calling process alone: the sandbox's own
    process is no pid 1 to spare, but a process of the run's uid and group. Refused too:
    ``listen`` (an unbound socket would take an ephemeral port, unseen by Landlock), SysV IPC and
    POSIX message queues (the host's, with no IPC namespace), and ``IPPROTO_MPTCP`` and other
    stream protocols than TCP (Landlock's rules cover TCP alone); netlink only for routing.

    ``own_files`` false (a run of the caller's own uid, without namespaces): changing a file's
    mode, owner, times or extended attributes is refused wherever the file is, since Landlock
    does not mediate it and the caller's files are the run's uid's.
    """
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    # Each check below starts with the syscall number in the accumulator; a check's body may
    # reload it with an argument, but every body ends in a return.
    prog: list[bytes] = [
        _insn(_LD_W_ABS, _ARCH),
        _insn(_JEQ_K, arch.audit_arch, jt=1, jf=0),
        _insn(_RET_K, RET_EPERM),
        _insn(_LD_W_ABS, _NR),
    ]
    if arch.x32:
        prog += [_insn(_JGE_K, _X32_SYSCALL_BIT, jt=0, jf=1), _insn(_RET_K, RET_EPERM)]
    refused = list(arch.denied)
    if not own_network:
        refused += arch.hostwide
    if not own_files:
        refused += arch.metadata
    for nr in refused:
        prog += _on_syscall(nr, [_insn(_RET_K, RET_EPERM)])
    prog += _on_syscall(_CLONE3, [_insn(_RET_K, RET_ENOSYS)])
    if own_network:
        prog += _on_syscall(arch.socket, [_insn(_LD_W_ABS, _ARG0), *_one_of(_SOCKET_FAMILIES)])
    else:
        prog += _on_syscall(
            arch.socket,
            [
                _insn(_LD_W_ABS, _ARG0),
                _insn(_JEQ_K, AF_NETLINK, jt=0, jf=2),
                _insn(_LD_W_ABS, _ARG2),
                _insn(_JEQ_K, _NETLINK_ROUTE, jt=9, jf=8),
                _insn(_JEQ_K, AF_INET, jt=1, jf=0),
                _insn(_JEQ_K, AF_INET6, jt=0, jf=6),
                _insn(_LD_W_ABS, _ARG1),
                _insn(_AND_K, _SOCK_TYPE_MASK),
                _insn(_JEQ_K, _SOCK_STREAM, jt=0, jf=3),
                _insn(_LD_W_ABS, _ARG2),
                _insn(_JEQ_K, 0, jt=2, jf=0),
                _insn(_JEQ_K, _IPPROTO_TCP, jt=1, jf=0),
                _insn(_RET_K, RET_EPERM),
                _insn(_RET_K, RET_ALLOW),
            ],
        )
    prog += _on_syscall(
        arch.socketpair,
        [
            _insn(_LD_W_ABS, _ARG0),
            _insn(_JEQ_K, AF_UNIX, jt=1, jf=0),
            _insn(_RET_K, RET_EPERM),
            _insn(_LD_W_ABS, _ARG1),
            _insn(_AND_K, _SOCK_TYPE_MASK),
            *_one_of(_PAIR_TYPES),
        ],
    )
    new_user = [
        _insn(_LD_W_ABS, _ARG0),
        _insn(_JSET_K, _CLONE_NEWUSER, jt=0, jf=1),
        _insn(_RET_K, RET_EPERM),
        _insn(_RET_K, RET_ALLOW),
    ]
    prog += _on_syscall(arch.clone, new_user)
    prog += _on_syscall(arch.unshare, new_user)
    # A terminal's input, and (a run of the caller's uid) a readable file's flags.
    ioctls = (_TIOCSTI,) if own_files else (_TIOCSTI, *_FILE_IOCTLS)
    prog += _on_syscall(arch.ioctl, [_insn(_LD_W_ABS, _ARG1), *_none_of(ioctls)])
    if not own_files:
        # A lease on a readable file would hold up every other user of it.
        prog += _on_syscall(arch.fcntl, [_insn(_LD_W_ABS, _ARG1), *_none_of((_F_SETLEASE,))])
    # Another process's rlimits (even reading them) need only the same uid: the stage's could
    # be lowered under it. pid_t is 32 bits wide; the kernel ignores the upper half.
    prog += _on_syscall(arch.prlimit64, [_insn(_LD_W_ABS, _ARG0), *_one_of((0,))])
    if own_network:
        prog += _on_syscall(arch.setpriority, _spares_the_stage(_PRIORITY_WHICH))
        prog += _on_syscall(arch.ioprio_set, _spares_the_stage(_IOPRIO_WHICH))
        for nr in arch.sched_set:
            prog += _on_syscall(nr, _not_the_stage())
    else:
        prog += _on_syscall(arch.setpriority, _only_itself(_PRIORITY_WHICH[0]))
        prog += _on_syscall(arch.ioprio_set, _only_itself(_IOPRIO_WHICH[0]))
        for nr in arch.sched_set:
            prog += _on_syscall(nr, [_insn(_LD_W_ABS, _ARG0), *_one_of((0,))])
    prog.append(_insn(_RET_K, RET_ALLOW))
    # Classic BPF jumps are 8 bits wide; every jump above stays within its own small block.
    return b"".join(prog)
