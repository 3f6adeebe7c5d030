"""The compiled stage: ``_stage.c``, built once per user with the system C compiler and cached.

A Python stage pays for an interpreter's start in every run (some 20 ms); the same steps in C
cost well under one. The package ships the C source, not a binary, so that the wheel stays
pure: the first bubblewrap probe of a process looks for ``stage-KEY`` in the user's cache dir
(``$XDG_CACHE_HOME/sandbox-stage``, else ``~/.cache/sandbox-stage``), where KEY hashes the
source, the compiler (its real path, size and mtime), the flags and the machine, and builds it
there if it is missing: ``cc -O2 -Wall -Wextra -Werror -static``, from the bytes just hashed,
into a temporary name that is renamed into place (concurrent builders each rename a whole file);
where the C library cannot be linked statically, the same without ``-static`` (a static binary
starts without the dynamic loader: some 0.3 ms less per run, in the run's critical path). A
static binary carries the C library it was linked with, so a security update of the library
would not reach it: beside it, ``stage-KEY.libc`` records the archive linked (its path and
identity, as the compiler names it at build time), and a binary whose archive has changed since,
or whose record is missing or unreadable, is built anew — one ``stat`` per process. The
compiler is one that only root or this user can change, found on a fixed PATH whose other dirs
are skipped, and a build that prints anything is refused.

What is run must be ours alone: the cache dir must be a directory owned by this euid that
nobody else can write to, and the binary a regular file owned by this euid, not group- or
world-writable, opened through the checked directory with ``O_NOFOLLOW``. The descriptor stays
open for the life of the process and bubblewrap execs exactly that file (``/proc/self/fd/N``),
so nothing can be swapped in between the check and the exec, and the binary needs no path
inside the sandbox (it lives in a home the sandbox masks).

No compiler, a failed build or a cache that fails the checks: the Python stage runs, with the
same guarantees, and :class:`CompiledStage` says why. ``SANDBOX_STAGE=python`` in the caller's
environment chooses the Python stage even when the compiled one is there (for comparison).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import shutil
import stat
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["STAGE_ENV", "CompiledStage", "compiled_stage", "locate", "python_stage_chosen"]

STAGE_ENV = "SANDBOX_STAGE"
"""The caller's variable that chooses the Python stage (``python``) over the compiled one."""

_SOURCE = Path(__file__).with_name("_stage.c")
_FLAGS = ("-O2", "-Wall", "-Wextra", "-Werror")
_STATIC = "-static"
_BUILDS: tuple[tuple[str, ...], ...] = ((*_FLAGS, _STATIC), _FLAGS)
"""The flags of each build tried, preferred first."""
_COMPILER_PATH = "/usr/local/bin:/usr/bin:/bin"
"""Where the compiler is looked for: fixed, never the caller's PATH; only the dirs of it that
no one else can write to (see :func:`_trusted`) are used."""
_BUILD_TIMEOUT_S = 120.0
_CACHE_NAME = "sandbox-stage"
_ARCHIVE_SUFFIX = ".libc"
"""The suffix of a static build's record of the C library archive it was linked with."""
_ARCHIVE_RECORD_MAX = 8192


@dataclass(frozen=True)
class CompiledStage:
    """The compiled stage this process runs, or why it runs the Python stage instead."""

    fd: int | None
    """A close-on-exec descriptor on the checked binary, open for the process's life."""
    path: str | None
    detail: str
    """How it was built (compiler and cache path), or why there is none."""


_lock = threading.Lock()
_found: CompiledStage | None = None


def python_stage_chosen() -> bool:
    """Whether the caller's environment asks for the Python stage."""
    return os.environ.get(STAGE_ENV) == "python"


def compiled_stage() -> CompiledStage:
    """Find or build the compiled stage, once per process; never raises."""
    global _found  # noqa: PLW0603 - one build and one descriptor per process
    with _lock:
        if _found is None:
            _found = locate(_cache_dirs())
        return _found


def _cache_dirs() -> list[Path]:
    """The user's cache dir, then this euid's own dir in the temp dir.

    A home may be absent or read-only (nobody's); what is found in either passes the same checks.
    """
    configured = Path(os.environ.get("XDG_CACHE_HOME", ""))
    base = configured if configured.is_absolute() else Path.home() / ".cache"
    return [base / _CACHE_NAME, Path(tempfile.gettempdir()) / f"{_CACHE_NAME}-{os.geteuid()}"]


