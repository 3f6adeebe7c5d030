"""Framework-neutral helpers shared by the argparse and Click-family adapters.

Only plain data passes through here: each adapter stays the one place that reads its framework's
internals, so this module imports no framework and stays cheap to import in the child process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, TypeVar

__all__ = ["claim_unique_name", "first_line", "group_aliases", "shadow"]

_Command = TypeVar("_Command")


def first_line(text: Any) -> str | None:
    """The first line of ``text`` stripped, or ``None`` when it is not a non-blank string."""
    # Help texts may be arbitrary objects (lazy strings, SUPPRESS markers); only real text counts.
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip().splitlines()[0].strip()


def claim_unique_name(name: str, used: set[str]) -> str:
    """Return ``name``, or ``name_2``, ``name_3``… if taken, and record the result in ``used``."""
    base, counter = name, 2
    while name in used:
        name = f"{base}_{counter}"
        counter += 1
    used.add(name)
    return name


def group_aliases(
    named: Iterable[tuple[str, _Command]],
) -> list[tuple[str, _Command, list[str]]]:
    """Group ``(name, command)`` pairs into ``(name, command, aliases)``, in first-seen order.

    A command registered under several names keeps the first as its name and the rest as aliases.
    """
    # Frameworks register an alias as a second mapping to the very same object, so identity (not
    # equality) is what tells an alias from a distinct command that happens to compare equal.
    found: list[tuple[str, _Command, list[str]]] = []
    by_identity: dict[int, list[str]] = {}
    for name, command in named:
        aliases = by_identity.get(id(command))
        if aliases is not None:
            aliases.append(name)
            continue
        record: tuple[str, _Command, list[str]] = (name, command, [])
        by_identity[id(command)] = record[2]
        found.append(record)
    return found


def shadow(target: Any, attribute: str, replacement: Any, restore: contextlib.ExitStack) -> None:
    """Set ``attribute`` on the object ``target`` until ``restore`` closes, then put it back.

    The judges neutralise an application's parameters and parsers this way for one parse only:
    an instance attribute shadows the class's method, and removing it brings the method back,
    so the next parse sees the objects exactly as the application built them.
    """
    own = attribute in vars(target)
    previous = vars(target).get(attribute)
    setattr(target, attribute, replacement)

    def put_back() -> None:
        if own:
            setattr(target, attribute, previous)
        else:
            with contextlib.suppress(AttributeError):
                delattr(target, attribute)

    restore.callback(put_back)
