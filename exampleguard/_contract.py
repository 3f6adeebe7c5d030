"""The effective contract: the catalog bound to the executable tree, as the check stage reads it.

With a tree, the tree owns which commands exist, which run and which parameters they accept; the
catalog's parameters are overlays that may add descriptions, requirements and constraints and
nothing else. Without a tree, the catalog's parameters are the whole truth and its command paths
form the routing tree. Either way the result is a :class:`Contract`: a routing tree of
:class:`CommandNode` and one :class:`EffectiveTool` per catalog tool, plus the catalog-level
defects found while building them. :mod:`exampleguard._contractbuild` builds it, once, before any
example, from what loading read; this module imports nothing that reads a file.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from exampleguard._catalog import DryRun, Tool
from exampleguard._diagnostics import Diagnostic
from exampleguard._model import (
    DIALECTS,
    NO_CONSTRAINTS,
    Constraints,
    Dialect,
    Parameter,
    ParserSettings,
)

if TYPE_CHECKING:
    from exampleguard._argfiles import ArgumentFile
    from exampleguard._snapshot import Tree

__all__ = [
    "DEFAULT_SETTINGS",
    "CommandNode",
    "Contract",
    "EffectiveTool",
    "Path",
    "follow",
    "visible_parameters",
]


Path = tuple[str, ...]
"""A command's words after the program, as the routing tree spells them."""

# Shared, immutable settings: a tree command that states none needs no copy of its own.
DEFAULT_SETTINGS = ParserSettings()


@dataclass(eq=False, slots=True)
class CommandNode:
    """One command or group in the routing tree, with the parameters declared at its level.

    ``children`` maps every word that routes to a subcommand — names and aliases — to its node;
    ``names`` keeps the primary names in order, for suggestions and coverage.
    """

    path: Path
    runnable: bool
    hidden: bool = False
    parameters: list[Parameter] = field(default_factory=list)
    framework_constraints: Constraints = NO_CONSTRAINTS
    own_lookup: str | None = None
    """The group's own lookup of its subcommands, where it has one (a tree's ``own_lookup``)."""
    settings: ParserSettings = DEFAULT_SETTINGS
    children: dict[str, CommandNode] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    default_command: str | None = None
    default_if_no_args: bool = False
    tool: EffectiveTool | None = None
    inherited: list[Parameter] = field(default_factory=list)
    """Persistent options declared on ancestors, accepted at this level too."""

    @property
    def is_group(self) -> bool:
        """Whether subcommands can follow this node."""
        return bool(self.children)

    def accepted(self) -> list[Parameter]:
        """Every parameter a word at this level may name: its own, then inherited ones."""
        if not self.inherited:
            return self.parameters
        own = {flag for p in self.parameters for flag in p.all_flags}
        return [
            *self.parameters,
            *(p for p in self.inherited if not own.intersection(p.all_flags)),
        ]

    def suggest(self, word: str) -> str | None:
        """The subcommand name closest to ``word``, if one is close."""
        matches = difflib.get_close_matches(word, self.names, n=1, cutoff=0.6)
        return matches[0] if matches else None


@dataclass(eq=False, slots=True)
class EffectiveTool:
    """A catalog tool as it will be checked: its command node and its effective parameters.

    ``parameters`` are the parameters an example of this tool may give, in the framework's view
    (types, arity, framework requirements), from the top-level group down to the command.
    ``catalog_required`` names those the catalog makes required on top of the framework, and
    ``constraints`` the rules checked by the rules stage (the catalog's own, and the tree's for
    dialects whose parser does not enforce them itself).
    """

    tool: Tool
    index: int
    node: CommandNode | None
    parameters: list[Parameter] = field(default_factory=list)
    catalog_required: frozenset[str] = frozenset()
    constraints: Constraints = NO_CONSTRAINTS
    names: dict[str, str] = field(default_factory=dict)
    """Catalog parameter name → effective parameter name, where they differ (overlays)."""
    origin: dict[int, str] = field(default_factory=dict)
    """Identity of a parameter as declared in the routing tree → its effective name. Empty
    without a tree: the tool's command node declares the tool's own parameters."""
    created_by: str | None = None
    """For a tool the tree does not have: the group on its path whose own lookup may create
    its command at run time (``dynamic-command``), as ``'PATH' (Class)``."""

    @property
    def id(self) -> str:
        """The tool's id."""
        return self.tool.id

    @property
    def dry_run(self) -> DryRun | None:
        """The tool's reviewed dry-run capability: only a tool with one has examples to run.

        An unreviewed stub (``reviewed = false``) is not one.
        """
        return self.tool.capability

    @property
    def path(self) -> Path:
        """The resolved primary path of the tool's command."""
        return self.node.path if self.node is not None else tuple(self.tool.command)

    def parameter(self, name: str) -> Parameter | None:
        """The effective parameter called ``name``."""
        return next((p for p in self.parameters if p.name == name), None)


