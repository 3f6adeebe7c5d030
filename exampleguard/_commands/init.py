"""``exampleguard init``: configuration, a starter catalog, ``dispositions/`` and the counts."""

from __future__ import annotations

import ast
import contextlib
import importlib.resources
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exampleguard._codes import CONFIG_INVALID, FILE_INVALID, FILE_UNREADABLE
from exampleguard._commands._outcome import TextOutcome, refuse
from exampleguard._commands.counts import count
from exampleguard._config import load_config
from exampleguard._diagnostics import Diagnostic, plural
from exampleguard._documents import SourceError
from exampleguard._files import write_atomically
from exampleguard._model import Parameter
from exampleguard._rules import PREVIEW_FLAGS
from exampleguard._snapshot import Tree
from exampleguard._tree import TreeSpec, load_tree, parse_tree_spec

__all__ = [
    "COBRA_HELPER",
    "Script",
    "init_cobra",
    "init_project",
    "preview_flag",
    "script_for",
]


@dataclass(frozen=True, slots=True)
class _Project:
    """The files ``init`` writes in a directory."""

    cwd: Path
    catalog_name: str

    @property
    def pyproject(self) -> Path:
        return self.cwd / "pyproject.toml"

    @property
    def standalone(self) -> Path:
        return self.cwd / "exampleguard.toml"

    @property
    def catalog(self) -> Path:
        return self.cwd / self.catalog_name

    @property
    def counts(self) -> Path:
        return self.cwd / "exampleguard-counts.json"

    @property
    def dispositions(self) -> Path:
        return self.cwd / "dispositions"


def init_project(
    cwd: Path, *, spec_text: str, program: str | None, catalog_name: str = "agent-catalog.json"
) -> TextOutcome:
    """``exampleguard init``: configuration, starter catalog, dispositions folder and counts.

    The program agents type is ``program``; else the ``[project.scripts]`` (or
    ``[project.gui-scripts]``) entry of ``pyproject.toml`` that runs the tree (:func:`script_for`);
    else the tree's own name. The text says which, and why.

    Refuses, changing nothing, when a ``[tool.exampleguard]`` table, the catalog or the counts
    file already exists. Files are written one by one atomically; if anything fails (or the run
    is interrupted) the files this run created are removed again.
    """
    project = _Project(cwd, catalog_name)
    pyproject_text, refused = _existing(project)
    if refused is not None:
        return refused
    try:
        spec = parse_tree_spec(spec_text, cwd)
    except ValueError as error:
        return refuse(CONFIG_INVALID, str(error))
    script = None if program is not None else script_for(spec, pyproject_text, cwd)
    chosen = program if program is not None else (script.name if script is not None else None)
    try:
        tree, _ = load_tree(spec, root=cwd, display=spec_text, program=chosen)
    except ValueError as error:
        return refuse(CONFIG_INVALID, str(error))
    except SourceError as error:
        return TextOutcome(unusable=[error.diagnostic])
    name = chosen or tree.program
    tools = _starter_tools(tree, name)
    catalog = {"format": "exampleguard.catalog/v1", "program": name, "tools": tools}
    table = f'[tool.exampleguard]\ncatalog = "{catalog_name}"\ntree = {json.dumps(spec_text)}\n'
    failed = _write(project, catalog, table, pyproject_text)
    if failed is not None:
        return failed
    where = (
        "pyproject.toml [tool.exampleguard]"
        if pyproject_text is not None
        else project.standalone.name
    )
    lines = [
        f"wrote {where}, {catalog_name} ({plural(len(tools), 'tool')}, no examples yet), "
        f"dispositions/ and {project.counts.name}",
        _program_line(name, program=program, script=script, spec=spec),
        f"next: add one or two examples per tool ({_examples_syntax(catalog_name, name)}), "
        "then run `exampleguard validate` and `exampleguard counts --write`",
    ]
    stubs = sum(1 for tool in tools if "dry_run" in tool)
    if stubs:
        reviewed, evidence = _review_syntax(catalog_name)
        lines.append(
            f"review: {plural(stubs, 'tool')} {'has' if stubs == 1 else 'have'} an unreviewed "
            f"dry_run stub for {'its' if stubs == 1 else 'their'} preview flag; once you have "
            f"checked that the flag only previews, set {reviewed} and write {evidence}"
        )
    return TextOutcome("\n".join(lines) + "\n")


