"""``exampleguard dispositions add|update|remove|exclude|list|check``: the reviewer records.

``add`` validates a new disposition with the very checks ``validate`` runs on the records on file
(:func:`~exampleguard._dispositions.check_dispositions`, the new record after the others), so
what ``add`` writes is what ``validate`` accepts. ``update`` re-points a stale disposition at its
example's current text through the same checks, and ``remove`` deletes one; both edit the file
in place, keeping every other byte, and like ``add`` they write unless ``--dry-run`` is given.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from exampleguard._codes import (
    DISPOSITION_INVALID,
    DOC_EXCEPTION_DUPLICATE,
    DOC_EXCEPTION_STALE,
    EXCLUSION_DUPLICATE,
    EXCLUSION_INVALID,
    EXCLUSION_STALE,
    FILE_UNREADABLE,
    Code,
    Stage,
    lookup,
)
from exampleguard._commands._outcome import TextOutcome, refuse
from exampleguard._commands.validate import ValidateOutcome, run_evaluation
from exampleguard._config import Config
from exampleguard._contract import EffectiveTool
from exampleguard._contractbuild import build_contract
from exampleguard._dispositions.check import (
    check_dispositions,
    check_doc_exceptions,
    exact_command,
    review_records,
)
from exampleguard._dispositions.records import (
    EXCLUSIONS_FILE,
    Disposition,
    DocException,
    Exclusion,
    LoadedDispositions,
    Record,
    has_wildcard,
    is_concrete_reason,
    shown_path,
)
from exampleguard._dispositions.write import (
    RecordError,
    append_record,
    disposition_file,
    render_disposition,
    render_exclusion,
    rewrite_disposition,
    toml_string,
)
from exampleguard._pipeline import InputError, Inputs, load_inputs
from exampleguard._report import build_report, located

AnyRecord = Record[Disposition] | Record[Exclusion] | Record[DocException]
"""A reviewer record of any kind, as ``list`` shows them."""

__all__ = [
    "add_disposition",
    "add_exclusion",
    "check_records",
    "list_records",
    "remove_disposition",
    "update_disposition",
]


def add_disposition(
    config: Config,
    *,
    tool_id: str,
    index: int,
    reason_code: str,
    reason: str,
    reviewer: str | None,
    evidence: list[str],
    dry_run: bool,
) -> TextOutcome:
    """``exampleguard dispositions add``: validate the record, then append it (or show it)."""
    unreadable = _not_text(
        DISPOSITION_INVALID,
        tool=tool_id,
        reason_code=reason_code,
        reason=reason,
        reviewer=reviewer,
        evidence=" ".join(evidence),
    )
    if unreadable is not None:
        return unreadable
    try:
        inputs = load_inputs(config, with_counts=False)
        path = disposition_file(config.dispositions_path, tool_id)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    except RecordError as error:
        return refuse(DISPOSITION_INVALID, str(error))
    contract = build_contract(inputs.catalog, inputs.tree, inputs.argument_files)
    disposition = Disposition(
        tool=tool_id,
        example=index,
        reason_code=reason_code,
        reason=reason,
        reviewer=reviewer,
        evidence=evidence,
        command=_example_text(inputs, contract.tools, tool_id, index),
    )
    review = check_dispositions(
        inputs.records,
        contract.tools,
        inputs.examples,
        config.settings.reason_codes,
        new=Record(disposition, None, 0, file=config.display(path)),
    )
    if review.refused:
        return TextOutcome(unusable=review.refused)
    block = render_disposition(disposition)
    return _append(config, path, block, kind="disposition", dry_run=dry_run)


def _example_text(inputs: Inputs, tools: Sequence[EffectiveTool], tool_id: str, index: int) -> str:
    """The current text of the example a new disposition is for: what it is reviewed for.

    Empty when there is no such example; the checks then refuse the record for that.
    """
    # The last tool of an id is the one records are checked against (`duplicate-tool` aside).
    tool = {tool.id: tool for tool in tools}.get(tool_id)
    records = inputs.examples.of_tool(tool.index) if tool is not None else ()
    return records[index].text if index < len(records) else ""


def update_disposition(config: Config, *, tool_id: str, index: int, dry_run: bool) -> TextOutcome:
    """``exampleguard dispositions update``: re-point a stale disposition at the example.

    The change is shown (the old and the new ``command``); the updated record goes through the
    checks ``add`` runs, and with ``dry_run`` nothing is written. A record that already matches
    its example is left alone (exit 0); one whose example is gone is refused: remove it.
    """
    found = _one_disposition(config, tool_id, index)
    if isinstance(found, TextOutcome):
        return found
    inputs, record, contract_tools = found
    current = _example_text(inputs, contract_tools, tool_id, index)
    where = f"{record.location}: disposition for {tool_id}[{index}]"
    if not current:
        return refuse(
            DISPOSITION_INVALID,
            f"{tool_id} has no example {index} any more; nothing to re-point the record at",
            record.location,
            hint=f"Remove it: `exampleguard dispositions remove {tool_id} {index}`.",
        )
    if record.value.command == current:
        return TextOutcome(f"{where} already matches the example; nothing to update\n")
    updated = record.value.model_copy(update={"command": current})
    others = LoadedDispositions(
        [r for r in inputs.records.dispositions if r is not record], inputs.records.exclusions
    )
    review = check_dispositions(
        others,
        contract_tools,
        inputs.examples,
        config.settings.reason_codes,
        new=Record(updated, None, 0, file=record.location.file),
    )
    if review.refused:
        return TextOutcome(unusable=review.refused)
    old = toml_string(record.value.command) if record.value.command is not None else "(none)"
    change = f"{where}\n- command = {old}\n+ command = {toml_string(current)}\n"
    if dry_run:
        return TextOutcome(f"# would update\n{change}")
    return _rewrite(config, record, f"updated {change}", command=current)


def remove_disposition(config: Config, *, tool_id: str, index: int, dry_run: bool) -> TextOutcome:
    """``exampleguard dispositions remove``: delete one disposition (with ``dry_run``, show it)."""
    found = _one_disposition(config, tool_id, index)
    if isinstance(found, TextOutcome):
        return found
    _, record, _ = found
    shown = f"the disposition for {tool_id}[{index}] at {record.location}"
    note = (
        "The dry-run counts change with it: run `exampleguard counts --write` and commit the "
        "counts file for review.\n"
    )
    if dry_run:
        return TextOutcome(f"# would remove {shown}\n{render_disposition(record.value)}")
    return _rewrite(config, record, f"removed {shown}\n{note}", remove=True)


def _one_disposition(
    config: Config, tool_id: str, index: int
) -> TextOutcome | tuple[Inputs, Record[Disposition], list[EffectiveTool]]:
    """The inputs, the one disposition of ``TOOL[INDEX]`` on file, and the contract's tools."""
    unreadable = _not_text(DISPOSITION_INVALID, tool=tool_id)
    if unreadable is not None:
        return unreadable
    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    matches = [
        record
        for record in inputs.records.dispositions
        if record.value.tool == tool_id and record.value.example == index
    ]
    if not matches:
        known = sorted({r.value.tool for r in inputs.records.dispositions})
        close = difflib.get_close_matches(tool_id, known, n=1)
        return refuse(
            DISPOSITION_INVALID,
            f"no disposition for {tool_id}[{index}]",
            hint=f"Did you mean {close[0]}?"
            if close
            else "`exampleguard dispositions list` shows every record.",
        )
    if len(matches) > 1:
        places = ", ".join(str(record.location) for record in matches)
        return refuse(
            DISPOSITION_INVALID,
            f"{len(matches)} dispositions for {tool_id}[{index}] ({places}); edit the file to "
            "keep one",
        )
    contract = build_contract(inputs.catalog, inputs.tree, inputs.argument_files)
    return inputs, matches[0], contract.tools


