"""Building the effective contract: the loaded catalog bound to the tree, once, before any example.

The builder reads what loading produced (the catalog and its document, the tree, the ``@file``
arguments) and returns a :class:`~exampleguard._contract.Contract` with every catalog-level
defect as a diagnostic. The check stage imports the contract, never this module.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from exampleguard._argfiles import ArgumentFile
from exampleguard._catalog import Catalog, Tool
from exampleguard._catalogfile import LoadedCatalog
from exampleguard._codes import (
    ALIAS_COLLISION,
    CONSTRAINT_INVALID,
    DRYRUN_FLAG_UNKNOWN,
    DUPLICATE_TOOL,
    DYNAMIC_COMMAND,
    OVERLAY_DRIFT,
    TOOL_UNBOUND,
    Code,
)
from exampleguard._contract import (
    CommandNode,
    Contract,
    EffectiveTool,
    Path,
    follow,
    visible_parameters,
)
from exampleguard._diagnostics import Diagnostic
from exampleguard._model import (
    DIALECTS,
    Constraints,
    DialectFacts,
    Parameter,
    ParserSettings,
)
from exampleguard._snapshot import Tree, TreeCommand

__all__ = ["ArgvRewriting", "build_contract"]


class ArgvRewriting(Protocol):
    """What the contract keeps of the configuration's ``argv_rewrite``: two plain words.

    A protocol rather than the configuration's model: the contract, which the check stage reads,
    imports nothing of the module that reads the configuration file.
    """

    @property
    def note(self) -> str:
        """What the program does to its argv, in words."""
        ...

    @property
    def unparsed_after(self) -> str | None:
        """The word from which on the program keeps its command line for itself."""
        ...


def build_contract(
    loaded: LoadedCatalog,
    tree: Tree | None,
    argument_files: Mapping[str, ArgumentFile] | None = None,
    argv_rewrite: ArgvRewriting | None = None,
) -> Contract:
    """Bind the catalog to the tree (or to itself when there is none).

    ``argument_files`` are the ``@file`` arguments the examples name, already read (the binder
    opens no file). ``argv_rewrite`` is the configuration's statement that the program rewrites
    its argv before parsing.

    Returns the contract with every catalog-level defect as a diagnostic: ``duplicate-tool``,
    ``alias-collision``, ``tool-unbound``, ``overlay-drift``, ``dryrun-flag-unknown`` and
    ``constraint-invalid``.
    """
    builder = _Builder(loaded)
    contract = builder.build(tree)
    if argument_files:
        contract.argument_files = argument_files
    if argv_rewrite is not None:
        contract.argv_rewrite = argv_rewrite.note
        contract.unparsed_after = argv_rewrite.unparsed_after
    return contract


class _Builder:
    def __init__(self, loaded: LoadedCatalog) -> None:
        self.loaded = loaded
        self.catalog: Catalog = loaded.catalog
        self.diagnostics: list[Diagnostic] = []
        self.owner: dict[Path, int] = {}

    # -- diagnostics -----------------------------------------------------------------------------

    def report(
        self,
        code: Code,
        message: str,
        key: Sequence[str | int],
        *,
        tool: str | None = None,
        hint: str | None = None,
        at_key: bool = True,
    ) -> None:
        self.diagnostics.append(
            code.diagnostic(
                message,
                hint=hint,
                tool=tool,
                region=self.loaded.document.region(key, at_key=at_key),
            )
        )

    # -- building --------------------------------------------------------------------------------

    def build(self, tree: Tree | None) -> Contract:
        if tree is None:
            dialect = self.catalog.dialect or "click"
            root = self._routing_from_catalog(DIALECTS[dialect])
            value_syntax = "python"
        else:
            dialect = tree.dialect
            root = self._routing_from_tree(tree)
            value_syntax = tree.value_syntax
            if self.catalog.dialect is not None and self.catalog.dialect != tree.dialect:
                self.report(
                    OVERLAY_DRIFT,
                    f"the catalog's dialect is {self.catalog.dialect!r} but the command tree is "
                    f"parsed by {tree.dialect!r} rules",
                    ("dialect",),
                    at_key=False,
                    hint="Remove `dialect` from the catalog (the tree decides) or make it match.",
                )
        tools = self._tools(root, tree)
        return Contract(
            program=self.catalog.program,
            dialect=dialect,
            value_syntax=value_syntax,
            root=root,
            tools=tools,
            diagnostics=self.diagnostics,
            tree=tree,
        )

    def _routing_from_catalog(self, dialect: DialectFacts) -> CommandNode:
        group_settings = dialect.catalog_group
        root = CommandNode(path=(), runnable=False, settings=group_settings)
        owner = self.owner
        for index, tool in enumerate(self.catalog.tools):
            for alias_index, words in enumerate([tool.command, *tool.aliases]):
                path = tuple(words)
                key: tuple[str | int, ...] = (
                    ("tools", index, "command")
                    if alias_index == 0
                    else ("tools", index, "aliases", alias_index - 1)
                )
                if path in owner and owner[path] != index:
                    other = self.catalog.tools[owner[path]].id
                    self.report(
                        ALIAS_COLLISION,
                        f"{tool.id}: the path '{' '.join(path) or '(program)'}' already belongs "
                        f"to {other}",
                        key,
                        tool=tool.id,
                        at_key=False,
                    )
                    continue
                owner[path] = index
        # Primary paths first so a node's primary name is its command's own word.
        nodes: dict[Path, CommandNode] = {(): root}
        for index, tool in enumerate(self.catalog.tools):
            path = tuple(tool.command)
            if owner.get(path) != index:
                continue
            node = self._ensure(nodes, path, group_settings)
            node.runnable = True
            node.parameters = list(tool.parameters)
        for index, tool in enumerate(self.catalog.tools):
            target = nodes.get(tuple(tool.command))
            if target is None or owner.get(tuple(tool.command)) != index:
                continue
            for alias in tool.aliases:
                path = tuple(alias)
                if owner.get(path) != index or path in nodes:
                    continue
                parent = self._ensure(nodes, path[:-1], group_settings)
                parent.children[path[-1]] = target
        self._settle_groups(root, dialect)
        return root

    def _ensure(
        self, nodes: dict[Path, CommandNode], path: Path, group: ParserSettings
    ) -> CommandNode:
        node = nodes.get(path)
        if node is not None:
            return node
        parent = self._ensure(nodes, path[:-1], group)
        node = CommandNode(path=path, runnable=False, settings=group)
        nodes[path] = node
        parent.children[path[-1]] = node
        parent.names.append(path[-1])
        return node

    def _settle_groups(self, node: CommandNode, dialect: DialectFacts) -> None:
        # A catalog node with children parses like a group of its dialect; without, like a
        # command. A group accepts the persistent options of the tools beneath it (as cobra
        # does); the binder later checks that the resolved tool really declares them.
        for name in node.names:
            self._settle_groups(node.children[name], dialect)
        if node.is_group:
            node.inherited = _dedupe(_persistent_below(node))
        else:
            node.settings = dialect.catalog_command

    def _routing_from_tree(self, tree: Tree) -> CommandNode:
        by_path: dict[Path, TreeCommand] = {}
        for command in tree.commands:
            by_path.setdefault(tuple(command.path), command)
        root_command = by_path.get(())
        nodes: dict[Path, CommandNode] = {}
        root = _node_from_tree(root_command or TreeCommand(path=[], runnable=False), ())
        nodes[()] = root
        for path in sorted(by_path, key=len):
            if not path:
                continue
            parent = nodes.get(path[:-1])
            if parent is None:
                continue
            node = _node_from_tree(by_path[path], path)
            nodes[path] = node
            parent.children[path[-1]] = node
            parent.names.append(path[-1])
        for path, command in by_path.items():
            target = nodes.get(path)
            if target is None:
                continue
            for alias in command.aliases:
                alias_path = tuple(alias)
                parent = nodes.get(alias_path[:-1])
                if parent is not None and alias_path[-1] not in parent.children:
                    parent.children[alias_path[-1]] = target
        _inherit_persistent(root, [])
        return root

    # -- tools -----------------------------------------------------------------------------------

    def _tools(self, root: CommandNode, tree: Tree | None) -> list[EffectiveTool]:
        seen_ids: dict[str, int] = {}
        bound_by: dict[int, EffectiveTool] = {}
        tools: list[EffectiveTool] = []
        for index, tool in enumerate(self.catalog.tools):
            if tool.id in seen_ids:
                self.report(
                    DUPLICATE_TOOL,
                    f"tool id {tool.id!r} is already used by tools[{seen_ids[tool.id]}]",
                    ("tools", index, "id"),
                    tool=tool.id,
                    at_key=False,
                )
            else:
                seen_ids[tool.id] = index
            effective = self._tool(root, tree, index, tool)
            tools.append(effective)
            node = effective.node
            if node is None:
                continue
            earlier = bound_by.get(id(node))
            if earlier is not None:
                if tree is not None:
                    self.report(
                        ALIAS_COLLISION,
                        f"{tool.id}: the command '{' '.join(node.path) or '(program)'}' already "
                        f"belongs to {earlier.id}",
                        ("tools", index, "command"),
                        tool=tool.id,
                        at_key=False,
                    )
                continue
            bound_by[id(node)] = effective
            node.tool = effective
        return tools

    def _tool(self, root: CommandNode, tree: Tree | None, index: int, tool: Tool) -> EffectiveTool:
        if tree is None:
            # A path claimed by an earlier tool stays that tool's; the collision is reported.
            owned = self.owner.get(tuple(tool.command)) == index
            node = follow(root, tool.command) if owned else None
            effective = EffectiveTool(
                tool=tool,
                index=index,
                node=node,
                parameters=list(tool.parameters),
                constraints=tool.constraints,
            )
        else:
            effective = self._tool_on_tree(root, tree, index, tool)
        self._check_constraints(effective)
        self._check_dry_run_flag(effective)
        return effective

    def _tool_on_tree(self, root: CommandNode, tree: Tree, index: int, tool: Tool) -> EffectiveTool:
        node = follow(root, tool.command)
        shown = " ".join(tool.command) or "(the program itself)"
        if node is None:
            creator = _own_lookup_on(root, tool.command, tree.program)
            if creator is not None:
                self.report(
                    DYNAMIC_COMMAND,
                    f"{tool.id}: the tree has no command '{shown}', and {creator} looks its "
                    "commands up with its own code, which may create it only for some command "
                    "lines (inside a callback); the tree, read without one, cannot hold it",
                    ("tools", index, "command"),
                    tool=tool.id,
                    hint="Check the command by hand, or point the tool at a command the tree "
                    "has; `exampleguard explain dynamic-command`.",
                    at_key=False,
                )
                return EffectiveTool(
                    tool=tool,
                    index=index,
                    node=None,
                    constraints=tool.constraints,
                    created_by=creator,
                )
        if node is None or not node.runnable:
            if node is None:
                reason = f"the program has no command '{shown}'"
                suggestion = _suggest_path(root, tool.command)
                hint = f"Did you mean '{suggestion}'?" if suggestion else None
            else:
                reason = f"'{shown}' is a group that needs a subcommand"
                hint = "Point the tool at one of its subcommands: " + ", ".join(node.names[:5])
            self.report(
                TOOL_UNBOUND,
                f"{tool.id}: {reason}",
                ("tools", index, "command"),
                tool=tool.id,
                hint=hint,
                at_key=False,
            )
            return EffectiveTool(tool=tool, index=index, node=None, constraints=tool.constraints)
        for alias_index, alias in enumerate(tool.aliases):
            if follow(root, alias) is not node:
                self.report(
                    OVERLAY_DRIFT,
                    f"{tool.id}: the alias '{' '.join(alias)}' does not route to "
                    f"'{' '.join(node.path) or '(program)'}' in the program",
                    ("tools", index, "aliases", alias_index),
                    tool=tool.id,
                    at_key=False,
                )
        visible, origin = visible_parameters(root, tool.command)
        required: set[str] = set()
        names: dict[str, str] = {p.name: p.name for p in visible}
        overlays: dict[str, Parameter] = {}
        for position, overlay in enumerate(tool.parameters):
            key = ("tools", index, "parameters", position)
            target = _match_overlay(overlay, visible)
            if target is None:
                what = (
                    f"flag {', '.join(overlay.flags)}"
                    if overlay.flags
                    else f"positional parameter {overlay.name!r}"
                )
                self.report(
                    OVERLAY_DRIFT,
                    f"{tool.id}: '{' '.join(node.path) or tree.program}' has no {what}",
                    key,
                    tool=tool.id,
                    hint=_overlay_hint(overlay, visible),
                )
                continue
            names[overlay.name] = target.name
            given = self.loaded.stated_keys(index, position)
            for problem in _overlay_problems(overlay, target, given):
                self.report(
                    OVERLAY_DRIFT,
                    f"{tool.id}: parameter {overlay.name!r} {problem}",
                    key,
                    tool=tool.id,
                )
            if overlay.required and not target.is_required:
                required.add(target.name)
            overlays[target.name] = overlay
        parameters = [_with_overlay(p, overlays.get(p.name)) for p in visible]
        constraints = tool.constraints
        if not DIALECTS[tree.dialect].enforces_constraints:
            # The framework's parser lets through what the snapshot's constraints forbid; the
            # rules stage checks them like the catalog's.
            constraints = node.framework_constraints.merged(constraints)
        translated = _translate(constraints, names)
        return EffectiveTool(
            tool=tool,
            index=index,
            node=node,
            parameters=parameters,
            catalog_required=frozenset(required),
            constraints=translated,
            names=names,
            origin=origin,
        )

    def _check_constraints(self, effective: EffectiveTool) -> None:
        known = {p.name for p in effective.parameters} | set(effective.names)
        if effective.node is None and not effective.parameters:
            known |= {p.name for p in effective.tool.parameters}
        for rule, groups in (
            ("require_one_of", effective.tool.constraints.require_one_of),
            ("require_together", effective.tool.constraints.require_together),
            ("mutually_exclusive", effective.tool.constraints.mutually_exclusive),
        ):
            minimum = 1 if rule == "require_one_of" else 2
            for position, group in enumerate(groups):
                key = ("tools", effective.index, "constraints", rule, position)
                unknown = [name for name in group if name not in known]
                if unknown:
                    self.report(
                        CONSTRAINT_INVALID,
                        f"{effective.id}: {rule} names unknown "
                        f"{'parameter' if len(unknown) == 1 else 'parameters'} "
                        f"{', '.join(repr(n) for n in unknown)}",
                        key,
                        tool=effective.id,
                        at_key=False,
                    )
                elif len(set(group)) < minimum:
                    self.report(
                        CONSTRAINT_INVALID,
                        f"{effective.id}: a {rule} group needs at least {minimum} different "
                        "parameters",
                        key,
                        tool=effective.id,
                        at_key=False,
                    )

    def _check_dry_run_flag(self, effective: EffectiveTool) -> None:
        # An unreviewed stub's flag is checked too: it is what the reviewer will confirm.
        dry_run = effective.tool.dry_run
        if dry_run is None or dry_run.flag is None:
            return
        key = ("tools", effective.index, "dry_run", "flag")
        if effective.node is not None:
            accepted = effective.node.accepted()
        else:
            accepted = list(effective.tool.parameters)
        # A preview option that takes a value is given with it attached (`--dry-run=true`):
        # inserted bare, it could take the next word of the example as its value.
        spelling, attached, _ = dry_run.flag.partition("=")
        match = next((p for p in accepted if spelling in p.flags), None)
        problem = None
        if match is None:
            problem = (
                f"the dry-run flag {spelling} is not an option of "
                f"'{' '.join(effective.path) or self.catalog.program}'"
            )
        elif not match.is_flag and not attached:
            problem = (
                f"the dry-run flag {spelling} takes a value; a preview flag must take none, or "
                f"carry its value ({spelling}=VALUE)"
            )
        elif match.is_flag and attached:
            problem = f"the dry-run flag {spelling} takes no value, but {dry_run.flag} gives one"
        if problem is not None:
            self.report(
                DRYRUN_FLAG_UNKNOWN,
                f"{effective.id}: {problem}",
                key,
                tool=effective.id,
                at_key=False,
                hint=_closest_flag(spelling, accepted) if match is None else None,
            )


# -- helpers ------------------------------------------------------------------------------------


def _node_from_tree(command: TreeCommand, path: Path) -> CommandNode:
    return CommandNode(
        path=path,
        runnable=command.runnable,
        hidden=command.hidden,
        parameters=list(command.parameters),
        framework_constraints=command.constraints,
        own_lookup=command.own_lookup,
        settings=command.settings,
        default_command=command.default_command,
        default_if_no_args=command.default_if_no_args,
    )


def _inherit_persistent(node: CommandNode, inherited: list[Parameter]) -> None:
    node.inherited = inherited
    # The nearest declaration of a flag wins, as cobra merges its parents' persistent flags.
    passed_down = _dedupe([*(p for p in node.parameters if p.persistent), *inherited])
    for name in node.names:
        child = node.children[name]
        if child.path[:-1] == node.path:
            _inherit_persistent(child, passed_down)


def _persistent_below(node: CommandNode) -> list[Parameter]:
    found: list[Parameter] = []
    pending = deque(node.children[name] for name in node.names)
    while pending:
        child = pending.popleft()
        found.extend(p for p in child.parameters if p.persistent)
        pending.extend(child.children[name] for name in child.names)
    return found


def _dedupe(parameters: Iterable[Parameter]) -> list[Parameter]:
    seen: set[str] = set()
    result: list[Parameter] = []
    for parameter in parameters:
        flags = set(parameter.all_flags)
        if flags & seen:
            continue
        seen |= flags
        result.append(parameter)
    return result


def _own_lookup_on(root: CommandNode, words: Sequence[str], program: str) -> str | None:
    """The deepest group on ``words`` that the tree has, if it looks commands up its own way."""
    node = root
    for word in words:
        child = node.children.get(word)
        if child is None:
            break
        node = child
    if node.own_lookup is None:
        return None
    where = " ".join([program, *node.path])
    return f"'{where}' ({node.own_lookup})"


def _match_overlay(overlay: Parameter, visible: list[Parameter]) -> Parameter | None:
    by_name = next((p for p in visible if p.name == overlay.name), None)
    if by_name is not None and (overlay.positional == by_name.positional):
        return by_name
    if overlay.flags:
        wanted = set(overlay.flags) | set(overlay.negation_flags)
        return next((p for p in visible if wanted & set(p.all_flags)), None)
    return None


def _overlay_problems(overlay: Parameter, target: Parameter, given: frozenset[str]) -> list[str]:
    problems: list[str] = []
    missing = [flag for flag in overlay.flags if flag not in target.all_flags]
    if missing:
        problems.append(f"names {', '.join(missing)}, which the command does not accept")
    missing_negations = [f for f in overlay.negation_flags if f not in target.negation_flags]
    if missing_negations:
        problems.append(
            f"names {', '.join(missing_negations)}, which is not a negation the command accepts"
        )
    if overlay.positional != target.positional:
        kind = "a positional" if target.positional else "an option"
        problems.append(f"is {kind} in the command")
    for name in ("type", "choices", "multiple", "count"):
        if name in given and getattr(overlay, name) != getattr(target, name):
            problems.append(
                f"says {name} is {getattr(overlay, name)!r}, the command says "
                f"{getattr(target, name)!r}"
            )
    if "nargs" in given and overlay.values_per_occurrence != target.values_per_occurrence:
        problems.append(
            f"says nargs is {overlay.values_per_occurrence!r}, the command says "
            f"{target.values_per_occurrence!r}"
        )
    if overlay.required is False and target.is_required:
        problems.append("is marked optional, but the command requires it")
    return problems


def _with_overlay(parameter: Parameter, overlay: Parameter | None) -> Parameter:
    if overlay is None or overlay.description is None or parameter.description:
        return parameter
    return parameter.with_changes(description=overlay.description)


def _translate(constraints: Constraints, names: dict[str, str]) -> Constraints:
    def rename(groups: list[list[str]]) -> list[list[str]]:
        return [[names.get(name, name) for name in group] for group in groups]

    return Constraints(
        require_one_of=rename(constraints.require_one_of),
        require_together=rename(constraints.require_together),
        mutually_exclusive=rename(constraints.mutually_exclusive),
    )


def _suggest_path(root: CommandNode, words: Sequence[str]) -> str | None:
    node = root
    found: list[str] = []
    for word in words:
        child = node.children.get(word)
        if child is None:
            guess = node.suggest(word)
            if guess is None:
                return None
            found.append(guess)
            node = node.children[guess]
        else:
            found.append(word)
            node = child
    return " ".join(found)


def _overlay_hint(overlay: Parameter, visible: list[Parameter]) -> str | None:
    if overlay.flags:
        return _closest_flag(overlay.flags[0], visible)
    positionals = [p.name for p in visible if p.positional]
    if positionals:
        return "The command's positional parameters are: " + ", ".join(positionals)
    return None


def _closest_flag(flag: str, parameters: list[Parameter]) -> str | None:
    flags = [f for p in parameters for f in p.all_flags]
    matches = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
    return f"Did you mean {matches[0]}?" if matches else None
