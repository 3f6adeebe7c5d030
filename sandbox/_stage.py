"""The sandbox's own process inside bubblewrap: it prepares the run, starts it, reports its end.

bubblewrap starts this as the PID namespace's pid 1 (``--as-pid-1``), under the seccomp filter,
with ``python -I -S -c SOURCE``, so that it needs nothing but the interpreter. It never imports
anything outside the standard library. In order it:

1. makes itself undumpable: the run, with the same uid, can then neither ptrace it nor open its
   ``/proc/1/mem`` or ``/proc/1/fd`` (with seccomp refusing ``ptrace`` and Landlock's ptrace
   scoping as two more layers);
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

from __future__ import annotations

import os
import resource
import stat
import sys
import time

# Not typing.TYPE_CHECKING: importing typing would cost every run's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_SIGKILL = 9
_CAP_LAST = 63

# Landlock (linux/landlock.h).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_TRUNCATE = 1 << 14
_FS_IOCTL_DEV = 1 << 15
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_TCP = 0b11  # BIND_TCP | CONNECT_TCP
_SCOPES = 0b11  # ABSTRACT_UNIX_SOCKET | SIGNAL
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class StageError(Exception):
    """Something the run needs could not be prepared; the run is not started."""


class Libc:
    """``syscall`` and ``prctl`` of the C library, through ``_ctypes`` alone.

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

        class _Function(core.CFuncPtr):  # type: ignore[misc]
            _flags_ = core.FUNCFLAG_CDECL | core.FUNCFLAG_USE_ERRNO
            _restype_ = _Long

        class _Library:
            _handle = core.dlopen(None)

        self._get_errno = core.get_errno
        self._functions = {name: _Function((name, _Library)) for name in ("syscall", "prctl")}

    def call(self, name: str, *args: int | bytes | None) -> int:
        """Call ``name``; a negative result raises StageError with the errno's text."""
        result = int(self._functions[name](*args))
        if result < 0:
            raise StageError(f"{name}{args[:1]}: {os.strerror(self._get_errno())}")
        return result


def _fs_rights(abi: int) -> int:
    return _FS_BY_ABI[max(k for k in _FS_BY_ABI if k <= abi)]


def landlock_ruleset(libc: Libc, abi: int, writable: list[str]) -> tuple[int, list[str]]:
    """Build the run's ruleset for this ABI; return its fd and the layers it holds."""
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
    rules = [("/", read_only), *((p, handled_fs) for p in writable)]
    rules += [(d, device) for d in _DEVICES if os.path.exists(d)]
    for path, rights in rules:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            # struct landlock_path_beneath_attr is packed: u64 allowed_access, s32 parent_fd.
            raw = rights.to_bytes(8, sys.byteorder) + fd.to_bytes(4, sys.byteorder, signed=True)
            libc.call("syscall", _SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, raw, 0)
        finally:
            os.close(fd)
    return ruleset, layers


def copy_fixtures(
    source: str, target: str, max_entries: int, max_bytes: int, deadline: float | None = None
) -> None:
    """Copy a tree of regular files and directories; refuse anything else, too much, too late.

    ``deadline`` is a ``time.monotonic`` value (inside the sandbox the caller's timeout kills
    this process instead).
    """
    entries = 0
    copied = 0
    pending = [(source, target)]
    while pending:
        src_dir, dst_dir = pending.pop()
        with os.scandir(src_dir) as listing:
            for entry in listing:
                entries += 1
                if deadline is not None and time.monotonic() > deadline:
                    raise StageError("fixtures: the copy ran past the run's timeout")
                if entries > max_entries:
                    raise StageError(f"fixtures: more than {max_entries} entries")
                info = entry.stat(follow_symlinks=False)
                relative = os.path.relpath(entry.path, source)
                dst = os.path.join(dst_dir, entry.name)
                if stat.S_ISDIR(info.st_mode):
                    os.makedirs(dst, mode=0o755, exist_ok=True)
                    pending.append((entry.path, dst))
                elif stat.S_ISREG(info.st_mode):
                    copied += _copy_file(entry.path, dst, max_bytes - copied, relative)
                else:
                    raise StageError(f"fixtures: {relative} is not a regular file or directory")


