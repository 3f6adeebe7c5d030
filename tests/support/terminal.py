"""Running a command on a real pseudo-terminal, as a user at a terminal runs it.

The command is the session leader of a fresh pty, which is its controlling terminal: writing
``^C`` to the master makes the terminal driver send SIGINT to its foreground process group,
exactly what pressing Ctrl-C does. Everything it writes is read off the master as it comes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import termios
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

CTRL_C = b"\x03"


def _controlling_terminal() -> None:
    # In the child, after setsid: make the pty (already its stdin) the controlling terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """A command running on its own pty; ``output`` is everything it printed so far."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        master, slave = os.openpty()
        self._master = master
        self._chunks: list[bytes] = []
        try:
            self.process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
                preexec_fn=_controlling_terminal,  # noqa: PLW1509 - the pty must be the child's own
            )
        finally:
            os.close(slave)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        # Read until the last writer closes the pty (EIO on Linux): a full pty would block
        # the command.
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._chunks.append(chunk)

    def press(self, keys: bytes) -> None:
        """Type ``keys`` at the terminal."""
        os.write(self._master, keys)

    @property
    def output(self) -> str:
        """What the command printed so far, as text (the terminal turns ``\\n`` into ``\\r\\n``)."""
        return b"".join(self._chunks).decode("utf-8", "replace").replace("\r\n", "\n")

    def wait(self, timeout: float) -> int:
        """Wait for the command to end; its exit status, once all its output was read."""
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code

    def close(self) -> None:
        """Kill the command if it still runs, and release the pty."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=10)
        with contextlib.suppress(OSError):
            os.close(self._master)
