"""The sandbox's own process inside bubblewrap: it prepares the run, starts it, reports its end.

bubblewrap starts this as the PID namespace's pid 1 (``--as-pid-1``), under the seccomp filter,
with ``python -I -S -c LOADER``: the loader reads this module's code, compiled and marshalled
once by the caller, from a pipe (see ``_stagecode.stage_loader``), so that a run pays for
neither reading nor compiling it. It imports nothing beyond what the interpreter's own start
has loaded but ``_ctypes`` (not even ``os``: ``posix`` is what it wraps); every millisecond here
is paid by every run. In order it:

1. joins the run's memory cgroup where the caller made one (writing "0" to the descriptor of
   its ``cgroup.procs`` that the caller opened moves the writer); makes itself undumpable: the
   run, with the same uid, can then neither ptrace it nor open its ``/proc/1/mem`` or
   ``/proc/1/fd`` (with seccomp refusing ``ptrace`` and Landlock's ptrace scoping as two more
   layers); and leads a process group of its own, which the run joins;
2. for a root caller (bubblewrap without a user namespace) hands the work dir to the run's
   leased uid, drops the bounding set, its groups and uid, and re-arms its parent-death signal
   (which a uid change clears);
3. lays out HOME, TMPDIR and the XDG dirs and copies the fixtures, bounded in entries and bytes,
   regular files and directories only;
4. forks the run, which raises its own OOM score, takes its rlimits, enters its own Landlock
   domain (a nested one: it cannot signal or trace this process), closes every other descriptor
   and execs the program;
5. reaps every process of the namespace until the run's first process ends, writes how it ended
   on the report pipe (which the run never holds) and exits, which kills whatever is left.

Every failure before the exec is written to the report as ``error ...``; the caller then reports
the run as not started (or crashed) instead of guessing.
"""

# No "from __future__ import annotations": it is an import at run time too. The annotations
# below evaluate on 3.11 as they are.
import posix
import sys

__all__ = ["StageError", "copy_fixtures"]

# Not the os module: the interpreter's start does not load it, and it would bring four more
# modules into every run; posix is what it wraps.
os = posix
_O_DIR = posix.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFREG = 0o100000

# Not the signal module (it imports enum): _signal is what the interpreter's start loaded.
_signal: "Any" = sys.modules["_signal"]

# Not typing.TYPE_CHECKING: importing typing would cost every run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
_SIGKILL = 9
_EINVAL = 22
_CAP_LAST = 63
# sys/resource.h, the same on every architecture this package supports.
_RLIMIT_CORE = 4
_RLIMIT_NPROC = 6
_RLIMIT_NOFILE = 7
_RLIMIT_AS = 9

# Landlock (linux/landlock.h).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_SYS_CLOSE_RANGE = 436
_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_TRUNCATE = 1 << 14
_FS_IOCTL_DEV = 1 << 15
_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_TCP = 0b11  # BIND_TCP | CONNECT_TCP
_SCOPES = 0b11  # ABSTRACT_UNIX_SOCKET | SIGNAL
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class StageError(Exception):
    """Something the run needs could not be prepared; the run is not started."""

    errno = 0
    """The C library's errno when a call failed, else 0."""


