"""The committed execution counts (``exampleguard.counts/v1``): how much is checked and run.

The counts say nothing about whether examples pass. They make a change in *how much* is
validated, dry-run, narrowed or excluded a visible, reviewable change: ``validate`` fails on any
difference from the committed file, and ``exampleguard counts --write`` records the new figures.
"""

# No ``from __future__ import annotations``: see exampleguard/_model.py.
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal, Protocol

from pydantic import Field

from exampleguard._codes import COUNTS_DRIFT, COUNTS_MISSING
from exampleguard._diagnostics import Diagnostic, Location
from exampleguard._documents import (
    SCHEMA_KEY,
    Document,
    SourceError,
    check_format,
    load_document,
    validate_model,
)
from exampleguard._examples import Origin
from exampleguard._model import StrictModel, empty_dict

__all__ = [
    "COUNTS_FORMAT",
    "Counted",
    "Counts",
    "compare_counts",
    "count_results",
    "load_counts",
    "render_counts",
    "schema_of_file",
]

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
    doc_examples: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=empty_dict)
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


class Counted(Protocol):
    """What counting reads of an example's result."""

    @property
    def tool(self) -> str | None:
        """The catalog tool the example belongs to; ``None`` for one of no tool."""
        ...

    @property
    def validated(self) -> bool:
        """Whether the example went through contract validation."""
        ...

    @property
    def origin(self) -> Origin:
        """Where the example comes from (its kind of source)."""
        ...


def count_results(
    results: Iterable[Counted],
    *,
    tools: int,
    examples: int | None,
    dry_run_eligible: int,
    dry_run_narrowed: int,
    excluded: int,
) -> Counts:
    """The counts of a run from its results and what the review let through.

    ``examples`` is the number of catalog examples of the run; ``None`` counts the catalog
    examples among ``results`` (a run of some of the tools: a shard).
    """
    own = 0
    validated = 0
    documented: dict[str, int] = {}
    for result in results:
        if result.tool is not None:
            own += 1
            validated += result.validated
        else:
            kind = result.origin.kind
            documented[kind] = documented.get(kind, 0) + 1
    return Counts(
        tools=tools,
        examples=own if examples is None else examples,
        contract_validated=validated,
        dry_run_eligible=dry_run_eligible,
        dry_run_narrowed=dry_run_narrowed,
        excluded=excluded,
        doc_examples=dict(sorted(documented.items())),
    )


def load_counts(path: Path, display: str) -> tuple[Counts, Document] | None:
    """Read the committed counts; ``None`` when the file does not exist.

    A file that exists but cannot be read or has the wrong structure raises ``SourceError``.
    """
    if not path.exists() and not path.is_symlink():
        return None
    document = load_document(path, display)
    check_format(document, COUNTS_FORMAT)
    return validate_model(Counts, document, schema_key=True), document


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
            region=document.region((changes[0][0],), at_key=True),
        )
    ]


def render_counts(counts: Counts, *, schema: str | None = None) -> str:
    """The counts file's text: stable key order, one figure per line, a final newline.

    ``schema``: the ``$schema`` the file had, kept at its top for the editors that read it.
    """
    exclude = None if counts.doc_examples else {"doc_examples"}
    data = counts.model_dump(exclude=exclude)
    if schema is not None:
        data = {SCHEMA_KEY: schema, **data}
    return json.dumps(data, indent=2) + "\n"


def schema_of_file(path: Path) -> str | None:
    """The ``$schema`` string at the top of the JSON file at ``path``, if it has one.

    Read to keep it when the file is rewritten, as every file is read (a regular file, within
    the size limit: a FIFO or a device is never opened); a file that cannot be read has none.
    """
    if not path.exists():
        return None
    try:
        data = load_document(path, str(path)).data
    except SourceError:
        return None
    value = data.get(SCHEMA_KEY) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
