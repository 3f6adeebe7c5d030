"""The ``env`` backend's socket guard for Python children: best effort, not a security boundary.

A ``sitecustomize.py`` on a PYTHONPATH entry inside the work dir installs an audit hook, which
cannot be removed and fires for every socket operation of CPython's own socket module (also for
direct ``_socket`` use). It does not cover ``python -I``/``-S``, ctypes, or non-Python programs.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["install_guard"]

GUARD_DIR = ".pyguard"

_SITECUSTOMIZE = '''\
"""Placed by sandbox (env backend): this Python may not reach the network (best effort)."""

import sys

_BLOCKED = frozenset({
    "socket.connect",
    "socket.sendto",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.gethostbyaddr",
    "socket.getnameinfo",
})


def _sandbox_socket_guard(event, args):
    if event in _BLOCKED or (event == "socket.sendmsg" and args[1] is not None):
        raise PermissionError(1, "sandbox (env backend): network access is blocked: " + event)


sys.addaudithook(_sandbox_socket_guard)
'''


def install_guard(work_dir: Path) -> Path:
    """Write the guard into the work dir; return the directory to put first on PYTHONPATH."""
    guard_dir = work_dir / GUARD_DIR
    guard_dir.mkdir(exist_ok=True)
    (guard_dir / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    return guard_dir
