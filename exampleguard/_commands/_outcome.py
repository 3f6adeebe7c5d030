"""What a command returns: its text and exit code, or the reasons it could not run."""

from __future__ import annotations

from dataclasses import dataclass, field

from exampleguard._codes import Code
from exampleguard._diagnostics import Diagnostic, Location, Region

__all__ = ["TextOutcome", "refuse"]


@dataclass(slots=True)
class TextOutcome:
    """A command whose result is text and an exit code (or reasons it could not run)."""

    text: str = ""
    exit_code: int = 0
    unusable: list[Diagnostic] = field(default_factory=list)


def refuse(
    code: Code, message: str, where: Location | Region | None = None, hint: str | None = None
) -> TextOutcome:
    """A command refused with one error diagnostic: nothing run or written (exit 2).

    ``where`` is a place already known in lines and columns, or a region the report places.
    """
    location = where if isinstance(where, Location) else None
    region = None if isinstance(where, Location) else where
    diagnostic = code.diagnostic(message, hint=hint, location=location, region=region)
    return TextOutcome(unusable=[diagnostic])
