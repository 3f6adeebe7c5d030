"""What each CLI command does, as functions that return data and exit codes.

The CLI parses options and prints; these functions load, check and render. They never print,
never call ``sys.exit``, and never change the working directory or the environment, so tests and
the pytest plugin call them directly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exampleguard.config import Config, ConfigError, load_config
from exampleguard.diagnostics import Diagnostic, Location, Severity
from exampleguard.pipeline import Evaluation, InputError, evaluate, load_inputs
from exampleguard.report import build_report

__all__ = [
    "TextOutcome",
    "ValidateOutcome",
    "add_disposition",
    "add_exclusion",
    "check_records",
    "count",
    "format_schema",
    "list_records",
    "shard_of",
    "show_tree",
    "tool_schema",
    "validate",
]


@dataclass(slots=True)
class ValidateOutcome:
    """A validation run: report data, or the reasons it could not be evaluated."""

    report: dict[str, Any] = field(default_factory=dict)
    evaluation: Evaluation | None = None
    unusable: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class TextOutcome:
    """A command whose result is text and an exit code (or reasons it could not run)."""

    text: str = ""
    exit_code: int = 0
    unusable: list[Diagnostic] = field(default_factory=list)


def shard_of(tool_id: str, total: int) -> int:
    """The 1-based shard a tool belongs to: stable across runs, machines and Python versions."""
    digest = hashlib.sha256(tool_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def run_evaluation(
    config: Config, *, shard: tuple[int, int] | None = None
) -> tuple[Evaluation | None, list[Diagnostic]]:
    """Load and evaluate; return the evaluation or the structure errors that prevent it."""
    try:
        inputs = load_inputs(config, with_counts=shard is None)
    except InputError as error:
        return None, error.diagnostics
    if shard is None:
        return evaluate(inputs), []
    index, total = shard
    evaluation = evaluate(
        inputs,
        check_counts=False,
        select=lambda tool: shard_of(tool.id, total) == index,
        repository_checks=index == 1,
    )
    return evaluation, []


def validate(config: Config, *, shard: tuple[int, int] | None = None) -> ValidateOutcome:
    """``exampleguard validate``."""
    evaluation, unusable = run_evaluation(config, shard=shard)
    if evaluation is None:
        return ValidateOutcome(unusable=unusable)
    return ValidateOutcome(build_report(evaluation, shard=shard), evaluation)


def count(config: Config, *, write: bool) -> TextOutcome:
    """``exampleguard counts [--write]``: the figures, and with ``write`` the file rewritten.

    ``--write`` exits 0 whatever the verdicts: it records how much is checked, not whether it
    passes. Structure errors still stop it (exit 2) — counts of an unreadable catalog mean nothing.
    """
    from exampleguard.counts import render_counts  # noqa: PLC0415
    from exampleguard.files import locked, write_atomically  # noqa: PLC0415

    try:
        inputs = load_inputs(config, with_counts=not write)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    evaluation = evaluate(inputs, check_counts=not write)
    text = render_counts(evaluation.counts)
    path = config.counts_path
    display = config.display(path)
    if not write:
        drift = [d for d in evaluation.diagnostics if d.code in ("counts-drift", "counts-missing")]
        summary = "".join(f"{d.message}\n" for d in drift)
        return TextOutcome(text + summary, 1 if drift else 0)
    try:
        with locked(path.with_name(f".{path.name}.lock")):
            write_atomically(path, text)
    except OSError as error:
        return TextOutcome(
            unusable=[
                Diagnostic(
                    code="file-unreadable",
                    severity=Severity.ERROR,
                    message=f"cannot write {display}: {error.strerror}",
                    location=Location(display),
                )
            ]
        )
    return TextOutcome(text + f"wrote {display}\n", 0)


def show_tree(
    config_path: Path | None,
    spec_text: str | None,
    *,
    as_json: bool,
    program: str | None,
    color: bool,
) -> TextOutcome:
    """``exampleguard tree``: the tree named by ``spec_text`` or by the configuration."""
    from exampleguard.report.tree import render_tree  # noqa: PLC0415
    from exampleguard.sources import SourceError  # noqa: PLC0415
    from exampleguard.tree import load_tree, parse_tree_spec  # noqa: PLC0415

    root = Path.cwd()
    timeout = 60.0
    if spec_text is None:
        try:
            config = load_config(config_path, root)
        except ConfigError as error:
            return TextOutcome(unusable=[error.diagnostic])
        if config.settings.tree is None:
            return TextOutcome(
                unusable=[
                    Diagnostic(
                        code="config-invalid",
                        severity=Severity.ERROR,
                        message=f"{config.document.display} configures no `tree`; pass --tree SPEC",
                        location=config.location(),
                    )
                ]
            )
        spec_text, root, timeout = (
            config.settings.tree,
            config.root,
            config.settings.tree_timeout,
        )
        if program is None:
            program = _catalog_program(config)
    try:
        spec = parse_tree_spec(spec_text, root)
    except ValueError as error:
        return TextOutcome(
            unusable=[
                Diagnostic(code="config-invalid", severity=Severity.ERROR, message=str(error))
            ]
        )
    try:
        loaded, _ = load_tree(spec, root=root, display=spec_text, timeout=timeout, program=program)
    except SourceError as error:
        return TextOutcome(unusable=[error.diagnostic])
    if as_json:
        data = loaded.model_dump(mode="json", exclude_defaults=True)
        data["format"] = loaded.format
        return TextOutcome(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return TextOutcome(render_tree(loaded, color=color))


def _catalog_program(config: Config) -> str | None:
    # The tree's own name for the program is a guess (a function or module name); the catalog
    # knows what agents type.
    from exampleguard.catalog import load_catalog  # noqa: PLC0415
    from exampleguard.sources import SourceError  # noqa: PLC0415

    try:
        return load_catalog(
            config.catalog_path, config.display(config.catalog_path)
        ).catalog.program
    except SourceError:
        return None


def format_schema(kind: str) -> TextOutcome:
    """``exampleguard schema KIND``: the JSON Schema generated from the format's model."""
    from exampleguard.schemas import schema_text  # noqa: PLC0415

    return TextOutcome(schema_text(kind))


