"""Checking the reviewer records against the contract and the examples: what applies."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from exampleguard._codes import (
    DISPOSITION_DUPLICATE,
    DISPOSITION_INVALID,
    DISPOSITION_STALE,
    DOC_EXAMPLE_EXCEPTED,
    DOC_EXCEPTION_DUPLICATE,
    DOC_EXCEPTION_STALE,
    EXCLUSION_DUPLICATE,
    EXCLUSION_INVALID,
    EXCLUSION_STALE,
    UNCOVERED_COMMAND,
)
from exampleguard._contract import CommandNode, Contract, EffectiveTool
from exampleguard._diagnostics import Diagnostic, Region, plural
from exampleguard._dispositions.records import (
    BUILTIN_REASON_CODES,
    Disposition,
    DocException,
    Exclusion,
    LoadedDispositions,
    Record,
    has_wildcard,
    is_concrete_reason,
    shown_path,
)
from exampleguard._examples import ExampleRecord, Examples

__all__ = [
    "DocReview",
    "Review",
    "check_dispositions",
    "check_doc_exceptions",
    "check_exclusions",
    "exact_command",
    "reason_code_hint",
    "review_records",
]


@dataclass(slots=True)
class Review:
    """The outcome of checking reviewer records: what applies, and every defect found."""

    narrowed: set[tuple[str, int]] = field(default_factory=set)
    excluded: set[tuple[str, ...]] = field(default_factory=set)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    refused: list[Diagnostic] = field(default_factory=list)
    """The defects of a record about to be written (see :func:`check_dispositions`)."""


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


def review_records(
    loaded: LoadedDispositions,
    contract: Contract,
    examples: Examples,
    reason_codes: Mapping[str, str],
    catalog_tools: Region | None = None,
) -> Review:
    """Check the reviewer records (dispositions and coverage exclusions) and nothing else.

    ``catalog_tools`` is where an uncovered command is reported (see :func:`check_exclusions`).
    """
    review = check_dispositions(loaded, contract.tools, examples, reason_codes)
    # A command without a tool is a gap in the catalog's `tools`: that is where it is reported.
    exclusions = check_exclusions(loaded, contract, catalog_tools)
    review.excluded = exclusions.excluded
    review.diagnostics.extend(exclusions.diagnostics)
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
    catalog_tools: Region | None = None,
) -> Review:
    """Check coverage both ways and every exclusion (SPEC 3.5); needs a tree to mean anything.

    ``catalog_tools`` says where an uncovered command is reported (where its tool would go); the
    report builder places it, since finding a place in a large catalog takes a scan.
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
            region=record.region(),
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
    catalog_tools: Region | None,
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for node in contract.runnable_leaves():
        if node.tool is not None or node.path in excluded:
            continue
        shown = shown_path(node.path)
        found.append(
            UNCOVERED_COMMAND.diagnostic(
                message=f"the command '{' '.join([contract.program, *node.path])}' has no tool "
                "and no exclusion",
                hint=f"Add a tool with command {list(node.path)}, or run "
                f"`exampleguard dispositions exclude {shown} --reason ...`.",
                region=catalog_tools,
            )
        )
    return found
