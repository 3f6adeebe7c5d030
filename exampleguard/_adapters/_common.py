"""Framework-neutral helpers shared by the argparse and Click-family adapters.

Only plain data passes through here: each adapter stays the one place that reads its framework's
internals, so this module imports no framework and stays cheap to import in the child process.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any, TypeVar

__all__ = [
    "OutputSink",
    "Shadows",
    "claim_unique_name",
    "first_line",
    "group_aliases",
    "switch_stores",
]

_Command = TypeVar("_Command")


def switch_stores(default: Any) -> bool:
    """What a lone boolean switch stores when given, by the model's rule: "not its default".

    That is ``False`` for a default of ``True`` (argparse's ``store_false``) and ``True`` for
    everything else. A switch that stores otherwise has its ``flag_value`` recorded in the tree;
    the binder applies this rule wherever none is.
    """
    return not default if isinstance(default, bool) else True


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


class Shadows:
    """Attributes set on an application's objects for a batch of parses, and put back after it.

    The judges neutralise parameters and parsers once per batch, not once per parse: each
    :meth:`set` notes what it replaced (a plain record, no callback per attribute), and
    :meth:`restore` puts everything back, the last change first, even where putting one back
    fails; an instance attribute that shadowed the class's method is removed, so the objects
    are again exactly as the application built them.
    """

    def __init__(self) -> None:
        self._changes: list[tuple[Any, str, bool, Any]] = []
        self._lists: list[tuple[list[Any], list[Any]]] = []

    def set(self, target: Any, attribute: str, replacement: Any) -> None:
        """Set ``attribute`` on ``target`` until :meth:`restore`."""
        own = vars(target)
        self._changes.append((target, attribute, attribute in own, own.get(attribute)))
        setattr(target, attribute, replacement)

    def replace_items(self, items: list[Any], replacement: list[Any]) -> None:
        """Replace the items of the list ``items`` in place until :meth:`restore`."""
        self._lists.append((items, list(items)))
        items[:] = replacement

    def restore(self) -> None:
        """Put back everything set, last first; the first failure is raised once all is tried."""
        failure: BaseException | None = None
        while self._lists:
            items, previous = self._lists.pop()
            items[:] = previous
        while self._changes:
            target, attribute, own, previous = self._changes.pop()
            try:
                if own:
                    setattr(target, attribute, previous)
                else:
                    # A plain try: a suppress() per attribute is a share of a large batch's end.
                    try:  # noqa: SIM105
                        delattr(target, attribute)
                    except AttributeError:
                        # Already gone: nothing of the application's to put back.
                        pass
            except Exception as error:
                # Every other change is still put back.
                failure = failure or error
        if failure is not None:
            raise failure


class OutputSink(io.TextIOWrapper):
    """Where the application's output goes while a judge parses: a text stream with a buffer.

    A real ``sys.stdout`` has a binary ``buffer``, and programs write to it (a version callback
    that prints bytes; Click's ``echo`` itself, where the stream has one): the text and the
    bytes land in one store, in the order written, and :meth:`getvalue` reads them as text.
    """

    def __init__(self) -> None:
        self._bytes = io.BytesIO()
        super().__init__(self._bytes, encoding="utf-8", errors="replace", write_through=True)

    def getvalue(self) -> str:
        """Everything written since the last :meth:`clear`, as text."""
        self.flush()
        return self._bytes.getvalue().decode("utf-8", "replace")

    def clear(self) -> None:
        """Forget what the last parse wrote."""
        self.flush()
        self._bytes.seek(0)
        self._bytes.truncate()