@dataclass(frozen=True, slots=True)
class Script:
    """A ``[project.scripts]`` (or ``gui-scripts``) entry of ``pyproject.toml``."""

    name: str
    target: str
    table: str
    others: tuple[str, ...] = ()
    """The names of other entries that run the same tree (the first in the file is chosen)."""


def script_for(spec: TreeSpec, pyproject_text: str | None, root: Path) -> Script | None:
    """The entry point of ``pyproject.toml`` that runs the tree ``spec`` names, if one does.

    An entry runs the tree when it targets exactly ``MODULE:ATTR`` of the spec, or another
    function of that module whose body uses ``ATTR`` (``def main(): cli()``, found by reading
    the module's source under ``root`` or ``root/src``, never by importing it). When several
    entries do, the first in the file is chosen and the others are named.
    """
    if spec.framework in ("snapshot", "exec") or pyproject_text is None:
        return None
    try:
        project = tomllib.loads(pyproject_text).get("project")
    except tomllib.TOMLDecodeError:
        return None
    if not isinstance(project, dict):
        return None
    found: list[Script] = []
    runners: frozenset[str] | None = None
    for table in ("scripts", "gui-scripts"):
        entries = project.get(table)
        if not isinstance(entries, dict):
            continue
        for name, value in entries.items():
            if not isinstance(value, str):
                continue
            module, _, attribute = value.split("[", 1)[0].strip().partition(":")
            if module.strip() != spec.module:
                continue
            attribute = attribute.strip()
            if attribute != spec.attribute:
                if runners is None:
                    runners = _functions_using(root, spec.module, spec.attribute)
                if attribute not in runners:
                    continue
            found.append(Script(name, value.strip(), f"project.{table}"))
    if not found:
        return None
    first = found[0]
    return Script(first.name, first.target, first.table, tuple(s.name for s in found[1:]))


