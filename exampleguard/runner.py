"""What each CLI command does, as functions that return data and exit codes.

The CLI parses options and prints; these functions load, check and render. They never print,
never call ``sys.exit``, and never change the working directory or the environment, so tests and
the pytest plugin call them directly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exampleguard.codes import (
    CONFIG_INVALID,
    DISPOSITION_DUPLICATE,
    DISPOSITION_INVALID,
    EXCLUSION_DUPLICATE,
    EXCLUSION_INVALID,
    EXCLUSION_STALE,
    FILE_INVALID,
    FILE_UNREADABLE,
    ISOLATION_UNAVAILABLE,
    Code,
    Stage,
    lookup,
)
from exampleguard.config import Config, ConfigError, load_config
from exampleguard.diagnostics import Diagnostic, Location

if TYPE_CHECKING:
    from exampleguard.pipeline import Evaluation
    from exampleguard.report import Report

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
    """A validation run: its report, or the reasons it could not be evaluated."""

    report: Report | None = None
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
    from exampleguard.pipeline import InputError, evaluate, load_inputs  # noqa: PLC0415

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
    from exampleguard.report import build_report  # noqa: PLC0415

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
    from exampleguard.pipeline import InputError, evaluate, load_inputs  # noqa: PLC0415

    try:
        inputs = load_inputs(config, with_counts=not write)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    evaluation = evaluate(inputs, check_counts=not write)
    text = render_counts(evaluation.counts)
    path = config.counts_path
    display = config.display(path)
    if not write:
        drift = [d for d in evaluation.diagnostics if lookup(d.code).stage is Stage.COUNTS]
        summary = "".join(f"{d.message}\n" for d in drift)
        return TextOutcome(text + summary, 1 if drift else 0)
    try:
        with locked(path.parent):
            write_atomically(path, text)
    except OSError as error:
        return _refuse(
            FILE_UNREADABLE, f"cannot write {display}: {error.strerror}", Location(display)
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
    from exampleguard.documents import SourceError  # noqa: PLC0415
    from exampleguard.report.tree import render_tree  # noqa: PLC0415
    from exampleguard.tree import load_judged_tree, parse_tree_spec  # noqa: PLC0415

    root = Path.cwd()
    timeout = 60.0
    paths: list[list[str]] = []
    if spec_text is None:
        try:
            config = load_config(config_path, root)
        except ConfigError as error:
            return TextOutcome(unusable=[error.diagnostic])
        if config.settings.tree is None:
            return _refuse(
                CONFIG_INVALID,
                f"{config.document.display} configures no `tree`; pass --tree SPEC",
                config.location(),
            )
        spec_text, root, timeout = (
            config.settings.tree,
            config.root,
            config.settings.tree_timeout,
        )
        catalog_program, paths = _catalog_program(config)
        if program is None:
            program = catalog_program
    try:
        spec = parse_tree_spec(spec_text, root)
    except ValueError as error:
        return _refuse(CONFIG_INVALID, str(error))
    try:
        # The catalog's declared paths are probed, so the snapshot carries the aliases a group
        # routes dynamically.
        loaded = load_judged_tree(
            spec, root=root, display=spec_text, timeout=timeout, program=program, paths=paths
        ).tree
    except SourceError as error:
        return TextOutcome(unusable=[error.diagnostic])
    if as_json:
        data = loaded.model_dump(mode="json", exclude_defaults=True)
        data["format"] = loaded.format
        return TextOutcome(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return TextOutcome(render_tree(loaded, color=color))


def _catalog_program(config: Config) -> tuple[str | None, list[list[str]]]:
    # The tree's own name for the program is a guess (a function or module name); the catalog
    # knows what agents type, and which command paths and aliases it declares.
    from exampleguard.catalog import load_catalog  # noqa: PLC0415
    from exampleguard.documents import SourceError  # noqa: PLC0415

    try:
        catalog = load_catalog(config.catalog_path, config.display(config.catalog_path)).catalog
    except SourceError:
        return None, []
    paths = [list(words) for tool in catalog.tools for words in (tool.command, *tool.aliases)]
    return catalog.program, paths


def format_schema(kind: str) -> TextOutcome:
    """``exampleguard schema KIND``: the JSON Schema generated from the format's model."""
    from exampleguard.schemas import schema_text  # noqa: PLC0415

    return TextOutcome(schema_text(kind))