def _rewrite(
    config: Config,
    record: Record[Disposition],
    done: str,
    *,
    command: str | None = None,
    remove: bool = False,
) -> TextOutcome:
    document = record.document
    if document is None:
        return refuse(FILE_UNREADABLE, "the record has no file")
    shown = document.display
    try:
        rewrite_disposition(
            document.path, record.index, root=config.root, command=command, remove=remove
        )
    except RecordError as error:
        return refuse(FILE_UNREADABLE, f"{shown}: {error}")
    except OSError as error:
        return refuse(FILE_UNREADABLE, f"cannot write {shown}: {error.strerror}")
    return TextOutcome(done)


def add_exclusion(
    config: Config, *, path: list[str], reason: str, reviewer: str | None, dry_run: bool
) -> TextOutcome:
    """``exampleguard dispositions exclude``: validate the exclusion, then append it."""
    unreadable = _not_text(EXCLUSION_INVALID, path=" ".join(path), reason=reason, reviewer=reviewer)
    if unreadable is not None:
        return unreadable
    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    if inputs.tree is None:
        return refuse(
            EXCLUSION_INVALID, "coverage exclusions need a command tree; configure `tree` first"
        )
    shown = shown_path(path)
    if has_wildcard(path):
        return refuse(
            EXCLUSION_INVALID, f"'{shown}' has wildcard characters; exclude one exact command"
        )
    if not is_concrete_reason(reason, ""):
        return refuse(EXCLUSION_INVALID, f"the reason {reason!r} is not concrete")
    node = exact_command(build_contract(inputs.catalog, inputs.tree, inputs.argument_files), path)
    if node is None:
        return refuse(EXCLUSION_INVALID, f"the program has no command '{shown}'")
    if node.is_group or not node.runnable:
        return refuse(EXCLUSION_INVALID, f"'{shown}' is a group, not a runnable command")
    if node.tool is not None:
        return refuse(
            EXCLUSION_STALE, f"the tool {node.tool.id} covers '{shown}'; nothing to exclude"
        )
    for record in inputs.records.exclusions:
        if record.value.path == path:
            return refuse(
                EXCLUSION_DUPLICATE, f"'{shown}' is already excluded at {record.location}"
            )
    block = render_exclusion(Exclusion(path=path, reason=reason, reviewer=reviewer))
    target = config.dispositions_path / EXCLUSIONS_FILE
    return _append(config, target, block, kind="exclusion", dry_run=dry_run)


