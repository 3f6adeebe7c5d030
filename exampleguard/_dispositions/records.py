"""The reviewer records' formats: dispositions, exclusions, doc exceptions and gate records."""

# No ``from __future__ import annotations``: see exampleguard/_model.py.
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import Field, ValidationInfo, field_validator

from exampleguard._codes import (
    Code,
)
from exampleguard._diagnostics import Diagnostic, Location
from exampleguard._documents import Document, KeyRegion
from exampleguard._model import NonEmpty, StrictModel, empty_list

__all__ = [
    "BUILTIN_REASON_CODES",
    "DOC_EXCEPTIONS_FILE",
    "DOC_REASON_CODES",
    "EXCLUSIONS_FILE",
    "GATES_FILE",
    "Disposition",
    "DispositionFile",
    "DocException",
    "DocExceptionFile",
    "DocReasonCode",
    "Exclusion",
    "ExclusionFile",
    "Gate",
    "GateFile",
    "Index",
    "LoadedDispositions",
    "Record",
    "has_wildcard",
    "is_concrete_reason",
    "shown_path",
]


EXCLUSIONS_FILE = "exclusions.toml"


GATES_FILE = "gates.toml"


DOC_EXCEPTIONS_FILE = "doc-exceptions.toml"


BUILTIN_REASON_CODES: dict[str, str] = {
    "needs-network": "The preview reaches the network, which the sandbox blocks.",
    "needs-credentials": "The preview needs secrets or a login the sandbox never passes in.",
    "needs-service": "The preview needs a live service (database, daemon, remote API) that is "
    "not available in CI.",
    "needs-fixture": "The preview needs data or files that are not shipped as fixtures.",
    "nondeterministic": "The preview's output or exit status varies between runs (time, "
    "randomness, ordering).",
    "platform-specific": "The preview only runs on another operating system, architecture or "
    "hardware.",
    "needs-terminal": "The preview needs an interactive terminal (a pager, a TTY check).",
}
"""The approved reason codes every project has; ``reason_codes`` in the config adds more."""


_PLACEHOLDERS = {
    "",
    "n/a",
    "na",
    "none",
    "nothing",
    "todo",
    "tbd",
    "tbc",
    "fixme",
    "xxx",
    "skip",
    "skipped",
    "wip",
    "later",
    "temp",
    "temporary",
    "reason",
    "no reason",
    "because",
    "see above",
    "see issue",
    "same",
    "ditto",
    "-",
    "?",
    "...",
}


_MIN_REASON_CHARS = 12


_WILDCARD = re.compile(r"[*?\[\]{}]")


Index = Annotated[int, Field(ge=0)]


class Disposition(StrictModel):
    """One reviewed decision to keep one example out of the dry-run set."""

    tool: NonEmpty
    example: Index
    reason_code: NonEmpty
    reason: str
    reviewer: NonEmpty | None = None
    evidence: list[NonEmpty] = Field(default_factory=empty_list)
    command: str | None = None


class DispositionFile(StrictModel):
    """A ``dispositions/*.toml`` file: any number of ``[[disposition]]`` records."""

    disposition: list[Disposition] = Field(default_factory=empty_list)


class Exclusion(StrictModel):
    """One reviewed decision not to offer an exact runnable command to agents."""

    path: list[NonEmpty]
    reason: str
    reviewer: NonEmpty | None = None


class ExclusionFile(StrictModel):
    """``dispositions/exclusions.toml``: any number of ``[[exclusion]]`` records."""

    exclusion: list[Exclusion] = Field(default_factory=empty_list)


class Gate(StrictModel):
    """One reviewed statement that a tool's command asks for confirmation in application code.

    It silences exactly one tool's ``safety-drift`` for ``"confirmation": "required"`` on a
    command whose tree shows no gate (a ``click.confirm`` in the command's body, an argparse
    program's own prompt): ``evidence`` says where the gate is.
    """

    tool: NonEmpty
    reason: str
    reviewer: NonEmpty | None = None
    evidence: Annotated[list[NonEmpty], Field(min_length=1)]


class GateFile(StrictModel):
    """``dispositions/gates.toml``: any number of ``[[gate]]`` records."""

    gate: list[Gate] = Field(default_factory=empty_list)


DocReasonCode = Literal["counter-example", "migration-note", "error-demo"]


