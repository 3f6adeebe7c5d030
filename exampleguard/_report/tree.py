"""Rendering a command tree for people: a rich tree on a terminal, indented text elsewhere."""

from __future__ import annotations

import io

from exampleguard._model import Parameter
from exampleguard._snapshot import Tree, TreeCommand

__all__ = ["render_tree"]


def _parameter_line(parameter: Parameter) -> str:
    if parameter.positional:
        head = parameter.name.upper()
        if parameter.variadic:
            head += "..."
    else:
        head = ", ".join(parameter.all_flags)
        if not parameter.is_flag:
            head += f" {parameter.name.upper()}"
    notes: list[str] = []
    if parameter.type != "string" and not parameter.is_flag:
        notes.append(str(parameter.type))
    if parameter.choices:
        notes.append("one of " + "|".join(str(c) for c in parameter.choices))
    if parameter.is_required:
        notes.append("required")
    if parameter.multiple:
        notes.append("repeatable")
    if parameter.count:
        notes.append("counts")
    if parameter.hidden:
        notes.append("hidden")
    if parameter.eager:
        notes.append("ends parsing")
    return head + (f"  ({', '.join(notes)})" if notes else "")


def _command_line(tree: Tree, command: TreeCommand) -> str:
    words = " ".join([tree.program, *command.path])
    notes: list[str] = []
    if command.aliases:
        notes.append("alias " + ", ".join(alias[-1] for alias in command.aliases))
    if not command.runnable:
        notes.append("group")
    if command.hidden:
        notes.append("hidden")
    if command.default_command:
        notes.append(f"default: {command.default_command}")
    return words + (f"  [{', '.join(notes)}]" if notes else "")


def render_tree(tree: Tree, *, color: bool = False) -> str:
    """Render ``tree`` as text; with ``color``, as a rich tree with styles."""
    # rich is only needed to draw the tree: the other commands never import it.
    from rich.console import Console  # noqa: PLC0415 - see above
    from rich.text import Text  # noqa: PLC0415 - see above
    from rich.tree import Tree as RichTree  # noqa: PLC0415 - see above

    # Text objects, never markup strings: command and option names may contain brackets.
    root = RichTree(Text(f"{tree.program} ({tree.dialect})", style="bold"))
    branches: dict[tuple[str, ...], RichTree] = {}
    for command in sorted(tree.commands, key=lambda c: c.path):
        path = tuple(command.path)
        if path:
            parent = branches.get(path[:-1], root)
            branch = parent.add(Text(_command_line(tree, command), style="cyan"))
        else:
            branch = root
        branches[path] = branch
        for parameter in command.parameters:
            branch.add(Text(_parameter_line(parameter), style="dim" if parameter.hidden else ""))
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        color_system="standard" if color else None,
        width=120,
        highlight=False,
    )
    console.print(root)
    return buffer.getvalue()
