"""The frame protocol between exampleguard and the child that imports a tree (see ``_child``).

A module of its own: exampleguard's process reads frames without importing the adapters.
"""

from __future__ import annotations

__all__ = ["FRAME_LENGTH_BYTES", "TEXT_FRAMES"]

FRAME_LENGTH_BYTES = 8
TEXT_FRAMES = "stdout"
"""The FD argument that sends the frames as text on standard output (inside a sandbox): the
kind byte, the length as 16 hexadecimal digits, then ASCII JSON."""