DOC_REASON_CODES: dict[str, str] = {
    "counter-example": "The docs show the command as what not to do.",
    "migration-note": "The docs show a command's old, no longer valid form next to its "
    "replacement.",
    "error-demo": "The docs show the command to explain the error it produces.",
}
"""Why a documentation example may be wrong on purpose: the only codes a doc exception takes."""


class DocException(StrictModel):
    """One reviewed decision that one exact command text of a documentation file is wrong.

    ``file`` is relative to the configuration file's folder, ``command`` the example's text
    exactly as extracted (after its prompt, continuations kept). Nothing is a pattern: the
    record matches that text in that file or nothing.
    """

    file: NonEmpty
    command: NonEmpty
    reason_code: DocReasonCode
    reason: str
    reviewer: NonEmpty | None = None

    @field_validator("reason")
    @classmethod
    def _concrete(cls, reason: str, info: ValidationInfo) -> str:
        code = info.data.get("reason_code")
        if not is_concrete_reason(reason, code if isinstance(code, str) else ""):
            raise ValueError(
                f"the reason {reason.strip()!r} is not concrete: say in a sentence why the "
                "example is wrong on purpose"
            )
        return reason


class DocExceptionFile(StrictModel):
    """``dispositions/doc-exceptions.toml``: any number of ``[[doc_exception]]`` records."""

    doc_exception: list[DocException] = Field(default_factory=empty_list)


T = TypeVar("T", Disposition, Exclusion, DocException, Gate)


@dataclass(frozen=True, slots=True)
class Record(Generic[T]):
    """A record with the document it came from and its index there.

    A record not written yet has no document: ``file`` names the file it is to be appended to.
    """

    value: T
    document: Document | None
    index: int
    file: str = ""

    @property
    def location(self) -> Location:
        """Where the record starts in its file, in lines and columns (for listings and messages)."""
        region = self.region
        return Location(self.file) if region is None else region.located()

    @property
    def region(self) -> KeyRegion | None:
        """Where the record starts in its file, for the report builder to place."""
        if self.document is None:
            return None
        kind = {Disposition: "disposition", Exclusion: "exclusion", Gate: "gate"}.get(
            type(self.value), "doc_exception"
        )
        return self.document.region((kind, self.index), at_key=False)

    def problem(self, code: Code, message: str, hint: str | None = None) -> Diagnostic:
        """An error about this record, located at it and saying which record it is."""
        value = self.value
        tool: str | None = None
        example: int | None = None
        if isinstance(value, Disposition):
            tool, example = value.tool, value.example
            about = f"disposition for {value.tool}[{value.example}]"
        elif isinstance(value, Gate):
            tool = value.tool
            about = f"gate record for {value.tool}"
        elif isinstance(value, DocException):
            about = f"doc exception for {value.command!r} in {value.file}"
        else:
            about = f"exclusion of '{shown_path(value.path)}'"
        region = self.region
        return code.diagnostic(
            f"{about}: {message}",
            hint=hint,
            tool=tool,
            example=example,
            # A record not written yet has no place in its file but the file.
            location=Location(self.file) if region is None else None,
            region=region,
        )


@dataclass(slots=True)
class LoadedDispositions:
    """Every disposition and exclusion record found under the dispositions folder."""

    dispositions: list[Record[Disposition]] = field(default_factory=list)
    exclusions: list[Record[Exclusion]] = field(default_factory=list)
    doc_exceptions: list[Record[DocException]] = field(default_factory=list)
    gates: list[Record[Gate]] = field(default_factory=list)


def is_concrete_reason(reason: str, code: str) -> bool:
    """Whether ``reason`` says something concrete: not a placeholder, not the code repeated.

    A concrete reason has at least two words and twelve characters, and is not ``n/a``,
    ``todo``, ``tbd``, ``skip`` or the like, nor the reason code in other words.
    """
    normalized = " ".join(reason.strip().lower().split())
    bare = normalized.strip(" .!:;")
    if bare in _PLACEHOLDERS:
        return False
    if bare in {code.lower(), code.lower().replace("-", " "), code.lower().replace("-", "")}:
        return False
    return len(bare) >= _MIN_REASON_CHARS and len(bare.split()) >= 2


def shown_path(path: Sequence[str]) -> str:
    """A command path as reviewers write it (the program's own path has no words)."""
    return " ".join(path) or "(the program itself)"


def has_wildcard(path: Sequence[str]) -> bool:
    """Whether a path uses wildcard characters, which an exact record never may."""
    return any(_WILDCARD.search(word) for word in path)
