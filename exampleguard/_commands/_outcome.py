"""What a command returns: its text and exit code, or the reasons it could not run."""

from __future__ import annotations

from dataclasses import dataclass, field

from exampleguard._codes import Code
from exampleguard._diagnostics import Diagnostic, Location

__all__ = ["TextOutcome", "refuse"]


@dataclass(slots=True)
class TextOutcome:
    """A command whose result is text and an exit code (or reasons it could not run)."""

    text: str = ""
    exit_code: int = 0
    unusable: list[Diagnostic] = field(default_factory=list)


def refuse(
    code: Code, message: str, location: Location | None = None, hint: str | None = None
) -> TextOutcome:
    """A command refused with one error diagnostic: nothing run or written (exit 2)."""
    return TextOutcome(unusable=[code.diagnostic(message, hint=hint, location=location)])