class Libc:
    """``syscall``, ``prctl`` and ``prlimit`` of the C library, through ``_ctypes`` alone.

    The ``ctypes`` package costs milliseconds to import in every run; its C core does not.
    Integers go as C ints and ``bytes`` as pointers, which is all Landlock and prctl take.
    """

    def __init__(self) -> None:
        import _ctypes  # noqa: PLC0415 - only the sandbox's own process needs it

        # Any: the C core is used below the level its stubs describe (a handle from
        # dlopen(NULL), a library object that is only that handle).
        core: Any = _ctypes

        class _Long(core._SimpleCData):  # type: ignore[misc]
            _type_ = "l"

        class _Int(core._SimpleCData):  # type: ignore[misc]
            _type_ = "i"

        class _Function(core.CFuncPtr):  # type: ignore[misc]
            _flags_ = core.FUNCFLAG_CDECL | core.FUNCFLAG_USE_ERRNO
            _restype_ = _Long

        # prctl and prlimit return an int: read as a long, their -1 is 4294967295 on x86_64,
        # and no failure of theirs would be seen.
        class _IntFunction(core.CFuncPtr):  # type: ignore[misc]
            _flags_ = core.FUNCFLAG_CDECL | core.FUNCFLAG_USE_ERRNO
            _restype_ = _Int

        class _Library:
            _handle = core.dlopen(None)

        self._get_errno = core.get_errno
        self._functions: dict[str, Any] = {
            "syscall": _Function(("syscall", _Library)),
            "prctl": _IntFunction(("prctl", _Library)),
            "prlimit": _IntFunction(("prlimit", _Library)),
            "capset": _IntFunction(("capset", _Library)),
        }

    def call(self, name: str, *args: int | bytes | None) -> int:
        """Call ``name``; a negative result raises StageError with the errno's text."""
        result = int(self._functions[name](*args))
        if result < 0:
            number = self._get_errno()
            error = StageError(f"{name}{args[:1]}: {os.strerror(number)}")
            error.errno = number
            raise error
        return result


def _exists(path: str) -> bool:
    try:
        os.stat(path)
    except OSError:
        return False
    return True


def _fs_rights(abi: int) -> int:
    return _FS_BY_ABI[max(k for k in _FS_BY_ABI if k <= abi)]


def landlock_ruleset(
    libc: Libc, abi: int, writable: list[str], readable: "list[str] | None" = None
) -> tuple[int, list[str]]:
    """Build the run's ruleset for this ABI; return its fd and the layers it holds.

    ``readable``: the only paths the run may read (a run without a mount namespace, whose
    homes no mount masks); ``None`` reads everything, as inside bubblewrap's mounts.
    """
    handled_fs = _fs_rights(abi)
    fields = [handled_fs]
    layers = ["landlock-fs"]
    if abi >= 4:
        fields.append(_NET_TCP)
        layers.append("landlock-net")
    if abi >= 6:
        fields.append(_SCOPES)
        layers.append("landlock-scope")
    # struct landlock_ruleset_attr: u64 handled_access_fs, handled_access_net, scoped; the
    # size passed tells the kernel which of them this ABI's caller knows.
    attr = b"".join(value.to_bytes(8, sys.byteorder) for value in fields)
    ruleset = libc.call("syscall", _SYS_CREATE_RULESET, attr, len(attr), 0)
    read_only = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
    device = _FS_READ_FILE | _FS_WRITE_FILE | (handled_fs & (_FS_TRUNCATE | _FS_IOCTL_DEV))
    rules = [(p, read_only) for p in (readable if readable is not None else ["/"])]
    rules += [(p, handled_fs) for p in writable]
    rules += [(d, device) for d in _DEVICES if _exists(d)]
    for path, rights in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except (FileNotFoundError, PermissionError):
            if readable is not None and rights == read_only:
                # A system directory this host does not have (/lib32), or one this uid cannot
                # reach (a root caller's home): nothing to allow.
                continue
            raise
        try:
            # A file takes only the rights of a file (a directory's are refused with EINVAL).
            is_dir = os.fstat(fd).st_mode & _S_IFMT == _S_IFDIR
            allowed = rights if is_dir else rights & _FILE_RIGHTS
            # struct landlock_path_beneath_attr is packed: u64 allowed_access, s32 parent_fd.
            raw = allowed.to_bytes(8, sys.byteorder) + fd.to_bytes(4, sys.byteorder, signed=True)
            libc.call("syscall", _SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, raw, 0)
        finally:
            os.close(fd)
    return ruleset, layers


