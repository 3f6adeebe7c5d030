"""Reviewer decisions: dry-run dispositions and coverage exclusions, both in ``dispositions/``.

A *disposition* removes one exact example of a tool with a reviewed dry-run capability from the
dry-run set, for an approved, reason-coded, concrete reason. It never removes anything from
contract validation. An *exclusion* (``dispositions/exclusions.toml``) says why one exact
runnable command is not offered to agents. A *doc exception* (``dispositions/doc-exceptions.toml``)
says why one exact command text of a documentation file is wrong on purpose. A *gate record*
(``dispositions/gates.toml``) says where a command asks for confirmation in application code
that no tree can see (:mod:`exampleguard.safety` checks it). All are checked on
every ``validate``: invalid, stale and duplicate records fail the run.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import Field, ValidationInfo, field_validator

from exampleguard.codes import (
    DISPOSITION_DUPLICATE,
    DISPOSITION_INVALID,
    DISPOSITION_STALE,
    DOC_EXAMPLE_EXCEPTED,
    DOC_EXCEPTION_DUPLICATE,
    DOC_EXCEPTION_STALE,
    EXCLUSION_DUPLICATE,
    EXCLUSION_INVALID,
    EXCLUSION_STALE,
    FILE_UNREADABLE,
    UNCOVERED_COMMAND,
    Code,
)
from exampleguard.contract import CommandNode, Contract, EffectiveTool
from exampleguard.diagnostics import Diagnostic, Location, plural
from exampleguard.documents import Document, SourceError, load_document, validate_model
from exampleguard.files import locked, write_atomically
from exampleguard.model import NonEmpty, StrictModel
from exampleguard.sources import ExampleRecord, Examples

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
    "DocReview",
    "Exclusion",
    "ExclusionFile",
    "Gate",
    "GateFile",
    "LoadedDispositions",
    "Record",
    "RecordError",
    "Review",
    "all_errors",
    "append_record",
    "check_dispositions",
    "check_doc_exceptions",
    "check_exclusions",
    "disposition_file",
    "exact_command",
    "has_wildcard",
    "is_concrete_reason",
    "load_dispositions",
    "reason_code_hint",
    "render_disposition",
    "render_exclusion",
    "rewrite_disposition",
    "shown_path",
    "toml_string",
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
    evidence: list[NonEmpty] = Field(default_factory=list)
    command: str | None = None


class DispositionFile(StrictModel):
    """A ``dispositions/*.toml`` file: any number of ``[[disposition]]`` records."""

    disposition: list[Disposition] = Field(default_factory=list)


class Exclusion(StrictModel):
    """One reviewed decision not to offer an exact runnable command to agents."""

    path: list[NonEmpty]
    reason: str
    reviewer: NonEmpty | None = None


class ExclusionFile(StrictModel):
    """``dispositions/exclusions.toml``: any number of ``[[exclusion]]`` records."""

    exclusion: list[Exclusion] = Field(default_factory=list)


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

    gate: list[Gate] = Field(default_factory=list)


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

    doc_exception: list[DocException] = Field(default_factory=list)


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
        """Where the record starts in its file."""
        if self.document is None:
            return Location(self.file)
        kind = {Disposition: "disposition", Exclusion: "exclusion", Gate: "gate"}.get(
            type(self.value), "doc_exception"
        )
        return self.document.location((kind, self.index), at_key=False)

    def problem(self, code: Code, message: str, hint: str | None = None) -> Diagnostic:
        """An error about this record, located at it and saying which record it is."""
        value = self.value
        if isinstance(value, Disposition):
            return code.diagnostic(
                f"disposition for {value.tool}[{value.example}]: {message}",
                hint=hint,
                tool=value.tool,
                example=value.example,
                location=self.location,
            )
        if isinstance(value, Gate):
            return code.diagnostic(
                f"gate record for {value.tool}: {message}",
                hint=hint,
                tool=value.tool,
                location=self.location,
            )
        if isinstance(value, DocException):
            return code.diagnostic(
                f"doc exception for {value.command!r} in {value.file}: {message}",
                hint=hint,
                location=self.location,
            )
        return code.diagnostic(
            f"exclusion of '{shown_path(value.path)}': {message}",
            hint=hint,
            location=self.location,
        )


@dataclass(slots=True)
class LoadedDispositions:
    """Every disposition and exclusion record found under the dispositions folder."""

    dispositions: list[Record[Disposition]] = field(default_factory=list)
    exclusions: list[Record[Exclusion]] = field(default_factory=list)
    doc_exceptions: list[Record[DocException]] = field(default_factory=list)
    gates: list[Record[Gate]] = field(default_factory=list)


@dataclass(slots=True)
class Review:
    """The outcome of checking reviewer records: what applies, and every defect found."""

    narrowed: set[tuple[str, int]] = field(default_factory=set)
    excluded: set[tuple[str, ...]] = field(default_factory=set)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    refused: list[Diagnostic] = field(default_factory=list)
    """The defects of a record about to be written (see :func:`check_dispositions`)."""


def load_dispositions(folder: Path, root: Path, display: str) -> LoadedDispositions:
    """Load every ``*.toml`` under ``folder``; a missing folder means no records.

    Raises ``SourceError`` for a file that cannot be read or does not have the expected shape,
    and for a file that is a symlink to somewhere outside the project ``root``.
    """
    loaded = LoadedDispositions()
    if not folder.exists():
        return loaded
    if not folder.is_dir():
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{display} is not a folder",
                location=Location(display),
            )
        )
    errors: list[Diagnostic] = []
    for path in sorted(folder.glob("*.toml")):
        shown = f"{display}/{path.name}"
        try:
            _refuse_escape(path, root, shown)
            document = load_document(path, shown)
            if path.name == DOC_EXCEPTIONS_FILE:
                doc = validate_model(DocExceptionFile, document)
                loaded.doc_exceptions.extend(
                    Record(value, document, i) for i, value in enumerate(doc.doc_exception)
                )
            elif path.name == GATES_FILE:
                gates = validate_model(GateFile, document)
                loaded.gates.extend(Record(v, document, i) for i, v in enumerate(gates.gate))
            elif path.name == EXCLUSIONS_FILE:
                exclusions = validate_model(ExclusionFile, document)
                loaded.exclusions.extend(
                    Record(value, document, i) for i, value in enumerate(exclusions.exclusion)
                )
            else:
                records = validate_model(DispositionFile, document)
                loaded.dispositions.extend(
                    Record(value, document, i) for i, value in enumerate(records.disposition)
                )
        except SourceError as error:
            errors.append(error.diagnostic)
    if errors:
        raise _Many(errors)
    return loaded


class _Many(SourceError):
    """Several files failed; the first is the exception's diagnostic, all are in ``all``."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0])
        self.all = diagnostics


def all_errors(error: SourceError) -> list[Diagnostic]:
    """Every diagnostic a ``SourceError`` carries (a folder can fail in several files)."""
    return list(error.all) if isinstance(error, _Many) else [error.diagnostic]


def _refuse_escape(path: Path, root: Path, shown: str) -> None:
    try:
        resolved = path.resolve()
    except (RuntimeError, OSError):
        # Python 3.11 reports a symlink loop as RuntimeError.
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{shown} is a symlink loop",
                location=Location(shown),
            )
        ) from None
    if resolved != path.absolute() and not resolved.is_relative_to(root.resolve()):
        raise SourceError(
            FILE_UNREADABLE.diagnostic(
                message=f"{shown} is a symlink to {resolved}, outside the project; reviewer "
                "records must live in the repository",
                location=Location(shown),
            )
        )


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


def check_dispositions(
    loaded: LoadedDispositions,
    tools: Sequence[EffectiveTool],
    examples: Examples,
    reason_codes: Mapping[str, str],
    *,
    new: Record[Disposition] | None = None,
) -> Review:
    """Check every disposition; return what they narrow and their defects (SPEC 3.4).

    ``new`` is a record about to be written (``dispositions add``): it is checked after the
    records on file, exactly like them, and its defects are :attr:`Review.refused` rather than
    diagnostics of the run. A record not written yet cannot be stale: what would make a written
    one stale (its index gone) makes a new one invalid.
    """
    review = Review()
    check = _DispositionCheck(tools, examples, {**BUILTIN_REASON_CODES, **reason_codes})
    for record in loaded.dispositions:
        review.diagnostics.extend(check.record(record, review))
    if new is not None:
        review.refused = check.record(new, review, new=True)
    return review


class _DispositionCheck:
    """The checks of one disposition against the tools, and against the records before it."""

    def __init__(
        self, tools: Sequence[EffectiveTool], examples: Examples, approved: Mapping[str, str]
    ) -> None:
        # By id, the last tool of an id winning: `duplicate-tool` is reported on its own.
        self.tools = {tool.id: tool for tool in tools}
        self.examples = examples
        self.approved = approved
        self.first: dict[tuple[str, int], Record[Disposition]] = {}

    def record(
        self, record: Record[Disposition], review: Review, *, new: bool = False
    ) -> list[Diagnostic]:
        """Every defect of ``record``; a record without one narrows its example in ``review``."""
        disposition = record.value
        key = (disposition.tool, disposition.example)
        earlier = self.first.get(key)
        if earlier is not None:
            return [
                record.problem(
                    DISPOSITION_DUPLICATE,
                    f"the same example already has a disposition in {earlier.location}",
                    "Keep one record per example.",
                )
            ]
        if not new:
            self.first[key] = record
        tool = self.tools.get(disposition.tool)
        texts = [r.text for r in self.examples.of_tool(tool.index)] if tool is not None else []
        problems = self._invalid(disposition, tool)
        if problems or tool is None:
            return [record.problem(DISPOSITION_INVALID, text, hint) for text, hint in problems]
        count, index = len(texts), disposition.example
        if index >= count and new:
            return [
                record.problem(
                    DISPOSITION_INVALID,
                    f"the tool has {plural(count, 'example')}; there is no index {index}",
                )
            ]
        if index >= count:
            return [
                record.problem(
                    DISPOSITION_STALE,
                    f"the tool has {plural(count, 'example')}; index {index} no longer exists",
                    "Delete the record.",
                )
            ]
        current = texts[disposition.example]
        if current != disposition.command:
            return [
                record.problem(
                    DISPOSITION_STALE,
                    f"it was reviewed for {disposition.command!r} but the example is now "
                    f"{current!r}",
                    "Review the current example and write a new disposition, or delete this one.",
                )
            ]
        if not new:
            review.narrowed.add(key)
        return []

    def _invalid(
        self, disposition: Disposition, tool: EffectiveTool | None
    ) -> list[tuple[str, str | None]]:
        problems: list[tuple[str, str | None]] = []
        if tool is None:
            problems.append((f"no tool has the id {disposition.tool!r}", None))
        elif tool.dry_run is None:
            problems.append(
                (
                    "the tool has no reviewed dry-run capability, so there is nothing to narrow",
                    "Dispositions only narrow dry runs; contract validation is never skipped.",
                )
            )
        if disposition.reason_code not in self.approved:
            problems.append(
                (
                    f"reason code {disposition.reason_code!r} is not approved",
                    reason_code_hint(disposition.reason_code, self.approved),
                )
            )
        if not is_concrete_reason(disposition.reason, disposition.reason_code):
            problems.append(
                (
                    f"the reason {disposition.reason.strip()!r} is not concrete",
                    "Say what the dry run needs that CI does not have, in a sentence.",
                )
            )
        if disposition.command is None:
            problems.append(
                (
                    "it does not record the example text it was reviewed for (`command`)",
                    "Write dispositions with `exampleguard dispositions add`.",
                )
            )
        return problems


def reason_code_hint(code: str, approved: Iterable[str]) -> str:
    """The hint for an unapproved reason code: the one it is a typo of, then every approved one."""
    names = sorted(approved)
    close = difflib.get_close_matches(code.strip().lower(), names, n=1, cutoff=0.6)
    listing = "Approved codes: " + ", ".join(names)
    return f"Did you mean {close[0]!r}? {listing}" if close else listing


def check_exclusions(
    loaded: LoadedDispositions,
    contract: Contract,
    catalog_tools: Callable[[], Location | None] | None = None,
) -> Review:
    """Check coverage both ways and every exclusion (SPEC 3.5); needs a tree to mean anything.

    ``catalog_tools`` says where an uncovered command is reported (where its tool would go); it
    is asked only when there is one, since finding a place in a large catalog takes a scan.
    """
    review = Review()
    first: dict[tuple[str, ...], Record[Exclusion]] = {}
    for record in loaded.exclusions:
        exclusion = record.value
        path = tuple(exclusion.path)
        if contract.tree is None:
            review.diagnostics.append(
                record.problem(
                    EXCLUSION_INVALID,
                    "coverage is only checked against a command tree, and none is configured",
                    "Configure `tree`, or delete dispositions/exclusions.toml.",
                )
            )
            continue
        if path in first:
            review.diagnostics.append(
                record.problem(
                    EXCLUSION_DUPLICATE,
                    f"the path is already excluded at {first[path].location}",
                    "Keep one record per path.",
                )
            )
            continue
        first[path] = record
        problems: list[str] = []
        if has_wildcard(path):
            problems.append("wildcards are not allowed; name one exact command")
        if not is_concrete_reason(exclusion.reason, ""):
            problems.append(f"the reason {exclusion.reason.strip()!r} is not concrete")
        node = exact_command(contract, path)
        if not problems and node is None:
            review.diagnostics.append(
                record.problem(
                    EXCLUSION_STALE,
                    "the program no longer has this command",
                    "Delete the record.",
                )
            )
            continue
        if node is not None and (node.is_group or not node.runnable):
            problems.append("it is a command group, not a runnable command; exclude leaves only")
        for message in problems:
            review.diagnostics.append(record.problem(EXCLUSION_INVALID, message))
        if problems or node is None:
            continue
        if node.tool is not None:
            review.diagnostics.append(
                record.problem(
                    EXCLUSION_STALE,
                    f"the tool {node.tool.id} now covers this command",
                    "Delete the exclusion.",
                )
            )
            continue
        review.excluded.add(path)
    if contract.tree is not None:
        review.diagnostics.extend(_uncovered(contract, review.excluded, catalog_tools))
    return review


@dataclass(slots=True)
class DocReview:
    """What the doc exceptions except, and the defects of the records."""

    excepted: dict[tuple[str, str], Record[DocException]] = field(default_factory=dict)
    """By the file as outputs show it and the exact command text."""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def excepting(self, record: ExampleRecord) -> Diagnostic | None:
        """The report that ``record`` is excepted, with its reason; ``None`` if it is not."""
        if record.tool is not None:
            return None
        found = self.excepted.get((record.origin.file, record.text))
        if found is None:
            return None
        value = found.value
        return DOC_EXAMPLE_EXCEPTED.diagnostic(
            f"excepted, not checked ({value.reason_code}): {value.reason}",
            hint=f"Reviewed in {found.location}; delete the record to check the example again.",
            location=record.location(),
        )


def check_doc_exceptions(
    loaded: LoadedDispositions,
    examples: Iterable[ExampleRecord],
    shown: Callable[[str], str],
) -> DocReview:
    """Match every doc exception to the documentation examples by exact file and text.

    ``shown`` turns a record's ``file`` (relative to the configuration's folder) into the file as
    outputs show it, which is how each example names its file. A record that matches no example
    is stale; a second record for the same file and text is a duplicate.
    """
    review = DocReview()
    # Every example of no catalog tool (documentation, help text) names its file and its text.
    present = {(record.origin.file, record.text) for record in examples if record.tool is None}
    for record in loaded.doc_exceptions:
        value = record.value
        key = (shown(value.file), value.command)
        earlier = review.excepted.get(key)
        if earlier is not None:
            review.diagnostics.append(
                record.problem(
                    DOC_EXCEPTION_DUPLICATE,
                    f"the same example is already excepted at {earlier.location}",
                    "Keep one record per example.",
                )
            )
        elif key not in present:
            review.diagnostics.append(
                record.problem(
                    DOC_EXCEPTION_STALE,
                    "no documentation example of the file has exactly this text",
                    "The example was edited or removed: it is checked again. Review its current "
                    "text and record that, or delete this record.",
                )
            )
        else:
            review.excepted[key] = record
    return review


def shown_path(path: Sequence[str]) -> str:
    """A command path as reviewers write it (the program's own path has no words)."""
    return " ".join(path) or "(the program itself)"


def has_wildcard(path: Sequence[str]) -> bool:
    """Whether a path uses wildcard characters, which an exact record never may."""
    return any(_WILDCARD.search(word) for word in path)


def exact_command(contract: Contract, path: Sequence[str]) -> CommandNode | None:
    """The command at exactly ``path`` by primary names (an alias does not count), if any."""
    node = contract.root
    for word in path:
        if word not in node.names:
            return None
        node = node.children[word]
    return node


def _uncovered(
    contract: Contract,
    excluded: set[tuple[str, ...]],
    catalog_tools: Callable[[], Location | None] | None,
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    where: Location | None = None
    for node in contract.runnable_leaves():
        if node.tool is not None or node.path in excluded:
            continue
        if where is None and catalog_tools is not None:
            where = catalog_tools()
        shown = shown_path(node.path)
        found.append(
            UNCOVERED_COMMAND.diagnostic(
                message=f"the command '{' '.join([contract.program, *node.path])}' has no tool "
                "and no exclusion",
                hint=f"Add a tool with command {list(node.path)}, or run "
                f"`exampleguard dispositions exclude {shown} --reason ...`.",
                location=where,
            )
        )
    return found


# -- writing records ----------------------------------------------------------------------------

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")
_MAX_NAME = 120


class RecordError(ValueError):
    """A record cannot be written; the message says why, naming the record and the file."""


def disposition_file(folder: Path, tool_id: str) -> Path:
    """The file a tool's dispositions are written to: ``dispositions/<tool-id>.toml``.

    The tool id is data, never a path: every character outside ``[A-Za-z0-9._-]`` becomes ``_``
    and leading dots are dropped, so no id can name a file outside the folder.
    """
    name = _SAFE_NAME.sub("_", tool_id).lstrip(".") or "tool"
    if name in (EXCLUSIONS_FILE.removesuffix(".toml"), DOC_EXCEPTIONS_FILE.removesuffix(".toml")):
        name = f"{name}_"
    if len(name) > _MAX_NAME:
        # File names have a length limit (255 bytes on most filesystems); a long id keeps a
        # readable head and a digest that tells ids with the same head apart.
        digest = hashlib.sha256(tool_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[: _MAX_NAME - 17]}-{digest}"
    path = folder / f"{name}.toml"
    if path.parent != folder:
        raise RecordError(f"tool id {tool_id!r} cannot be turned into a file name")
    return path


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (JSON's escapes are TOML's, but DEL must be escaped)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_disposition(disposition: Disposition) -> str:
    """The ``[[disposition]]`` block for one record, as ``dispositions add`` writes it."""
    lines = [
        "[[disposition]]",
        f"tool = {toml_string(disposition.tool)}",
        f"example = {disposition.example}",
        f"reason_code = {toml_string(disposition.reason_code)}",
        f"reason = {toml_string(disposition.reason)}",
    ]
    if disposition.reviewer is not None:
        lines.append(f"reviewer = {toml_string(disposition.reviewer)}")
    if disposition.evidence:
        lines.append(f"evidence = [{', '.join(toml_string(e) for e in disposition.evidence)}]")
    if disposition.command is not None:
        lines.append(f"command = {toml_string(disposition.command)}")
    return "\n".join(lines) + "\n"


def render_exclusion(exclusion: Exclusion) -> str:
    """The ``[[exclusion]]`` block for one record, as ``dispositions exclude`` writes it."""
    lines = [
        "[[exclusion]]",
        f"path = [{', '.join(toml_string(word) for word in exclusion.path)}]",
        f"reason = {toml_string(exclusion.reason)}",
    ]
    if exclusion.reviewer is not None:
        lines.append(f"reviewer = {toml_string(exclusion.reviewer)}")
    return "\n".join(lines) + "\n"


def append_record(path: Path, block: str, *, root: Path, kind: str) -> None:
    """Append ``block`` to ``path`` keeping every existing byte, atomically and under a lock.

    The lock is on the folder: the target itself is replaced by a rename, so a lock on it would
    protect nothing. The old text is read inside the lock, so two concurrent writers both land.
    The result is parsed before it replaces the file: a write that would leave invalid TOML is
    refused.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _refuse_escape(folder, root, str(folder))
    except SourceError as error:
        raise RecordError(error.diagnostic.message) from None
    with locked(folder):
        old = _current_text(path) if path.exists() or path.is_symlink() else ""
        newline = "\r\n" if "\r\n" in old else "\n"
        separator = "" if not old else (newline if old.endswith("\n") else newline * 2)
        new = f"{old}{separator}{block.replace(chr(10), newline)}"
        try:
            records = tomllib.loads(new).get(kind, [])
        except tomllib.TOMLDecodeError as error:
            raise RecordError(
                f"{path.name} would not be valid TOML after the write: {error}"
            ) from None
        if not records:
            raise RecordError(f"{path.name}: the new record could not be read back")
        write_atomically(path, new)


def _current_text(path: Path) -> str:
    """The text of a record file about to be rewritten (under the folder's lock)."""
    if path.is_symlink():
        raise RecordError(f"{path.name} is a symlink; refusing to replace it")
    try:
        # Bytes, not read_text: newline translation would rewrite a CRLF file's old lines.
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path.name} is not UTF-8 text; refusing to rewrite it") from None
    except OSError as error:
        raise RecordError(f"cannot read {path.name}: {error.strerror}") from None


def rewrite_disposition(
    path: Path, index: int, *, root: Path, command: str | None = None, remove: bool = False
) -> None:
    """Edit the ``index``-th disposition of ``path`` in place, keeping every other byte.

    With ``command``, its ``command`` value is replaced (the record re-pointed at the example's
    current text); with ``remove``, its block goes, up to the next record (comment lines right
    above the next record stay with it). Atomic and under the folder's lock, like
    :func:`append_record`, and the result is parsed before it replaces the file: it must hold
    exactly the old records with that one changed, or nothing is written.
    """
    folder = path.parent
    try:
        _refuse_escape(path, root, path.name)
    except SourceError as error:
        raise RecordError(error.diagnostic.message) from None
    with locked(folder):
        old = _current_text(path)
        new = _edited(old, index, command=command, remove=remove, name=path.name)
        try:
            before = tomllib.loads(old).get("disposition", [])
            after = tomllib.loads(new).get("disposition", [])
        except tomllib.TOMLDecodeError as error:
            raise RecordError(f"{path.name} would not be valid TOML: {error}") from None
        expected = [dict(record) for record in before]
        if remove:
            del expected[index]
        else:
            expected[index]["command"] = command
        if after != expected:
            raise RecordError(f"{path.name}: the edit could not be made without changing more")
        write_atomically(path, new)


def _edited(text: str, index: int, *, command: str | None, remove: bool, name: str) -> str:
    """``text`` with the ``index``-th disposition removed or its command replaced."""
    document = Document(Path(name), name, text, None, "toml")
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def offset(key: tuple[str | int, ...], *, at_key: bool = False) -> int | None:
        where = document.position(key, at_key=at_key)
        if where is None:
            return None
        return starts[where[0] - 1] + where[1] - 1

    block = offset(("disposition", index))
    if block is None or offset(("disposition", index), at_key=True) != block:
        raise RecordError(f"{name}: record {index} is not where the file says")
    following = offset(("disposition", index + 1))
    end = len(text) if following is None or following <= block else following
    if remove:
        return text[:block] + _kept_comments(text[block:end]) + text[end:]
    if command is None:
        raise RecordError(f"{name}: nothing to change in record {index}")
    value = offset(("disposition", index, "command"))
    if value is None or not block <= value < end:
        # No `command` yet (a record written by hand): it goes after the record's last line.
        body = text[block:end].rstrip("\r\n")
        newline = "\r\n" if "\r\n" in text else "\n"
        line = f"{newline}command = {toml_string(command)}"
        return text[: block + len(body)] + line + text[block + len(body) :]
    return text[:value] + toml_string(command) + text[_literal_end(text, value, name) :]


def _kept_comments(block: str) -> str:
    """What stays of a removed record's text: the comment lines that introduce the next one."""
    lines = block.splitlines(keepends=True)
    kept: list[str] = []
    for line in reversed(lines):
        if not line.lstrip().startswith("#"):
            break
        kept.insert(0, line)
    return "".join(kept)


def _literal_end(text: str, start: int, name: str) -> int:
    """Where the TOML string literal starting at ``start`` ends (just past its closing quote)."""
    for quote in ('"""', "'''", '"', "'"):
        if not text.startswith(quote, start):
            continue
        position = start + len(quote)
        while position < len(text):
            if quote[0] == '"' and text[position] == "\\":
                position += 2
                continue
            if text.startswith(quote, position):
                # A multi-line string may end in up to two more quotes of its own.
                end = position + len(quote)
                while len(quote) == 3 and text.startswith(quote[0], end) and end - position < 5:
                    end += 1
                return end
            if len(quote) == 1 and text[position] == "\n":
                break
            position += 1
        break
    raise RecordError(f"{name}: the record's command is not a string this edit can replace")
