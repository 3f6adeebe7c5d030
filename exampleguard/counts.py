"""The committed execution counts (``exampleguard.counts/v1``): how much is checked and run.

The counts say nothing about whether examples pass. They make a change in *how much* is
validated, dry-run, narrowed or excluded a visible, reviewable change: ``validate`` fails on any
difference from the committed file, and ``exampleguard counts --write`` records the new figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from exampleguard.codes import COUNTS_DRIFT, COUNTS_MISSING
from exampleguard.diagnostics import Diagnostic, Location
from exampleguard.documents import Document, check_format, load_document, validate_model
from exampleguard.model import StrictModel

__all__ = ["COUNTS_FORMAT", "Counts", "compare_counts", "load_counts", "render_counts"]

COUNTS_FORMAT = "exampleguard.counts/v1"


class Counts(StrictModel):
    """How many tools and examples there are, and how many are validated, eligible and run."""

    format: Literal["exampleguard.counts/v1"] = "exampleguard.counts/v1"
    tools: int = Field(ge=0)
    examples: int = Field(ge=0)
    contract_validated: int = Field(ge=0)
    dry_run_eligible: int = Field(ge=0)
    dry_run_narrowed: int = Field(ge=0)
    excluded: int = Field(ge=0)
    doc_examples: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    """An addition: the examples of no tool checked, per kind of source (``markdown``), so
    that a README change that drops examples is a reviewable change. Written only when there
    are some: a project without documentation examples keeps its counts file as it was."""

    @property
    def dry_runs(self) -> int:
        """The dry runs that execute: eligible examples minus narrowed ones."""
        return self.dry_run_eligible - self.dry_run_narrowed


_FIELDS = (
    "tools",
    "examples",
    "contract_validated",
    "dry_run_eligible",
    "dry_run_narrowed",
    "excluded",
    "doc_examples",
)


def load_counts(path: Path, display: str) -> tuple[Counts, Document] | None:
    """Read the committed counts; ``None`` when the file does not exist.

    A file that exists but cannot be read or has the wrong structure raises ``SourceError``.
    """
    if not path.exists() and not path.is_symlink():
        return None
    document = load_document(path, display)
    check_format(document, COUNTS_FORMAT)
    return validate_model(Counts, document), document


def compare_counts(
    committed: tuple[Counts, Document] | None, current: Counts, display: str
) -> list[Diagnostic]:
    """``counts-missing`` or ``counts-drift`` (every changed figure, old → new), or nothing."""
    if committed is None:
        return [
            COUNTS_MISSING.diagnostic(
                message=f"{display} does not exist; it records how much is checked and executed",
                hint="Run `exampleguard counts --write` and commit the file.",
                location=Location(display),
            )
        ]
    old, document = committed
    changes = [
        (name, getattr(old, name), getattr(current, name))
        for name in _FIELDS
        if getattr(old, name) != getattr(current, name)
    ]
    if not changes:
        return []
    described = ", ".join(f"{name}: {before} -> {after}" for name, before, after in changes)
    return [
        COUNTS_DRIFT.diagnostic(
            message=f"the counts changed: {described}",
            hint="If the change is intended, run `exampleguard counts --write` and commit "
            f"{display} for review.",
            location=document.location((changes[0][0],), at_key=True),
        )
    ]


def render_counts(counts: Counts) -> str:
    """The counts file's text: stable key order, one figure per line, a final newline."""
    exclude = None if counts.doc_examples else {"doc_examples"}
    return json.dumps(counts.model_dump(exclude=exclude), indent=2) + "\n"