def copy_fixtures(
    source: str, target: str, max_entries: int, max_bytes: int, deadline: float | None = None
) -> None:
    """Copy a tree of regular files and directories; refuse anything else, too much, too late.

    Every step goes through descriptors opened with O_NOFOLLOW, on both sides: a directory
    swapped for a symlink while the copy runs is refused, never followed out of the tree.
    ``deadline`` is a ``time.monotonic`` value (inside the sandbox the caller's timeout kills
    this process instead).
    """
    entries = 0
    copied = 0
    src_top = os.open(source, _O_DIR)
    try:
        dst_top = os.open(target, _O_DIR)
    except OSError:
        os.close(src_top)
        raise
    stack = [(os.scandir(src_top), src_top, dst_top, "")]
    try:
        while stack:
            listing, src_dir, dst_dir, prefix = stack[-1]
            entry = next(listing, None)
            if entry is None:
                listing.close()
                os.close(src_dir)
                os.close(dst_dir)
                stack.pop()
                continue
            entries += 1
            if deadline is not None and _monotonic() > deadline:
                raise StageError("fixtures: the copy ran past the run's timeout")
            if entries > max_entries:
                raise StageError(f"fixtures: more than {max_entries} entries")
            relative = prefix + entry.name
            kind = entry.stat(follow_symlinks=False).st_mode & _S_IFMT
            if kind == _S_IFDIR:
                stack.append(_enter(entry.name, src_dir, dst_dir, relative))
            elif kind == _S_IFREG:
                copied += _copy_file(entry.name, src_dir, dst_dir, max_bytes - copied, relative)
            else:
                raise StageError(f"fixtures: {relative} is not a regular file or directory")
    finally:
        for listing, src_dir, dst_dir, _ in stack:
            listing.close()
            os.close(src_dir)
            os.close(dst_dir)


def _enter(name: str, src_dir: int, dst_dir: int, relative: str) -> "tuple[Any, int, int, str]":
    # Not contextlib.suppress: one more import per run.
    try:  # noqa: SIM105
        os.mkdir(name, 0o755, dir_fd=dst_dir)
    except FileExistsError:
        pass  # one of the layout's dirs: O_NOFOLLOW below proves it is a directory
    try:
        src = os.open(name, _O_DIR, dir_fd=src_dir)
    except OSError as exc:
        why = f"fixtures: {relative} is no longer a directory ({exc.strerror})"
        raise StageError(why) from None
    try:
        dst = os.open(name, _O_DIR, dir_fd=dst_dir)
        return os.scandir(src), src, dst, relative + "/"
    except BaseException:
        os.close(src)
        raise


def _monotonic() -> float:
    import time  # noqa: PLC0415 - only the host-side copy has a deadline

    return time.monotonic()


def _set_limit(libc: Libc, resource: int, value: int) -> None:
    # struct rlimit: soft and hard, each an rlim_t (unsigned long); the resource module would
    # be one more import per run.
    both = value.to_bytes(8, sys.byteorder) * 2
    libc.call("prlimit", 0, resource, both, None)


def _copy_file(name: str, src_dir: int, dst_dir: int, room: int, relative: str) -> int:
    # O_NOFOLLOW, O_NONBLOCK and O_NOCTTY: a file swapped for a link, a FIFO or a terminal is
    # neither followed, waited on nor made the stage's terminal (it leads a session); fstat
    # then proves it is a regular file before a byte is read.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(name, flags, dir_fd=src_dir)
    try:
        info = os.fstat(fd)
        if info.st_mode & _S_IFMT != _S_IFREG:
            raise StageError(f"fixtures: {relative} is not a regular file")
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        out_flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(name, out_flags, mode, dir_fd=dst_dir)
        total = 0
        try:
            while chunk := os.read(fd, 1 << 20):
                total += len(chunk)
                if total > room:
                    raise StageError("fixtures: more bytes than the limit allows")
                os.write(out, chunk)
        finally:
            os.close(out)
        return total
    finally:
        os.close(fd)