def tool_schema(config: Config, tool_id: str) -> TextOutcome:
    """``exampleguard schema tool ID``: the strict argument schema of one tool."""
    from exampleguard.contract import build_contract  # noqa: PLC0415
    from exampleguard.toolschema import argument_schema  # noqa: PLC0415

    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    contract = build_contract(inputs.catalog, inputs.tree)
    tool = next((t for t in contract.tools if t.id == tool_id), None)
    if tool is None:
        known = ", ".join(t.id for t in contract.tools[:10])
        return TextOutcome(
            unusable=[
                Diagnostic(
                    code="config-invalid",
                    severity=Severity.ERROR,
                    message=f"the catalog has no tool {tool_id!r} (tools: {known})",
                )
            ]
        )
    return TextOutcome(json.dumps(argument_schema(tool), indent=2, ensure_ascii=False) + "\n")


# -- reviewer records ---------------------------------------------------------------------------


def _refuse(
    code: str, message: str, location: Location | None = None, hint: str | None = None
) -> TextOutcome:
    """A reviewer command refused: the record's own code, and nothing written (exit 2)."""
    return TextOutcome(
        unusable=[
            Diagnostic(
                code=code,
                severity=Severity.ERROR,
                message=message,
                hint=hint,
                location=location,
            )
        ]
    )


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
    from exampleguard.dispositions import (  # noqa: PLC0415
        BUILTIN_REASON_CODES,
        Disposition,
        RecordError,
        append_record,
        disposition_file,
        is_concrete_reason,
        render_disposition,
    )

    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    tools = {tool.id: tool for tool in inputs.catalog.catalog.tools}
    tool = tools.get(tool_id)
    if tool is None:
        return _refuse("disposition-invalid", f"the catalog has no tool {tool_id!r}")
    if tool.dry_run is None:
        return _refuse(
            "disposition-invalid",
            f"{tool_id} has no reviewed dry-run capability, so there is nothing to narrow",
            hint="Dispositions only narrow dry runs; contract validation is never skipped.",
        )
    if not 0 <= index < len(tool.examples):
        return _refuse(
            "disposition-invalid",
            f"{tool_id} has {len(tool.examples)} example(s); there is no index {index}",
        )
    approved = {**BUILTIN_REASON_CODES, **config.settings.reason_codes}
    if reason_code not in approved:
        return _refuse(
            "disposition-invalid",
            f"reason code {reason_code!r} is not approved",
            hint="Approved codes: " + ", ".join(sorted(approved)),
        )
    if not is_concrete_reason(reason, reason_code):
        return _refuse(
            "disposition-invalid",
            f"the reason {reason!r} is not concrete",
            hint="Say in a sentence what the dry run needs that CI does not have.",
        )
    for record in inputs.records.dispositions:
        if (record.value.tool, record.value.example) == (tool_id, index):
            return _refuse(
                "disposition-duplicate",
                f"{tool_id}[{index}] already has a disposition at {record.location}",
                hint="Edit or delete that record instead.",
            )
    disposition = Disposition(
        tool=tool_id,
        example=index,
        reason_code=reason_code,
        reason=reason,
        reviewer=reviewer,
        evidence=evidence,
        command=tool.examples[index].command,
    )
    block = render_disposition(disposition)
    try:
        path = disposition_file(config.dispositions_path, tool_id)
    except RecordError as error:
        return _refuse("disposition-invalid", str(error))
    shown = config.display(path)
    if dry_run:
        return TextOutcome(f"# would append to {shown}\n{block}")
    try:
        append_record(path, block, root=config.root, kind="disposition")
    except RecordError as error:
        return _refuse("file-unreadable", f"{shown}: {error}")
    except OSError as error:
        return _refuse("file-unreadable", f"cannot write {shown}: {error.strerror}")
    return TextOutcome(f"appended to {shown}:\n{block}")