@dataclass(slots=True)
class Contract:
    """Everything the binder and the rules need, built once per run."""

    program: str
    dialect: Dialect
    value_syntax: str
    root: CommandNode
    tools: list[EffectiveTool]
    diagnostics: list[Diagnostic]
    tree: Tree | None = None
    argument_files: Mapping[str, ArgumentFile] = field(default_factory=dict)
    """The ``@file`` arguments the examples name, as the loading stage read them, by name."""
    argv_rewrite: str | None = None
    """The configuration's note that the program rewrites its argv before its parser reads it."""
    unparsed_after: str | None = None
    """The word from which on the program keeps its command line for itself (not parsed)."""
    _commands: dict[int, EffectiveTool] = field(default_factory=dict)

    def node_at(self, path: Sequence[str]) -> CommandNode | None:
        """The node the words ``path`` route to, or ``None``."""
        return follow(self.root, path)

    def command_tool(self, node: CommandNode) -> EffectiveTool:
        """What an example that names ``node``'s command is checked as.

        The catalog tool of that command when there is one (its overlays, requirements,
        constraints and bypass flags apply); otherwise the command as the tree declares it,
        with no catalog rules. An example in a README binds to the command it names this way.
        """
        if node.tool is not None:
            return node.tool
        made = self._commands.get(id(node))
        if made is None:
            made = self._commands[id(node)] = self._tree_tool(node)
        return made

    def _tree_tool(self, node: CommandNode) -> EffectiveTool:
        tool = Tool(id=" ".join((self.program, *node.path)), command=list(node.path))
        if self.tree is None:
            return EffectiveTool(tool=tool, index=-1, node=node, parameters=list(node.parameters))
        parameters, origin = visible_parameters(self.root, node.path)
        constraints = NO_CONSTRAINTS
        if not DIALECTS[self.dialect].enforces_constraints:
            constraints = node.framework_constraints
        return EffectiveTool(
            tool=tool,
            index=-1,
            node=node,
            parameters=parameters,
            constraints=constraints,
            names={p.name: p.name for p in parameters},
            origin=origin,
        )

    def runnable_leaves(self) -> list[CommandNode]:
        """Every public runnable command without subcommands (what coverage is checked against)."""
        found: list[CommandNode] = []
        pending = [self.root]
        seen: set[int] = set()
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.hidden:
                continue
            if node.runnable and not node.is_group:
                found.append(node)
            pending.extend(node.children[name] for name in reversed(node.names))
        return found


# -- routing ------------------------------------------------------------------------------------


def follow(root: CommandNode, words: Sequence[str]) -> CommandNode | None:
    """The node ``words`` route to from ``root``, or ``None`` where one of them routes nowhere."""
    node = root
    for word in words:
        child = node.children.get(word)
        if child is None:
            return None
        node = child
    return node


def visible_parameters(
    root: CommandNode, words: Sequence[str]
) -> tuple[list[Parameter], dict[int, str]]:
    """Every parameter an example of the command at ``words`` may give, top level first.

    Returns the parameters and, for each as declared in the routing tree, its effective name.
    Deeper declarations win a name clash; an ancestor's clashing name is qualified with its path.
    """
    nodes = [root]
    node = root
    for word in words:
        node = node.children[word]
        nodes.append(node)
    result: list[Parameter] = []
    origin: dict[int, str] = {}
    names: set[str] = set()
    leaf_names = {p.name for p in nodes[-1].accepted()}
    for depth, level in enumerate(nodes):
        is_leaf = depth == len(nodes) - 1
        for declared in level.accepted() if is_leaf else level.parameters:
            if not is_leaf and declared.persistent:
                continue
            parameter = declared
            name = declared.name
            if not is_leaf and (name in leaf_names or name in names):
                name = ".".join([*level.path, name]) if level.path else f"_.{name}"
                parameter = declared.with_changes(name=name)
            if name in names:
                continue
            names.add(name)
            origin[id(declared)] = name
            result.append(parameter)
    return result, origin