def _functions_using(root: Path, module: str, attribute: str) -> frozenset[str]:
    """The top-level functions of ``module``'s source whose bodies name ``attribute``."""
    parts = module.split(".")
    for base in (root, root / "src"):
        for source in (
            base.joinpath(*parts).with_suffix(".py"),
            base.joinpath(*parts, "__init__.py"),
        ):
            try:
                tree = ast.parse(source.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                continue
            # The body only: a command's decorator (`@cli.command()`) names the group too.
            return frozenset(
                node.name
                for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and any(
                    isinstance(inner, ast.Name) and inner.id == attribute
                    for statement in node.body
                    for inner in ast.walk(statement)
                )
            )
    return frozenset()


def _program_line(name: str, *, program: str | None, script: Script | None, spec: TreeSpec) -> str:
    """Which program name the catalog got, and where it came from."""
    if program is not None:
        return f"program: {name} (from --program)"
    if script is not None:
        also = ""
        if script.others:
            also = (
                f"; {', '.join(script.others)} also run{'s' if len(script.others) == 1 else ''} it"
            )
        return (
            f"program: {name} (from [{script.table}] {name} = {json.dumps(script.target)}{also}; "
            "pass --program to choose another)"
        )
    if spec.framework in ("snapshot", "exec"):
        # No Python entry point can run a snapshot or a built program: the tree names itself.
        return (
            f"program: {name} (the tree's own name; pass --program if agents type another name, "
            "since examples and documentation lines that start with another name are not "
            "checked)"
        )
    return (
        f"program: {name} (the tree's own name: no [project.scripts] entry of pyproject.toml "
        f"runs {spec}; pass --program if agents type another name, since examples and "
        "documentation lines that start with another name are not checked)"
    )


def _examples_syntax(catalog_name: str, program: str) -> str:
    """How one example is written in the catalog's own syntax."""
    if catalog_name.lower().endswith(".toml"):
        return f'examples = [{{command = "{program} ..."}}]'
    return f'"examples": [{{"command": "{program} ..."}}]'


def _review_syntax(catalog_name: str) -> tuple[str, str]:
    """``reviewed = true`` and the evidence key as the catalog's own syntax spells them."""
    if catalog_name.lower().endswith(".toml"):
        return "`reviewed = true`", '`evidence = "..."`'
    return '`"reviewed": true`', '`"evidence": "..."`'


def _existing(project: _Project) -> tuple[str | None, TextOutcome | None]:
    """The text of an existing ``pyproject.toml``, and a refusal if anything is in the way."""
    refusals: list[str] = []
    pyproject_text: str | None = None
    if project.pyproject.is_symlink():
        # Editing it would put a file where the link is, and leave the file it points to as it was.
        return None, refuse(
            CONFIG_INVALID,
            "init changes nothing: pyproject.toml is a symlink; run init where "
            "the file it points to is",
        )
    if project.pyproject.exists():
        try:
            pyproject_text = project.pyproject.read_text(encoding="utf-8")
            existing = tomllib.loads(pyproject_text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            return None, refuse(FILE_INVALID, f"pyproject.toml cannot be read: {error}")
        if "exampleguard" in (existing.get("tool") or {}):
            refusals.append("pyproject.toml already has a [tool.exampleguard] table")
    # A link counts as there, dangling or not: writing would replace it with a file.
    if _present(project.standalone):
        refusals.append("exampleguard.toml already exists")
    for path in (project.catalog, project.counts):
        if _present(path):
            refusals.append(f"{path.name} already exists")
    if refusals:
        return pyproject_text, refuse(
            CONFIG_INVALID, "init changes nothing: " + "; ".join(refusals)
        )
    return pyproject_text, None


def _present(path: Path) -> bool:
    return path.is_symlink() or path.exists()


def _starter_tools(tree: Tree, name: str) -> list[dict[str, Any]]:
    """One tool, without examples, per public runnable leaf of the tree."""
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
        preview = preview_flag(command.parameters)
        if preview is not None:
            # A stub for a reviewer: it counts for nothing until `reviewed = true` and the
            # evidence say that this flag really only previews.
            tool["dry_run"] = {"flag": preview, "reviewed": False, "evidence": ""}
        tool["examples"] = []
        tools.append(tool)
    return tools


def preview_flag(parameters: Sequence[Parameter]) -> str | None:
    """The command's preview flag, if it has one: a switch spelled like one by convention.

    A switch (no value, not a counter) one of whose option strings is a conventional preview
    spelling (:data:`~exampleguard._rules.PREVIEW_FLAGS`: ``--dry-run``, ``--preview``,
    ``--check`` …); ``-n/--dry-run`` gives ``--dry-run``. Only ever a proposal: the stub it
    goes into is unreviewed.
    """
    for flag in PREVIEW_FLAGS:
        for parameter in parameters:
            if parameter.is_flag and not parameter.count and flag in parameter.flags:
                return flag
    return None


def _write(
    project: _Project, catalog: dict[str, Any], table: str, pyproject_text: str | None
) -> TextOutcome | None:
    """Write every file, or (failing or interrupted) take back everything written."""
    created: list[Path] = []
    made_dispositions = not project.dispositions.exists()
    try:
        # Each path is noted before it is written: an interruption right after a write must
        # still find it to take back (none of them existed, or init would have refused).
        created.append(project.catalog)
        write_atomically(project.catalog, json.dumps(catalog, indent=2, ensure_ascii=False) + "\n")
        project.dispositions.mkdir(exist_ok=True)
        keep = project.dispositions / ".gitkeep"
        if made_dispositions:
            # Git does not keep an empty folder; the reviewers' records will land here.
            created.append(keep)
            keep.touch()
        if pyproject_text is not None:
            separator = "" if pyproject_text.endswith("\n") else "\n"
            write_atomically(project.pyproject, f"{pyproject_text}{separator}\n{table}")
            config_file = project.pyproject
        else:
            created.append(project.standalone)
            write_atomically(project.standalone, table.replace("[tool.exampleguard]\n", ""))
            config_file = project.standalone
        config = load_config(config_file, project.cwd)
        created.append(project.counts)
        written = count(config, write=True)
        if written.unusable:
            raise _InitFailed(written.unusable)
    except BaseException as error:
        # Put everything back as it was: init either does all of its work or none of it.
        for path in reversed(created):
            path.unlink(missing_ok=True)
        if made_dispositions:
            with contextlib.suppress(OSError):
                project.dispositions.rmdir()
        pyproject = project.pyproject
        if pyproject_text is not None and pyproject.read_text(encoding="utf-8") != pyproject_text:
            write_atomically(pyproject, pyproject_text)
        if isinstance(error, _InitFailed):
            return TextOutcome(unusable=error.diagnostics)
        if isinstance(error, OSError):
            return refuse(FILE_UNREADABLE, f"init could not write its files: {error}")
        raise
    return None


class _InitFailed(Exception):
    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(diagnostics[0].message)
        self.diagnostics = diagnostics


def _has_children(tree: Tree, path: list[str]) -> bool:
    return any(len(c.path) == len(path) + 1 and c.path[: len(path)] == path for c in tree.commands)


COBRA_HELPER = ("internal", "exampleguard", "exampleguard.go")
"""Where ``init --cobra`` writes the Go helper, below the module's root."""
_MODULE_LINE = re.compile(r"^module\s+(\S+)", re.MULTILINE)


def cobra_helper_source() -> str:
    """The Go helper exampleguard ships (``exampleguard/go/exampleguard.go``)."""
    return (importlib.resources.files("exampleguard") / "go" / "exampleguard.go").read_text(
        encoding="utf-8"
    )


def init_cobra(cwd: Path) -> TextOutcome:
    """``exampleguard init --cobra``: write the tree protocol's Go helper into the module.

    The module is the one whose ``go.mod`` is in ``cwd`` or the nearest folder above it; the
    helper goes to ``internal/exampleguard/exampleguard.go`` there. An existing helper is
    replaced only by exampleguard's own text (it says so when it is up to date); any other file
    in the way is refused, changing nothing.
    """
    module_root = next((d for d in (cwd, *cwd.parents) if (d / "go.mod").is_file()), None)
    if module_root is None:
        return refuse(
            CONFIG_INVALID,
            f"init --cobra changes nothing: no go.mod in {cwd} or above it; run it in the Go "
            "module of the cobra program",
        )
    try:
        go_mod = (module_root / "go.mod").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return refuse(FILE_UNREADABLE, f"go.mod cannot be read: {error}")
    found = _MODULE_LINE.search(go_mod)
    if found is None:
        return refuse(FILE_INVALID, f"{module_root / 'go.mod'} has no `module` line")
    module = found.group(1)
    target = module_root.joinpath(*COBRA_HELPER)
    source = cobra_helper_source()
    shown = target.relative_to(cwd) if target.is_relative_to(cwd) else target
    if target.is_symlink() or (target.exists() and not target.is_file()):
        return refuse(CONFIG_INVALID, f"init --cobra changes nothing: {shown} is not a file")
    if target.exists():
        existing = target.read_text(encoding="utf-8", errors="replace")
        if existing == source:
            return TextOutcome(f"{shown} is up to date\n" + _wiring(module))
        if not existing.startswith(source.split("\n", 1)[0]):
            return refuse(
                CONFIG_INVALID,
                f"init --cobra changes nothing: {shown} exists and is not exampleguard's helper",
            )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, source)
    except OSError as error:
        return refuse(FILE_UNREADABLE, f"init --cobra could not write {shown}: {error}")
    return TextOutcome(f"wrote {shown}\n" + _wiring(module))


def _wiring(module: str) -> str:
    return (
        "next: wire it with one line before the root command runs, in the file that has it:\n"
        f'    import "{module}/internal/exampleguard"\n'
        "    exampleguard.Register(rootCmd)\n"
        "then build the program (go build -o bin/APP .) and point exampleguard at it:\n"
        '    exampleguard init --tree "exec:./bin/APP"   (or tree = "exec:./bin/APP")\n'
    )
