"""The frame protocol between exampleguard and the child that imports a tree (see ``_child``).

A module of its own: exampleguard's process reads frames without importing the adapters.
"""

from __future__ import annotations

__all__ = ["FRAME_LENGTH_BYTES"]

FRAME_LENGTH_BYTES = 8