def _not_text(code: Code, **values: str | None) -> TextOutcome | None:
    """Refuse arguments that are not valid text (undecodable bytes on the command line).

    Such bytes reach Python as lone surrogates; written into a record they would make the file
    unreadable for every later run.
    """
    for option, value in values.items():
        if value is not None and _SURROGATE.search(value):
            name = option.upper() if option in ("tool", "path") else f"--{option.replace('_', '-')}"
            return refuse(code, f"{name} is not valid UTF-8 text: {value!r}")
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _append(config: Config, path: Path, block: str, *, kind: str, dry_run: bool) -> TextOutcome:
    """Append a validated record (or, with ``dry_run``, only show it)."""
    shown = config.display(path)
    if dry_run:
        return TextOutcome(f"# would append to {shown}\n{block}")
    try:
        append_record(path, block, root=config.root, kind=kind)
    except RecordError as error:
        return refuse(FILE_UNREADABLE, f"{shown}: {error}")
    except OSError as error:
        return refuse(FILE_UNREADABLE, f"cannot write {shown}: {error.strerror}")
    return TextOutcome(f"appended to {shown}:\n{block}")


def list_records(config: Config, *, as_json: bool) -> TextOutcome:
    """``exampleguard dispositions list``: every record with its status."""
    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    review = review_records(
        inputs.records,
        build_contract(inputs.catalog, inputs.tree, inputs.argument_files),
        inputs.examples,
        config.settings.reason_codes,
        inputs.catalog.document.region(("tools",)),
    )
    doc_review = check_doc_exceptions(
        inputs.records, inputs.examples.named, lambda file: config.display(config.root / file)
    )
    problems: dict[str, list[str]] = {}
    for diagnostic in (*review.diagnostics, *doc_review.diagnostics):
        place = located(diagnostic)
        if lookup(diagnostic.code).stage is Stage.REVIEW and place:
            problems.setdefault(str(place), []).append(diagnostic.code)
    records: list[AnyRecord] = [
        *inputs.records.dispositions,
        *inputs.records.exclusions,
        *inputs.records.doc_exceptions,
    ]
    statuses = [", ".join(problems.get(str(r.location), [])) or "applies" for r in records]
    if as_json:
        entries = [_entry(record, status) for record, status in zip(records, statuses, strict=True)]
        return TextOutcome(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
    if not records:
        return TextOutcome("no dispositions, exclusions or doc exceptions\n")
    lines = []
    for record, status in zip(records, statuses, strict=True):
        value = record.value
        match value:
            case Disposition():
                subject = f"{value.tool}[{value.example}]  {value.reason_code}"
            case Exclusion():
                subject = f"exclude '{' '.join(value.path)}'"
            case DocException():
                subject = f"except {value.file}: '{value.command}'  {value.reason_code}"
        where = f"{_shown(record)}:{record.location.line}"
        lines.append(f"{where}: {subject}  [{status}]\n    {value.reason}")
    return TextOutcome("\n".join(lines) + "\n")


def _shown(record: AnyRecord) -> str:
    """The record's file, as people are shown it."""
    return record.document.display if record.document is not None else record.file


def _entry(record: AnyRecord, status: str) -> dict[str, object]:
    """What ``list --format json`` says of one record: its fields, its place and its status."""
    value = record.value
    fields: dict[str, object]
    match value:
        case Disposition():
            fields = {
                "kind": "disposition",
                "tool": value.tool,
                "example": value.example,
                "reason_code": value.reason_code,
                "reason": value.reason,
                "reviewer": value.reviewer,
                "evidence": value.evidence,
                "command": value.command,
            }
        case Exclusion():
            fields = {
                "kind": "exclusion",
                "path": value.path,
                "reason": value.reason,
                "reviewer": value.reviewer,
            }
        case DocException():
            fields = {
                "kind": "doc_exception",
                "example_file": value.file,
                "command": value.command,
                "reason_code": value.reason_code,
                "reason": value.reason,
                "reviewer": value.reviewer,
            }
    return {**fields, "file": _shown(record), "line": record.location.line, "status": status}


def check_records(config: Config) -> ValidateOutcome:
    """``exampleguard dispositions check``: only the reviewer-record and coverage checks."""
    evaluation, unusable = run_evaluation(config)
    if evaluation is None:
        return ValidateOutcome(unusable=unusable)
    # Exactly what checking the records found: the dispositions, the exclusions, coverage and
    # the doc exceptions (checked against the documentation examples they are about).
    doc_records = {DOC_EXCEPTION_STALE.name, DOC_EXCEPTION_DUPLICATE.name}
    evaluation.diagnostics = [
        *evaluation.review.diagnostics,
        *(d for d in evaluation.diagnostics if d.code in doc_records),
    ]
    evaluation.examples = []
    return ValidateOutcome(build_report(evaluation), evaluation)