def _key(source: bytes, compiler: str, flags: tuple[str, ...]) -> str:
    info = Path(compiler).stat()
    digest = hashlib.sha256(source)
    for part in (compiler, str(info.st_size), str(info.st_mtime_ns), *flags, platform.machine()):
        digest.update(b"\0" + part.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


def _ours_alone(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _trusted(path: str) -> bool:
    """Whether ``path`` and every dir above it are root's or this euid's alone.

    Alone: not group- or world-writable, unless a sticky dir (whose entries only their owners
    may rename or remove, as /tmp).
    """
    current = Path(path)
    for part in (current, *current.parents):
        try:
            info = part.stat()
        except OSError:
            return False
        if info.st_uid not in (0, os.geteuid()):
            return False
        writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and not (stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX):
            return False
    return True


def locate(directories: list[Path]) -> CompiledStage:
    """Find the compiled stage in the first of ``directories`` that passes the checks.

    It is built there if it is missing. Never raises: a failure is the detail of the result.
    """
    found = shutil.which("cc", path=_COMPILER_PATH)
    if found is None:
        return CompiledStage(None, None, f"no C compiler (cc) on {_COMPILER_PATH}")
    # What builds the file that runs as the sandbox's pid 1 (as root, for a root caller) must
    # be as much this user's as that file: a compiler, or a dir on the way to it or to the
    # tools it runs (as, ld on the same PATH), that others can replace is not used.
    search = os.pathsep.join(d for d in _COMPILER_PATH.split(os.pathsep) if _trusted(d))
    found = shutil.which("cc", path=search) if search else None
    compiler = os.path.realpath(found) if found is not None else None
    if found is None or compiler is None or not _trusted(compiler):
        why = f"{found or 'cc'} or a dir above it is writable by others"
        return CompiledStage(
            None, None, f"no C compiler (cc) this user can trust on {_COMPILER_PATH}: {why}"
        )
    try:
        source = _SOURCE.read_bytes()
        builds = [(f"stage-{_key(source, compiler, flags)}", flags) for flags in _BUILDS]
    except OSError as exc:
        return CompiledStage(None, None, f"no compiled stage: {exc}")
    reasons = []
    for directory in directories:
        try:
            stage = _locate_in(directory, builds, compiler, source, search)
        except OSError as exc:
            stage = CompiledStage(None, None, f"no compiled stage in {directory}: {exc}")
        if stage.fd is not None:
            return stage
        reasons.append(stage.detail)
    return CompiledStage(None, None, "; ".join(reasons))


def _locate_in(
    directory: Path,
    builds: list[tuple[str, tuple[str, ...]]],
    compiler: str,
    source: bytes,
    search: str,
) -> CompiledStage:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not _ours_alone(os.fstat(dir_fd)):
            why = f"{directory} is not this user's alone (owner or group/world write)"
            return CompiledStage(None, None, f"compiled stage refused: {why}")
        found = _cached(builds, dir_fd, directory)
        if found is None:
            # Each build in turn: the static one fails where the C library has no archive.
            failed = ""
            for name, flags in builds:
                failure = _build(compiler, source, name, dir_fd, search, flags=flags)
                if failure is None:
                    found = name, _open_checked(name, dir_fd, directory / name)
                    break
                failed = failure
            if found is None:
                return CompiledStage(None, None, failed)
        name, fd = found
        if isinstance(fd, str):
            return CompiledStage(None, None, fd)
        path = directory / name
        return CompiledStage(fd, str(path), f"compiled with {compiler} into {path}")
    finally:
        os.close(dir_fd)


def _cached(
    builds: list[tuple[str, tuple[str, ...]]], dir_fd: int, directory: Path
) -> tuple[str, int | str] | None:
    """The first build already in the cache dir, opened (or why it is refused); None if none.

    A static build whose C library archive is not the one it was linked with counts as none.
    """
    for name, flags in builds:
        try:
            opened = _open_checked(name, dir_fd, directory / name)
        except FileNotFoundError:
            continue
        if _STATIC in flags and not _archive_unchanged(name, dir_fd):
            # Built anew, static first (a dynamic build left from before would do, but slower).
            if isinstance(opened, int):
                os.close(opened)
            return None
        return name, opened
    return None


def _archive_identity(path: str) -> str | None:
    """What identifies the file at ``path`` (its real path, device, inode, size and mtime)."""
    try:
        real = Path(path).resolve()
        info = real.stat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return "\0".join(
        (str(real), str(info.st_dev), str(info.st_ino), str(info.st_size), str(info.st_mtime_ns))
    )


def _archive_unchanged(name: str, dir_fd: int) -> bool:
    """Whether the archive recorded beside the static build ``name`` is still the same file."""
    try:
        fd = os.open(
            name + _ARCHIVE_SUFFIX, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) and _ours_alone(info)):
            return False
        recorded = os.read(fd, _ARCHIVE_RECORD_MAX).decode("utf-8", "surrogateescape")
    except OSError:
        return False
    finally:
        os.close(fd)
    path = recorded.split("\0", 1)[0]
    return bool(path) and _archive_identity(path) == recorded


def _linked_archive(compiler: str, search: str) -> str | None:
    """The identity of the C library archive ``compiler`` links a static build with."""
    try:
        done = subprocess.run(
            [compiler, "-print-file-name=libc.a"],
            capture_output=True,
            env={"PATH": search, "LC_ALL": "C"},
            timeout=_BUILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    path = done.stdout.decode("utf-8", "surrogateescape").strip()
    # A compiler that knows no such file prints the bare name back.
    if done.returncode != 0 or not Path(path).is_absolute():
        return None
    return _archive_identity(path)


def _record_archive(name: str, identity: str, dir_fd: int) -> None:
    """Write the record of the archive beside ``name``, whole or not at all."""
    record = name + _ARCHIVE_SUFFIX
    temporary = f".{record}.{os.getpid()}.{threading.get_ident()}.tmp"
    fd = os.open(
        temporary,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
        dir_fd=dir_fd,
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(identity.encode("utf-8", "surrogateescape"))
        os.replace(temporary, record, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        _remove(temporary, dir_fd)
        raise


def _open_checked(name: str, dir_fd: int, path: Path) -> int | str:
    """A descriptor on the binary if it passes the checks, else why it is refused."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and _ours_alone(info) and info.st_mode & stat.S_IXUSR:
        return fd
    os.close(fd)
    return f"compiled stage refused: {path} is not a file of this user's alone"


def _build(
    compiler: str, source: bytes, name: str, dir_fd: int, search: str, *, flags: tuple[str, ...]
) -> str | None:
    """Compile ``source`` to ``name`` in the cache dir; None on success, else why not.

    The compiler writes into the dir checked, by its descriptor: by path, whoever can write
    a dir above it could swap in a dir of their own (with a link at the output's name) while
    the compiler runs.
    """
    temporary = f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    checked = f"/proc/self/fd/{dir_fd}"
    argv = [compiler, *flags, "-x", "c", "-o", f"{checked}/{temporary}", "-"]
    try:
        done = subprocess.run(
            argv,
            input=source,
            capture_output=True,
            # Fixed, never the caller's (no CFLAGS, LD_*, CPATH).
            env={"PATH": search, "LC_ALL": "C"},
            cwd=checked,
            pass_fds=(dir_fd,),
            timeout=_BUILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        _remove(temporary, dir_fd)
        return f"no compiled stage: {compiler} did not run: {exc}"
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    if done.returncode != 0:
        _remove(temporary, dir_fd)
        first = next((line for line in lines if "error" in line), lines[0] if lines else "")
        return f"no compiled stage: {compiler} failed: {first or done.returncode}"
    if lines:
        # -Werror makes every warning of the source an error: what is left is the compiler's
        # or the linker's own, and a toolchain that warns is not trusted to have built it.
        _remove(temporary, dir_fd)
        first = next((line for line in lines if "warning" in line), lines[0])
        return f"no compiled stage: {compiler} warned: {first}"
    archive = _linked_archive(compiler, search) if _STATIC in flags else None
    if _STATIC in flags and archive is None:
        # Without a record, no later process could tell the library changed: dynamic instead.
        _remove(temporary, dir_fd)
        return f"no compiled stage: {compiler} names no C library archive it links statically"
    try:
        os.chmod(temporary, 0o700, dir_fd=dir_fd)
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        if archive is not None:
            # After the binary: a process that sees the new binary beside the old record
            # rebuilds once; never the old binary beside a record it does not match.
            _record_archive(name, archive, dir_fd)
    except OSError:
        _remove(temporary, dir_fd)
        raise
    return None


def _remove(name: str, dir_fd: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)