def _copy_file(src: str, dst: str, room: int, relative: str) -> int:
    # O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO is neither followed nor
    # waited on; fstat then proves it is a regular file before a byte is read.
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StageError(f"fixtures: {relative} is not a regular file")
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
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
        # Beyond the kernel's last capability the call fails; nothing is left to drop then.
        try:
            libc.call("prctl", _PR_CAPBSET_DROP, cap, 0, 0, 0)
        except StageError:
            break
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    # A uid change clears the parent-death signal and makes the process dumpable again.
    libc.call("prctl", _PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    libc.call("prctl", _PR_SET_DUMPABLE, 0, 0, 0, 0)


def _layout(work: str, dirs: list[str]) -> None:
    os.chmod(work, 0o700)
    for relative in dirs:
        os.makedirs(os.path.join(work, relative), mode=0o700, exist_ok=True)


def _child(argv: list[str], config: dict[str, str], libc: Libc, ruleset: int | None) -> None:
    """In the forked run: limits, Landlock, a clean descriptor table, then exec."""
    try:
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
        for name, key in (("memory", resource.RLIMIT_AS), ("nproc", resource.RLIMIT_NPROC)):
            if config.get(name, "-1") != "-1":
                value = int(config[name])
                resource.setrlimit(key, (value, value))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if ruleset is not None:
            libc.call("syscall", _SYS_RESTRICT_SELF, ruleset, 0)
        os.closerange(3, 1 << 16)
    except (OSError, StageError) as exc:
        os.write(2, f"sandbox: cannot prepare the run: {exc}\n".encode("utf-8", "replace"))
        os._exit(126)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        message = f"sandbox: execvp {argv[0]}: {exc.strerror or exc}\n"
        os.write(2, message.encode("utf-8", "replace"))
    os._exit(127)


def _supervise(pid: int, control: int) -> int | None:
    """Reap every process of the namespace until ``pid`` ends, and return its wait status.

    ``None`` when the caller went away first (returning then ends the namespace).
    """
    import select  # noqa: PLC0415 - needed only from here on

    pidfd = os.pidfd_open(pid)
    while True:
        # Orphans of the namespace are this process's children too: reap them as they come
        # (the timeout catches those whose end did not wake the select).
        ready, _, _ = select.select([pidfd, control], [], [], 1.0)
        if control in ready:
            return None
        while True:
            try:
                done, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return None
            if done == 0:
                break
            if done == pid:
                return status


def _report(fd: int, line: str) -> None:
    os.write(fd, (line + "\n").encode("utf-8", "replace"))


def main(args: list[str]) -> int:
    """Prepare, run and report; ``args`` is ``KEY=VALUE... -- ARGV``."""
    split = args.index("--")
    config: dict[str, str] = {}
    lists: dict[str, list[str]] = {"write": [], "dir": []}
    for word in args[:split]:
        key, _, value = word.partition("=")
        if key in lists:
            lists[key].append(value)
        else:
            config[key] = value
    argv = args[split + 1 :]
    report = int(config["report"])
    os.set_inheritable(report, False)
    try:
        libc = Libc()
        libc.call("prctl", _PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.call("prctl", _PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
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
            ruleset, layers = landlock_ruleset(libc, abi, lists["write"])
            _report(report, "layers " + " ".join(layers))
        os.chdir(work)
    except (OSError, StageError) as exc:
        _report(report, f"error {exc}")
        return 1
    pid = os.fork()
    if pid == 0:
        _child(argv, config, libc, ruleset)
    if ruleset is not None:
        os.close(ruleset)
    status = _supervise(pid, control)
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        _report(report, f"signal {os.WTERMSIG(status)}")
    else:
        _report(report, f"exit {os.WEXITSTATUS(status)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
