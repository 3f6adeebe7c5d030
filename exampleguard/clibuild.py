"""The Click command of exampleguard's Typer app, built by Typer's public API.

:func:`click_command` is ``typer.main.get_command(app)``: every command built as Typer builds
it, every value converted by Typer's own conversion. :data:`DirectCommand` and
:data:`DirectGroup` are Typer's own command classes, under the names :mod:`exampleguard.cli`
passes as ``cls``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["DirectCommand", "DirectGroup", "click_command"]

DirectCommand = TyperCommand
"""Typer's own command class."""

DirectGroup = TyperGroup
"""Typer's own group class."""


def click_command(app: typer.Typer, prepare: Callable[[Any], None]) -> Any:
    """The Click group of ``app`` as ``typer.main.get_command`` builds it, ``prepare``-d."""
    root = typer.main.get_command(app)
    prepare(root)
    return root