def add_exclusion(
    config: Config, *, path: list[str], reason: str, reviewer: str | None, dry_run: bool
) -> TextOutcome:
    """``exampleguard dispositions exclude``: validate the exclusion, then append it."""
    from exampleguard.contract import build_contract  # noqa: PLC0415
    from exampleguard.dispositions import (  # noqa: PLC0415
        EXCLUSIONS_FILE,
        Exclusion,
        RecordError,
        append_record,
        is_concrete_reason,
        render_exclusion,
    )

    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    if inputs.tree is None:
        return _refuse(
            "exclusion-invalid", "coverage exclusions need a command tree; configure `tree` first"
        )
    shown_path = " ".join(path) or "(the program itself)"
    if any(char in word for word in path for char in "*?[]{}"):
        return _refuse(
            "exclusion-invalid",
            f"'{shown_path}' has wildcard characters; exclude one exact command",
        )
    if not is_concrete_reason(reason, ""):
        return _refuse("exclusion-invalid", f"the reason {reason!r} is not concrete")
    contract = build_contract(inputs.catalog, inputs.tree)
    node = contract.root
    for word in path:
        if word not in node.names:
            return _refuse("exclusion-invalid", f"the program has no command '{shown_path}'")
        node = node.children[word]
    if node.is_group or not node.runnable:
        return _refuse("exclusion-invalid", f"'{shown_path}' is a group, not a runnable command")
    if node.tool is not None:
        return _refuse(
            "exclusion-stale", f"the tool {node.tool.id} covers '{shown_path}'; nothing to exclude"
        )
    for record in inputs.records.exclusions:
        if record.value.path == path:
            return _refuse(
                "exclusion-duplicate", f"'{shown_path}' is already excluded at {record.location}"
            )
    block = render_exclusion(Exclusion(path=path, reason=reason, reviewer=reviewer))
    target = config.dispositions_path / EXCLUSIONS_FILE
    shown = config.display(target)
    if dry_run:
        return TextOutcome(f"# would append to {shown}\n{block}")
    try:
        append_record(target, block, root=config.root, kind="exclusion")
    except RecordError as error:
        return _refuse("file-unreadable", f"{shown}: {error}")
    except OSError as error:
        return _refuse("file-unreadable", f"cannot write {shown}: {error.strerror}")
    return TextOutcome(f"appended to {shown}:\n{block}")


def list_records(config: Config, *, as_json: bool) -> TextOutcome:
    """``exampleguard dispositions list``: every record with its status."""
    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    evaluation = evaluate(inputs, check_counts=False)
    problems: dict[str, list[str]] = {}
    for diagnostic in evaluation.diagnostics:
        if diagnostic.code.startswith(("disposition-", "exclusion-")) and diagnostic.location:
            problems.setdefault(str(diagnostic.location), []).append(diagnostic.code)
    entries: list[dict[str, Any]] = []
    for record in inputs.records.dispositions:
        value = record.value
        where = str(record.location)
        entries.append(
            {
                "kind": "disposition",
                "tool": value.tool,
                "example": value.example,
                "reason_code": value.reason_code,
                "reason": value.reason,
                "reviewer": value.reviewer,
                "evidence": value.evidence,
                "command": value.command,
                "file": record.document.display,
                "line": record.location.line,
                "status": ", ".join(problems.get(where, [])) or "applies",
            }
        )
    for exclusion_record in inputs.records.exclusions:
        value_ = exclusion_record.value
        where = str(exclusion_record.location)
        entries.append(
            {
                "kind": "exclusion",
                "path": value_.path,
                "reason": value_.reason,
                "reviewer": value_.reviewer,
                "file": exclusion_record.document.display,
                "line": exclusion_record.location.line,
                "status": ", ".join(problems.get(where, [])) or "applies",
            }
        )
    if as_json:
        return TextOutcome(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
    if not entries:
        return TextOutcome("no dispositions or exclusions\n")
    lines = []
    for entry in entries:
        where = f"{entry['file']}:{entry['line']}"
        if entry["kind"] == "disposition":
            subject = f"{entry['tool']}[{entry['example']}]  {entry['reason_code']}"
        else:
            subject = f"exclude '{' '.join(entry['path'])}'"
        lines.append(f"{where}: {subject}  [{entry['status']}]\n    {entry['reason']}")
    return TextOutcome("\n".join(lines) + "\n")


def check_records(config: Config) -> ValidateOutcome:
    """``exampleguard dispositions check``: only the reviewer-record and coverage checks."""
    evaluation, unusable = run_evaluation(config)
    if evaluation is None:
        return ValidateOutcome(unusable=unusable)
    kept = [
        d
        for d in evaluation.diagnostics
        if d.code.startswith(("disposition-", "exclusion-")) or d.code == "uncovered-command"
    ]
    evaluation.diagnostics = kept
    evaluation.examples = []
    return ValidateOutcome(build_report(evaluation), evaluation)
