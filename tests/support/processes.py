"""Finding and killing host processes by a token in their command line (Linux ``/proc``)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def host_processes(token: str) -> dict[int, str]:
    """Live host processes whose command line contains ``token``: pid -> command line.

    Zombies are dead already and left out; so is this process.
    """
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
        if token.encode() in cmdline and state not in (b"Z", b"X"):
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")
    return found


def kill_processes_with(token: str) -> None:
    """Kill whatever a test left running, so one failure does not leak into the next test."""
    for pid in host_processes(token):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