def _drop_root(libc: Libc, work: str, uid: int, gid: int) -> None:
    os.chown(work, uid, gid)
    for cap in range(_CAP_LAST + 1):
        try:
            libc.call("prctl", _PR_CAPBSET_DROP, cap, 0, 0, 0)
        except StageError as exc:
            # EINVAL: past the kernel's last capability, nothing is left to drop. Any other
            # failure (no CAP_SETPCAP) would leave the run every capability to regain.
            if exc.errno != _EINVAL:
                raise StageError(f"prctl PR_CAPBSET_DROP: {os.strerror(exc.errno)}") from None
            break
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    # The uid change emptied the effective and permitted sets; the inheritable one still holds
    # what bubblewrap let this process keep: a run holds no capability in any set.
    none = bytes(24)
    libc.call("capset", _CAPABILITY_VERSION_3.to_bytes(4, sys.byteorder) + bytes(4), none)
    try:
        libc.call("prctl", _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    except StageError as exc:
        if exc.errno != _EINVAL:
            raise
    # A uid change clears the parent-death signal and makes the process dumpable again.
    libc.call("prctl", _PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    libc.call("prctl", _PR_SET_DUMPABLE, 0, 0, 0, 0)


def _layout(work: str, dirs: list[str]) -> None:
    os.chmod(work, 0o700)
    for relative in dirs:
        path = work
        for part in relative.split("/"):
            path += "/" + part
            try:  # noqa: SIM105 - contextlib is one more import per run
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass


# rt_sigaction by machine: the C library refuses the signals it keeps for its threads.
_SYS_RT_SIGACTION = {"x86_64": 13, "aarch64": 134}.get(os.uname().machine)
_LIBC_SIGNALS = (32, 33)


def _reset_ignored_signals(libc: Libc) -> None:
    """Every ignored signal back to its default: an ignored signal stays ignored across exec.

    The interpreter ignores SIGPIPE and SIGXFSZ for itself, and the caller may ignore others
    (nohup's SIGHUP); the run must start as any program does.
    """
    for number in range(1, 65):
        if number in _LIBC_SIGNALS:
            continue
        try:
            if _signal.getsignal(number) == _signal.SIG_IGN:
                _signal.signal(number, _signal.SIG_DFL)
        except (OSError, ValueError):
            continue
    if _SYS_RT_SIGACTION is not None:
        # The kernel's sigaction, all zero: the default action, no flags, no mask.
        default = bytes(32)
        for number in _LIBC_SIGNALS:
            libc.call("syscall", _SYS_RT_SIGACTION, number, default, 0, 8)


def _child(
    argv: list[str],
    config: dict[str, str],
    libc: Libc,
    ruleset: int | None,
    failed: int,
    *,
    seccomp: "Any" = None,
) -> None:
    """In the forked run: limits, Landlock, a clean descriptor table, then exec.

    ``failed`` is the write end of a close-on-exec pipe: why the run could not start is written
    there, never to the run's output, so nothing the program prints can say it never ran.
    """
    try:
        _reset_ignored_signals(libc)
        # The run is dumpable like any program after its exec; its /proc files must be its
        # own already for the OOM score below.
        libc.call("prctl", _PR_SET_DUMPABLE, 1, 0, 0, 0)
        # The run, not this process, is what the OOM killer should take first. (os-level:
        # a text file would import a codec, and nothing is imported once the uid changed.)
        adj = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(adj, b"1000")
        finally:
            os.close(adj)
        for name, key in (
            ("memory", _RLIMIT_AS),
            ("nproc", _RLIMIT_NPROC),
            ("files", _RLIMIT_NOFILE),
        ):
            if config.get(name, "-1") != "-1":
                _set_limit(libc, key, int(config[name]))
        _set_limit(libc, _RLIMIT_CORE, 0)
        if ruleset is not None:
            libc.call("syscall", _SYS_RESTRICT_SELF, ruleset, 0)
        _close_from_three(libc, keep=failed)
        if seccomp is not None:
            # Last: the filter refuses calls the steps above make.
            seccomp()
    except (OSError, StageError) as exc:
        os.write(failed, f"cannot prepare the run: {exc}".encode("utf-8", "replace"))
        os._exit(126)
    try:
        _execvp(argv)
    except OSError as exc:
        os.write(failed, f"execvp {argv[0]}: {exc.strerror or exc}".encode("utf-8", "replace"))
    os._exit(127)


def _close_from_three(libc: Libc, keep: int) -> None:
    """Close every descriptor above 2 but ``keep``, however high its number.

    A caller may hold more than 65536 files, and a report pipe left open would let the run
    write its own status before the stage writes the real one.
    """
    try:
        # close_range(first, ~0U, 0): ~0U is the unsigned int -1 is as a C int.
        if keep > 3:
            libc.call("syscall", _SYS_CLOSE_RANGE, 3, keep - 1, 0)
        libc.call("syscall", _SYS_CLOSE_RANGE, keep + 1, -1, 0)
    except StageError:
        # Before Linux 5.9: the descriptors this process really holds.
        for name in os.listdir("/proc/self/fd"):
            if int(name) > 2 and int(name) != keep:
                try:  # noqa: SIM105 - contextlib is one more import per run
                    os.close(int(name))
                except OSError:
                    pass  # the listing's own descriptor, closed already


def _execvp(argv: list[str]) -> None:
    """Exec ``argv`` the way execvp does: on the run's PATH unless it names a path.

    Raises the first error that is not "no such file" (as execvp reports EACCES over ENOENT).
    """
    program = argv[0]
    if "/" in program:
        os.execv(program, argv)
    path = os.environ.get(b"PATH", b"/usr/bin:/bin").decode("utf-8", "surrogateescape")
    first: OSError | None = None
    for directory in path.split(":"):
        try:
            os.execv(f"{directory or '.'}/{program}", argv)
        except OSError as exc:
            if first is None or (
                isinstance(first, FileNotFoundError) and not isinstance(exc, FileNotFoundError)
            ):
                first = exc
    raise first or FileNotFoundError(2, "No such file or directory")


def _supervise(pid: int, control: int) -> int | None:
    """Reap every process of the namespace until ``pid`` ends, and return its wait status.

    A thread waits on the control pipe: its end (the caller is gone) ends this process, and
    with it the namespace. ``None`` if no child is left to wait for.
    """
    import _thread  # noqa: PLC0415 - built in, unlike select

    _thread.start_new_thread(_end_with_caller, (control,))
    while True:
        # Orphans of the namespace are this process's children too: reap them as they come.
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return None
        if done == pid:
            return status


def _end_with_caller(control: int) -> None:
    # Returns only at the pipe's end (the caller never writes to it).
    try:
        os.read(control, 1)
    finally:
        if _SUBREAPER[0]:
            # No namespace dies with this process: what the run left must die first.
            kill_descendants()
        os._exit(1)


_PR_SET_CHILD_SUBREAPER = 36
_SUBREAPER = [False]
"""Whether this process is the run's subreaper (a run without a PID namespace)."""


def kill_descendants() -> None:
    """Kill every process below this one (its subreaper), until none is left.

    Orphans of the run are re-parented to this process (``PR_SET_CHILD_SUBREAPER``), setsid()
    daemons included; each round kills this process's children and waits for them, so that
    their own children come up to it for the next round.
    """
    while True:
        children: list[int] = []
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/children", "rb") as listing:
                    children += [int(pid) for pid in listing.read().split()]
            except OSError:
                continue
        if not children:
            return
        for pid in children:
            try:  # noqa: SIM105 - contextlib is one more import per run
                os.kill(pid, _SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:  # noqa: SIM105
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def seccomp_installer(fd: int, libc: Libc) -> "Any":
    """Read a classic-BPF program from ``fd``; return what installs it on the calling process.

    Built before the fork, with ``_ctypes`` alone (the ``ctypes`` package costs every run its
    import); the forked run calls it last before its exec, under ``no_new_privs``.
    """
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    import _ctypes  # noqa: PLC0415 - only a run without bubblewrap loads its own filter

    core: Any = _ctypes

    class _Char(core._SimpleCData):  # type: ignore[misc]
        _type_ = "c"

    class _Program(core.Array):  # type: ignore[misc]
        _type_ = _Char
        _length_ = len(data)

    program = _Program.from_buffer_copy(data)
    # struct sock_fprog: unsigned short len, padding, then the filter's address.
    fprog = (
        (len(data) // 8).to_bytes(2, sys.byteorder)
        + bytes(6)
        + core.addressof(program).to_bytes(8, sys.byteorder)
    )

    def install() -> None:
        libc.call("prctl", _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0)

    install.keep = program  # type: ignore[attr-defined]
    return install


_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def _report(fd: int, line: str) -> None:
    # One line per fact: a name from the fixtures cannot start a line of its own.
    line = "".join("?" if ord(c) < 0x20 or c == "\x7f" else c for c in line)
    os.write(fd, (line + "\n").encode("utf-8", "replace"))


def _join_cgroup(fd: int) -> None:
    """Move this process into the run's memory cgroup; what it and the run charge counts there."""
    try:
        if os.write(fd, b"0") != 1:
            raise StageError("cannot join the run's memory cgroup: short write")
    except OSError as exc:
        raise StageError(f"cannot join the run's memory cgroup: {exc.strerror}") from None
    finally:
        os.close(fd)


def _own_process_group() -> None:
    """Lead a process group of this namespace's own, which the run then joins.

    A signal the run sends to its process group (kill(0)) then reaches nothing outside the
    sandbox. bubblewrap's --new-session gives this process a group already (when the caller has
    a terminal); without it the group is the caller's bubblewrap's, whose leader this
    namespace cannot see (its id reads 0).
    """
    if os.getpgid(0) != os.getpid():
        os.setpgid(0, 0)


def main(args: list[str]) -> int:
    """Prepare, run and report; ``args`` is ``KEY=VALUE... -- ARGV``."""
    split = args.index("--")
    config: dict[str, str] = {}
    lists: dict[str, list[str]] = {"write": [], "dir": [], "read": []}
    for word in args[:split]:
        key, _, value = word.partition("=")
        if key in lists:
            lists[key].append(value)
        else:
            config[key] = value
    argv = args[split + 1 :]
    report = int(config["report"])
    # Python's own SIGINT handler would let the run interrupt this process (pid 1 of the
    # namespace gets only the signals it handles from inside): none.
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    os.set_inheritable(report, False)
    try:
        if "cgroup" in config:
            _join_cgroup(int(config["cgroup"]))
        libc = Libc()
        seccomp = seccomp_installer(int(config["seccomp"]), libc) if "seccomp" in config else None
        libc.call("prctl", _PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _own_process_group()
        work = config["work"]
        if "uid" in config:
            _drop_root(libc, work, int(config["uid"]), int(config["gid"]))
        # The caller holds this pipe open until the run is over: its end means the caller is
        # gone, and nothing may go on (a root caller's parent-death signal cannot reach this
        # process once its uid changed: the kernel checks it like a kill).
        control = int(config["control"])
        _layout(work, lists["dir"])
        if "fixtures" in config:
            copy_fixtures(
                config["fixtures"], work, int(config["max_entries"]), int(config["max_bytes"])
            )
        ruleset = None
        abi = int(config.get("landlock", "0"))
        if abi > 0:
            readable = lists["read"] or None
            ruleset, layers = landlock_ruleset(libc, abi, lists["write"], readable)
            _report(report, "layers " + " ".join(layers))
        os.chdir(work)
    except (OSError, StageError) as exc:
        _report(report, f"error {exc}")
        return 1
    if config.get("subreaper") == "1":
        # No PID namespace: what the run leaves comes up to this process, which kills it.
        libc.call("prctl", _PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        _SUBREAPER[0] = True
    reading, failed = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        os.close(reading)
        _child(argv, config, libc, ruleset, failed, seccomp=seccomp)
    os.close(failed)
    if ruleset is not None:
        os.close(ruleset)
    # End of file without a word: the program was exec'd.
    why = os.read(reading, 4096)
    os.close(reading)
    if why:
        os.waitpid(pid, 0)
        _report(report, "error " + why.decode("utf-8", "replace"))
        return 1
    status = _supervise(pid, control)
    if _SUBREAPER[0]:
        kill_descendants()
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        _report(report, f"signal {os.WTERMSIG(status)}")
    else:
        _report(report, f"exit {os.WEXITSTATUS(status)}")
    return 0


if __name__ == "__main__":
    # _exit: the report is written; the interpreter's shutdown would only cost the run time.
    os._exit(main(sys.argv[1:]))