def tool_schema(config: Config, tool_id: str) -> TextOutcome:
    """``exampleguard schema tool ID``: the strict argument schema of one tool."""
    from exampleguard.contract import build_contract  # noqa: PLC0415
    from exampleguard.pipeline import InputError, load_inputs  # noqa: PLC0415
    from exampleguard.toolschema import argument_schema  # noqa: PLC0415

    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    contract = build_contract(inputs.catalog, inputs.tree)
    tool = next((t for t in contract.tools if t.id == tool_id), None)
    if tool is None:
        known = ", ".join(t.id for t in contract.tools[:10])
        return _refuse(CONFIG_INVALID, f"the catalog has no tool {tool_id!r} (tools: {known})")
    return TextOutcome(json.dumps(argument_schema(tool), indent=2, ensure_ascii=False) + "\n")


# -- reviewer records ---------------------------------------------------------------------------


def _refuse(
    code: Code, message: str, location: Location | None = None, hint: str | None = None
) -> TextOutcome:
    """A command refused with one error diagnostic: nothing run or written (exit 2)."""
    return TextOutcome(unusable=[code.diagnostic(message, hint=hint, location=location)])


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
        disposition_file,
        is_concrete_reason,
        render_disposition,
    )
    from exampleguard.pipeline import InputError, load_inputs  # noqa: PLC0415

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
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    tools = {tool.id: tool for tool in inputs.catalog.catalog.tools}
    tool = tools.get(tool_id)
    if tool is None:
        return _refuse(DISPOSITION_INVALID, f"the catalog has no tool {tool_id!r}")
    if tool.dry_run is None:
        return _refuse(
            DISPOSITION_INVALID,
            f"{tool_id} has no reviewed dry-run capability, so there is nothing to narrow",
            hint="Dispositions only narrow dry runs; contract validation is never skipped.",
        )
    if not 0 <= index < len(tool.examples):
        return _refuse(
            DISPOSITION_INVALID,
            f"{tool_id} has {len(tool.examples)} example(s); there is no index {index}",
        )
    approved = {**BUILTIN_REASON_CODES, **config.settings.reason_codes}
    if reason_code not in approved:
        return _refuse(
            DISPOSITION_INVALID,
            f"reason code {reason_code!r} is not approved",
            hint="Approved codes: " + ", ".join(sorted(approved)),
        )
    if not is_concrete_reason(reason, reason_code):
        return _refuse(
            DISPOSITION_INVALID,
            f"the reason {reason!r} is not concrete",
            hint="Say in a sentence what the dry run needs that CI does not have.",
        )
    for record in inputs.records.dispositions:
        if (record.value.tool, record.value.example) == (tool_id, index):
            return _refuse(
                DISPOSITION_DUPLICATE,
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
        return _refuse(DISPOSITION_INVALID, str(error))
    return _append(config, path, block, kind="disposition", dry_run=dry_run)


def add_exclusion(
    config: Config, *, path: list[str], reason: str, reviewer: str | None, dry_run: bool
) -> TextOutcome:
    """``exampleguard dispositions exclude``: validate the exclusion, then append it."""
    from exampleguard.contract import build_contract  # noqa: PLC0415
    from exampleguard.dispositions import (  # noqa: PLC0415
        EXCLUSIONS_FILE,
        Exclusion,
        exact_command,
        has_wildcard,
        is_concrete_reason,
        render_exclusion,
        shown_path,
    )
    from exampleguard.pipeline import InputError, load_inputs  # noqa: PLC0415

    unreadable = _not_text(EXCLUSION_INVALID, path=" ".join(path), reason=reason, reviewer=reviewer)
    if unreadable is not None:
        return unreadable
    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    if inputs.tree is None:
        return _refuse(
            EXCLUSION_INVALID, "coverage exclusions need a command tree; configure `tree` first"
        )
    shown = shown_path(path)
    if has_wildcard(path):
        return _refuse(
            EXCLUSION_INVALID,
            f"'{shown}' has wildcard characters; exclude one exact command",
        )
    if not is_concrete_reason(reason, ""):
        return _refuse(EXCLUSION_INVALID, f"the reason {reason!r} is not concrete")
    node = exact_command(build_contract(inputs.catalog, inputs.tree), path)
    if node is None:
        return _refuse(EXCLUSION_INVALID, f"the program has no command '{shown}'")
    if node.is_group or not node.runnable:
        return _refuse(EXCLUSION_INVALID, f"'{shown}' is a group, not a runnable command")
    if node.tool is not None:
        return _refuse(
            EXCLUSION_STALE, f"the tool {node.tool.id} covers '{shown}'; nothing to exclude"
        )
    for record in inputs.records.exclusions:
        if record.value.path == path:
            return _refuse(
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
            return _refuse(code, f"{name} is not valid UTF-8 text: {value!r}")
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _append(config: Config, path: Path, block: str, *, kind: str, dry_run: bool) -> TextOutcome:
    """Append a validated record (or, with ``dry_run``, only show it)."""
    from exampleguard.dispositions import RecordError, append_record  # noqa: PLC0415

    shown = config.display(path)
    if dry_run:
        return TextOutcome(f"# would append to {shown}\n{block}")
    try:
        append_record(path, block, root=config.root, kind=kind)
    except RecordError as error:
        return _refuse(FILE_UNREADABLE, f"{shown}: {error}")
    except OSError as error:
        return _refuse(FILE_UNREADABLE, f"cannot write {shown}: {error.strerror}")
    return TextOutcome(f"appended to {shown}:\n{block}")


def list_records(config: Config, *, as_json: bool) -> TextOutcome:
    """``exampleguard dispositions list``: every record with its status."""
    from exampleguard.contract import build_contract  # noqa: PLC0415
    from exampleguard.pipeline import InputError, load_inputs, review_records  # noqa: PLC0415

    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    review = review_records(inputs, build_contract(inputs.catalog, inputs.tree))
    problems: dict[str, list[str]] = {}
    for diagnostic in review.diagnostics:
        if lookup(diagnostic.code).stage is Stage.REVIEW and diagnostic.location:
            problems.setdefault(str(diagnostic.location), []).append(diagnostic.code)
    records: list[tuple[Any, dict[str, Any]]] = [
        (
            record,
            {
                "kind": "disposition",
                "tool": record.value.tool,
                "example": record.value.example,
                "reason_code": record.value.reason_code,
                "reason": record.value.reason,
                "reviewer": record.value.reviewer,
                "evidence": record.value.evidence,
                "command": record.value.command,
            },
        )
        for record in inputs.records.dispositions
    ]
    records += [
        (
            record,
            {
                "kind": "exclusion",
                "path": record.value.path,
                "reason": record.value.reason,
                "reviewer": record.value.reviewer,
            },
        )
        for record in inputs.records.exclusions
    ]
    entries: list[dict[str, Any]] = []
    for record, fields in records:
        location = record.location
        status = ", ".join(problems.get(str(location), [])) or "applies"
        entries.append({**fields, "file": location.file, "line": location.line, "status": status})
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
    from exampleguard.report import build_report  # noqa: PLC0415

    evaluation, unusable = run_evaluation(config)
    if evaluation is None:
        return ValidateOutcome(unusable=unusable)
    # Exactly what checking the records found: the dispositions, the exclusions and coverage.
    evaluation.diagnostics = list(evaluation.review.diagnostics)
    evaluation.examples = []
    return ValidateOutcome(build_report(evaluation), evaluation)


# -- dry runs -------------------------------------------------------------------------------------


@dataclass(slots=True)
class DryRunOutcome:
    """A dry-run session: its report, and whether it was interrupted or could not run."""

    report: Report | None = None
    interrupted: bool = False
    unusable: list[Diagnostic] = field(default_factory=list)


def dry_run(
    config: Config,
    *,
    jobs: int | None,
    tools: list[str],
    examples: list[tuple[str, int]],
    shard: tuple[int, int] | None,
    progress: Any = None,
    evaluation: Evaluation | None = None,
) -> DryRunOutcome:
    """``exampleguard dryrun``: all of ``validate``, then the eligible examples in the sandbox.

    Everything that could stop the run — structure errors, a missing executable, no isolation,
    a credential-like ``pass_env`` — is found before the first run starts (exit 2, nothing run).
    A caller that has already validated (for the same ``shard``) passes its ``evaluation``.
    """
    import os  # noqa: PLC0415
    import threading  # noqa: PLC0415

    import sandbox  # noqa: PLC0415
    from exampleguard.dryrun import (  # noqa: PLC0415
        DryRunError,
        Selection,
        execute,
        interpreter_paths,
        plan,
        resolve_executable,
    )
    from exampleguard.report import build_report  # noqa: PLC0415

    if evaluation is None:
        evaluation, unusable = run_evaluation(config, shard=shard)
        if evaluation is None:
            return DryRunOutcome(unusable=unusable)
    settings = config.settings.dryrun
    problems: list[Diagnostic] = []
    try:
        sandbox.check_pass_env(settings.pass_env)
    except sandbox.CredentialEnvError as error:
        problems.append(
            CONFIG_INVALID.diagnostic(
                message=str(error),
                hint="Credentials never enter a dry run; the README documents the rule.",
                location=config.location("dryrun", "pass_env"),
            )
        )
    try:
        sandbox.select_backend(sandbox.Isolation(settings.isolation))
    except sandbox.IsolationUnavailable as error:
        problems.append(
            ISOLATION_UNAVAILABLE.diagnostic(
                message=str(error).removeprefix("isolation-unavailable: "),
                hint='Install bubblewrap, or set isolation = "env" knowingly.',
                location=config.location("dryrun", "isolation")
                if "isolation" in config.settings.dryrun.model_fields_set
                else config.location(),
            )
        )
    executable: tuple[str, ...] = ()
    try:
        executable = resolve_executable(config, evaluation.contract.program)
    except DryRunError as error:
        problems.append(error.diagnostic)
    known = {tool.id: tool for tool in evaluation.inputs.catalog.catalog.tools}
    for tool_id in [*tools, *(t for t, _ in examples)]:
        if tool_id not in known:
            problems.append(
                CONFIG_INVALID.diagnostic(
                    message=f"--tool/--example names {tool_id!r}, which the catalog does not have",
                )
            )
    for tool_id, index in examples:
        # A typo in an index must not turn into a dry run that runs nothing and passes.
        if tool_id in known and index >= len(known[tool_id].examples):
            problems.append(
                CONFIG_INVALID.diagnostic(
                    message=f"--example {tool_id}[{index}]: the tool has "
                    f"{len(known[tool_id].examples)} example(s)",
                )
            )
    if problems:
        return DryRunOutcome(unusable=problems)
    selection = Selection(set(tools), set(examples))
    runs = plan(evaluation, executable, selection=selection)
    readable = interpreter_paths(executable[0])
    cancel = threading.Event()
    records, interrupted = execute(
        runs,
        config,
        readable=readable,
        jobs=jobs or settings.jobs or os.cpu_count() or 1,
        cancel=cancel,
        progress=progress,
    )
    report = build_report(
        evaluation,
        dry_runs=[record.entry for record in records],
        extra_diagnostics=[r.diagnostic for r in records if r.diagnostic is not None],
        interrupted=interrupted,
        shard=shard,
    )
    return DryRunOutcome(report=report, interrupted=interrupted)


def sandbox_report() -> TextOutcome:
    """``exampleguard sandbox``: the backends this machine has and what each guarantees."""
    import sandbox  # noqa: PLC0415

    lines: list[str] = []
    for backend in sandbox.probe_backends():
        state = "available" if backend.available else "unavailable"
        where = f" ({backend.executable})" if backend.executable else ""
        lines.append(f"{backend.name}: {state}{where}")
        if backend.detail:
            lines.append(f"  note: {backend.detail}")
        for guarantee in backend.guarantees:
            lines.append(f"  + {guarantee.value}: {guarantee.description}")
        for guarantee in backend.not_guaranteed:
            lines.append(f"  - {guarantee.value}: not guaranteed")
    try:
        lines.append(f"isolation 'auto' uses: {sandbox.select_backend(sandbox.Isolation.AUTO)}")
    except sandbox.IsolationUnavailable as error:
        lines.append(str(error))
    return TextOutcome("\n".join(lines) + "\n")


# -- init -----------------------------------------------------------------------------------------


def init_project(
    cwd: Path, *, spec_text: str, program: str | None, catalog_name: str = "agent-catalog.json"
) -> TextOutcome:
    """``exampleguard init``: configuration, starter catalog, dispositions folder and counts.

    Refuses, changing nothing, when a ``[tool.exampleguard]`` table, the catalog or the counts
    file already exists. Files are written one by one atomically; if anything fails (or the run
    is interrupted) the files this run created are removed again.
    """
    import tomllib  # noqa: PLC0415

    from exampleguard.documents import SourceError  # noqa: PLC0415
    from exampleguard.files import write_atomically  # noqa: PLC0415
    from exampleguard.tree import load_tree, parse_tree_spec  # noqa: PLC0415

    pyproject = cwd / "pyproject.toml"
    standalone = cwd / "exampleguard.toml"
    catalog_path = cwd / catalog_name
    counts_path = cwd / "exampleguard-counts.json"
    refusals: list[str] = []
    pyproject_text: str | None = None
    if pyproject.exists():
        try:
            pyproject_text = pyproject.read_text(encoding="utf-8")
            existing = tomllib.loads(pyproject_text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            return _refuse(FILE_INVALID, f"pyproject.toml cannot be read: {error}")
        if "exampleguard" in (existing.get("tool") or {}):
            refusals.append("pyproject.toml already has a [tool.exampleguard] table")
    if standalone.exists():
        refusals.append("exampleguard.toml already exists")
    for path in (catalog_path, counts_path):
        if path.exists():
            refusals.append(f"{path.name} already exists")
    if refusals:
        return _refuse(CONFIG_INVALID, "init changes nothing: " + "; ".join(refusals))
    try:
        spec = parse_tree_spec(spec_text, cwd)
        tree, _ = load_tree(spec, root=cwd, display=spec_text, program=program)
    except ValueError as error:
        return _refuse(CONFIG_INVALID, str(error))
    except SourceError as error:
        return TextOutcome(unusable=[error.diagnostic])
    name = program or tree.program
    tools = []
    for command in sorted(tree.commands, key=lambda c: c.path):
        if not command.runnable or command.hidden or _has_children(tree, command.path):
            continue
        tool: dict[str, Any] = {
            "id": ".".join([name, *command.path]),
            "command": list(command.path),
        }
        if command.description:
            tool["summary"] = command.description
        tool["examples"] = []
        tools.append(tool)
    catalog = {"format": "exampleguard.catalog/v1", "program": name, "tools": tools}
    table = f'[tool.exampleguard]\ncatalog = "{catalog_name}"\ntree = {json.dumps(spec_text)}\n'
    created: list[Path] = []
    dispositions = cwd / "dispositions"
    made_dispositions = not dispositions.exists()
    try:
        # Each path is noted before it is written: an interruption right after a write must
        # still find it to take back (none of them existed, or init would have refused).
        created.append(catalog_path)
        write_atomically(catalog_path, json.dumps(catalog, indent=2, ensure_ascii=False) + "\n")
        dispositions.mkdir(exist_ok=True)
        if pyproject_text is not None:
            separator = "" if pyproject_text.endswith("\n") else "\n"
            write_atomically(pyproject, f"{pyproject_text}{separator}\n{table}")
            config_file = pyproject
        else:
            created.append(standalone)
            write_atomically(standalone, table.replace("[tool.exampleguard]\n", ""))
            config_file = standalone
        config = load_config(config_file, cwd)
        created.append(counts_path)
        written = count(config, write=True)
        if written.unusable:
            raise _InitFailed(written.unusable)
    except BaseException as error:
        # Put everything back as it was: init either does all of its work or none of it.
        for path in reversed(created):
            path.unlink(missing_ok=True)
        if made_dispositions:
            with contextlib.suppress(OSError):
                dispositions.rmdir()
        if pyproject_text is not None and pyproject.read_text(encoding="utf-8") != pyproject_text:
            write_atomically(pyproject, pyproject_text)
        if isinstance(error, _InitFailed):
            return TextOutcome(unusable=error.diagnostics)
        if isinstance(error, OSError):
            return _refuse(FILE_UNREADABLE, f"init could not write its files: {error}")
        raise
    where = "pyproject.toml [tool.exampleguard]" if pyproject_text is not None else standalone.name
    return TextOutcome(
        f"wrote {where}, {catalog_name} ({len(tools)} tools, no examples yet), dispositions/ "
        f"and {counts_path.name}\nnext: add one or two examples per tool, then run "
        "`exampleguard validate` and `exampleguard counts --write`\n"
    )


class _InitFailed(Exception):
    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0].message)
        self.diagnostics = diagnostics


def _has_children(tree: Any, path: list[str]) -> bool:
    return any(len(c.path) == len(path) + 1 and c.path[: len(path)] == path for c in tree.commands)


# -- report merge ---------------------------------------------------------------------------------


def merge_reports(paths: list[Path], config: Config | None) -> ValidateOutcome:
    """``exampleguard report merge``: join shard reports into one and compare the counts."""
    from exampleguard.counts import Counts, compare_counts, load_counts  # noqa: PLC0415
    from exampleguard.documents import SourceError, check_format, load_document, validate_model  # noqa: PLC0415
    from exampleguard.report import merge_report  # noqa: PLC0415
    from exampleguard.report import model as report_format  # noqa: PLC0415

    reports: list[report_format.Report] = []
    errors: list[Diagnostic] = []
    for path in paths:
        try:
            document = load_document(path, str(path))
            check_format(document, "exampleguard.report/v1")
            reports.append(validate_model(report_format.Report, document))
        except SourceError as error:
            errors.append(error.diagnostic)
    if errors:
        return ValidateOutcome(unusable=errors)
    shards = sorted({(r.shard.index, r.shard.total) for r in reports if r.shard is not None})
    totals = {total for _, total in shards}
    problems: list[str] = []
    if len(totals) > 1:
        problems.append(f"the reports come from different shard counts: {sorted(totals)}")
    elif totals:
        (total,) = totals
        missing = sorted(set(range(1, total + 1)) - {index for index, _ in shards})
        if missing:
            problems.append(f"shard(s) {missing} of {total} are missing")
    if len(shards) != len([r for r in reports if r.shard is not None]):
        problems.append("the same shard is given twice")
    if problems:
        return ValidateOutcome(unusable=[CONFIG_INVALID.diagnostic(message=p) for p in problems])
    first = next((r for r in reports if r.shard is None or r.shard.index == 1), reports[0])
    counts = Counts(
        tools=first.counts.tools,
        examples=sum(r.counts.examples for r in reports),
        contract_validated=sum(r.counts.contract_validated for r in reports),
        dry_run_eligible=first.counts.dry_run_eligible,
        dry_run_narrowed=first.counts.dry_run_narrowed,
        excluded=first.counts.excluded,
    )
    drift: list[Diagnostic] = []
    if config is not None:
        try:
            committed = load_counts(config.counts_path, config.display(config.counts_path))
        except SourceError as error:
            return ValidateOutcome(unusable=[error.diagnostic])
        drift = compare_counts(committed, counts, config.display(config.counts_path))
    return ValidateOutcome(merge_report(reports, counts=counts, extra_diagnostics=drift))
