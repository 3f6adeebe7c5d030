"""Writing files so that nothing is ever half-written or lost.

Every write goes to a temporary file in the same directory, is flushed to disk (but for cache
entries), and replaces the target with one ``rename``: a reader — or a crash — sees the old file
or the new one, never a mix.
Read-modify-write sequences hold an exclusive lock on the *directory* that holds the target:
a lock on the target itself would protect nothing, because the rename replaces the locked
inode, and locking the directory needs no lock file left behind in the user's repository.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["NotARegularFileError", "locked", "read_regular", "write_atomically", "write_through"]


class NotARegularFileError(OSError):
    """The path to replace exists and is neither a regular file nor a folder."""


def read_regular(path: Path) -> bytes:
    """The bytes of the regular file ``path``; ``OSError`` when it is missing or not a file.

    For files only exampleguard writes (cache entries, by :func:`write_atomically`): anything
    else found there is refused without blocking (opening a FIFO would wait for a writer
    forever; a link to ``/dev/zero`` never ends).
    """
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(f"{path} is not a regular file")
        return stream.read()


def write_atomically(path: Path, text: str | Iterable[str], *, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step; keep the old mode if it existed.

    ``text`` may come in pieces (an iterable of strings), written as they come. Not
    ``durable``: the file and the rename are not flushed to disk, for a file that is worth
    nothing after a crash anyway (a cache entry, which its reader checks and ignores when
    broken); the replacement is still one step for every reader.
    """
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True)
    try:
        status = path.stat()
    except FileNotFoundError:
        mode = 0o644
    else:
        if not stat.S_ISREG(status.st_mode):
            # The rename would put a file where a FIFO, a device or a link to one was (a counts
            # path of /dev/full would destroy the device node): a path that is no file is kept.
            if stat.S_ISDIR(status.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            raise NotARegularFileError(errno.EINVAL, "Not a regular file", str(path))
        mode = status.st_mode & 0o7777
    temporary: str | None = None
    # Ctrl-C and SIGTERM raise in the main thread at any bytecode: one arriving after mkstemp
    # created the file but before the cleanup below covers it would leave the temporary behind
    # (a busy machine makes that window long). They wait, pending, until it is covered.
    previous = _defer_interrupts()
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        _resume_interrupts(previous)
        with os.fdopen(
            handle, "w", encoding="utf-8", errors="backslashreplace", newline=""
        ) as stream:
            stream.writelines(_pieces(text))
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        raise
    finally:
        _resume_interrupts(previous)
    if durable:
        _sync_directory(directory)


_INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})


def _defer_interrupts() -> set[int | signal.Signals] | None:
    """Block SIGINT and SIGTERM in this thread; the mask to restore (``None``: cannot here)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)


def _resume_interrupts(previous: set[int | signal.Signals] | None) -> None:
    """Restore the mask: a signal that came meanwhile is delivered now."""
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _sync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not every filesystem allows it, which is harmless.
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def write_through(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces) into an existing non-regular file (a FIFO, a device)."""
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    with path.open("w", encoding="utf-8", errors="backslashreplace") as stream:
        stream.writelines(_pieces(text))


def _pieces(text: str | Iterable[str]) -> Iterable[str]:
    # A string is one piece, not an iterable of one-character pieces.
    return (text,) if isinstance(text, str) else text


@contextlib.contextmanager
def locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` (created if needed) for the duration."""
    directory.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)
