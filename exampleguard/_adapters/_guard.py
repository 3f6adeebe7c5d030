"""A cheap guard, inside the child, against an import that would change the project.

Installed before the application is imported (and kept while its factory runs and its parser
judges the examples), an audit hook (PEP 578) refuses, with ``PermissionError``:

- opening a file for writing, and creating, removing, renaming, linking or changing the mode,
  owner or times of a path, anywhere outside the scratch directories;
- starting a program (``subprocess``, ``os.system``, ``os.exec*``, ``os.spawn*``,
  ``os.posix_spawn``, ``os.fork``, ``pty.spawn``);
- network use: connecting, binding or sending on a socket, and name lookups.

It works on every platform and needs nothing installed; the sandbox (bubblewrap), where the
machine has it, is the boundary. What the guard does not cover, by the nature of audit hooks:
code that writes through descriptors it already holds, C extensions and ``ctypes`` calls that
reach the system directly (a compiled library writing a file), ``mmap`` of an already open
file, and code that removes the hook's effect by exiting the interpreter in unusual ways. It
stops the natural mistakes — a ``main()`` named as a parser factory that formats files, an
import that writes a cache next to the sources — not a hostile application.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["install_guard"]

# Events whose first argument is a path that the operation changes.
_PATH_EVENTS = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.symlink",
        "os.link",
        "os.utime",
        "os.chflags",
        "os.lchflags",
        "os.setxattr",
        "os.removexattr",
        "shutil.rmtree",
        "shutil.move",
        "shutil.copyfile",
        "shutil.copytree",
        "shutil.make_archive",
        "shutil.unpack_archive",
    }
)
# Events that change two paths, both of which must be inside the scratch directories.
_TWO_PATH_EVENTS = frozenset(
    {"os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.copytree", "shutil.move"}
)
_PROGRAM_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.spawn",
        "os.posix_spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
    }
)
_NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def install_guard(scratch: Sequence[str]) -> None:
    """Install the hook: from now on, writes outside ``scratch``, programs and network fail."""
    allowed = tuple(os.path.realpath(path) for path in scratch if path)
    devices = ("/dev/null", "/dev/tty", "/dev/stdout", "/dev/stderr")

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            # A descriptor the process already holds: not a new path.
            return True
        try:
            text = os.fsdecode(path)
        except TypeError:
            return False
        if text in devices:
            return True
        real = os.path.realpath(text)
        return any(real == root or real.startswith(root + os.sep) for root in allowed)

    def refuse(what: str) -> None:
        raise PermissionError(f"exampleguard refuses {what} while importing the command tree")

    def hook(event: str, arguments: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = [*arguments, None, None, 0][:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes and path is not None and not inside(path):
                refuse(f"writing {os.fsdecode(path)!r}")
        elif event in _PATH_EVENTS:
            paths = arguments[:2] if event in _TWO_PATH_EVENTS else arguments[:1]
            for path in paths:
                if path is not None and not inside(path):
                    refuse(f"{event} on {path!r}")
        elif event in _PROGRAM_EVENTS:
            refuse(f"starting a program ({event})")
        elif event in _NETWORK_EVENTS:
            refuse(f"network use ({event})")

    # Bytecode caches would be written next to the project's sources.
    sys.dont_write_bytecode = True
    sys.addaudithook(hook)
