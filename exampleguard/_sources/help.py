"""The CLI's own help text as a source of examples: the tree's ``help_examples``.

The tree adapters find the command lines of every help text of a command (its help or
docstring, epilog, argparse description and usage, its parameters' help) by the rule of
:mod:`exampleguard._adapters._helptext`, and the tree snapshot carries them per command. Here
each becomes examples exactly as a Markdown command line does
(:func:`~exampleguard._docshell.line_examples`: every simple command that runs the
program, placeholders noted) and is checked like any documentation example.

Where an example is reported (docs/docs-examples.md, "Examples in help text"):

* from a snapshot file: at the ``command`` string of its ``help_examples`` entry, mapped
  through the JSON escapes, addressed ``tree.json:LINE``;
* from a live tree: at the file, line and column of the Python source where the adapter found
  the line written (a docstring, an ``epilog=``, a module constant), addressed ``FILE:LINE``;
* from a live tree whose help line is not written literally in the source (built at run time):
  at the ``tree`` setting, with the command and the help text named in the location's key,
  addressed ``TREE:COMMAND:FIELD:LINE``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from exampleguard._diagnostics import Location, Span
from exampleguard._docshell import line_examples
from exampleguard._documents import Document
from exampleguard._sources._records import (
    ExampleList,
    ExampleRecord,
    Examples,
    Layout,
    LoadedTree,
    SourceContext,
)
from exampleguard._textindex import KeyPath

if TYPE_CHECKING:
    from exampleguard._snapshot import HelpExample, TreeCommand

__all__ = ["HelpOrigin", "HelpSource", "help_records"]


@dataclass(frozen=True, slots=True)
class _Place:
    """Where one example is: in the snapshot's text, in a source file, or only named."""

    address: str
    key: KeyPath = ()
    offset: int = 0
    layout: Layout | None = None
    named: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class HelpOrigin:
    """The help examples of one file: the snapshot, one source file, or the ``tree`` setting."""

    display: str
    document: Document | None = None
    """The snapshot file's document, for examples located in it."""
    places: list[_Place] = field(default_factory=list)

    @property
    def file(self) -> str:
        """The file, as shown to people."""
        return self.display

    @property
    def kind(self) -> str:
        """``help``."""
        return "help"

    def address(self, index: int) -> str:
        """``tree.json:120``, ``notes/cli.py:41``, or the command and help text it is in."""
        return self.places[index].address

    def location(self, index: int, span: Span | None = None) -> Location:
        """Where example ``index`` (or ``span`` of its text) is."""
        place = self.places[index]
        if place.layout is not None:
            return place.layout.location(self.display, span)
        if self.document is not None:
            start = place.offset + (span.start if span is not None else 0)
            end = place.offset + span.end if span is not None else None
            return self.document.string_location(place.key, start, end)
        return Location(self.display, key=place.named)


class HelpSource:
    """The command lines of the tree's help texts, unless ``help_examples = false``."""

    name = "help_examples"
    reads_tree = True

    def read(self, context: SourceContext) -> Examples:
        """Every example of every command's help text."""
        if context.tree is None or not context.config.settings.help_examples:
            return Examples()
        config = context.config
        records = help_records(
            context.tree,
            context.catalog.catalog.program,
            # The adapter names source files from the project's folder (where it imported the
            # tree); outputs name every file from where the run started.
            lambda file: config.display(config.root / file),
        )
        return ExampleList((), records) if records else Examples()


def help_records(
    loaded: LoadedTree, program: str, shown: Callable[[str], str] = str
) -> list[ExampleRecord]:
    """The examples of every ``help_examples`` entry of the tree, each with its origin.

    ``shown`` turns a source file as the adapter recorded it into the file as outputs show it.
    """
    builder = _Builder(loaded, program, shown)
    for position, command in enumerate(loaded.tree.commands):
        for number, example in enumerate(command.help_examples):
            builder.add(position, command, number, example)
    return builder.records


class _Builder:
    """Turns help lines into located records, one origin per file they are located in."""

    def __init__(self, loaded: LoadedTree, program: str, shown: Callable[[str], str]) -> None:
        self.loaded = loaded
        self.program = program
        self.shown = shown
        self.records: list[ExampleRecord] = []
        self._origins: dict[str, HelpOrigin] = {}
        self._used: set[str] = set()

    def _origin(self, display: str, document: Document | None = None) -> HelpOrigin:
        origin = self._origins.get(display)
        if origin is None:
            origin = self._origins[display] = HelpOrigin(display, document)
        return origin

    def _address(self, base: str, column: int | None) -> str:
        # A second example on one line (`notes a | notes b`) is told apart by its column.
        address = base if base not in self._used or column is None else f"{base}:{column}"
        counter = 2
        while address in self._used:
            address, counter = f"{base}#{counter}", counter + 1
        self._used.add(address)
        return address

    def add(self, position: int, command: TreeCommand, number: int, example: HelpExample) -> None:
        """The examples of help line ``number`` of the command at ``position`` of the tree."""
        text = example.command
        key: KeyPath = ("commands", position, "help_examples", number, "command")
        for found in line_examples(text, self.program):
            place = self._place(command, example, key, found.start, found.end)
            origin = self._origin(*place[0])
            origin.places.append(place[1])
            self.records.append(
                ExampleRecord(
                    None,
                    len(origin.places) - 1,
                    found.text,
                    origin,
                    found.placeholders,
                    found.blanks,
                )
            )

    def _place(
        self, command: TreeCommand, example: HelpExample, key: KeyPath, start: int, end: int
    ) -> tuple[tuple[str, Document | None], _Place]:
        loaded = self.loaded
        if not loaded.live:
            where = loaded.document.string_location(key, start)
            address = self._address(f"{loaded.display}:{where.line}", where.column)
            return (loaded.display, loaded.document), _Place(address, key, start)
        source = example.source
        if source is not None:
            layout = _source_layout(example, start, end)
            file = self.shown(source.file)
            address = self._address(f"{file}:{layout.lines[0]}", layout.columns[0])
            return (file, None), _Place(address, layout=replace(layout, address=address))
        shown = " ".join([self.program, *command.path])
        named = f"'{shown}' {example.field}" + (
            f", line {example.line}" if example.line is not None else ""
        )
        base = f"{loaded.display}:{shown}:{example.field}:{example.line or 1}"
        return (loaded.display, None), _Place(self._address(base, None), named=named)


def _source_layout(example: HelpExample, start: int, end: int) -> Layout:
    """Where ``[start, end)`` of a help line is in the Python source the adapter found it in.

    The first physical line is where the adapter found it; each following one is on the next
    source line, the help text's dedent undone (a docstring keeps its lines' relative
    indentation, so one shift maps every line of it).
    """
    assert example.source is not None
    source = example.source
    text = example.command
    starts: list[int] = [0]
    for index, character in enumerate(text):
        if character == "\n":
            starts.append(index + 1)
    shift = source.column - (example.column or 1)
    places = [(source.line, source.column)]
    places.extend((source.line + k, max(1 + shift, 1)) for k in range(1, len(starts)))
    layout = Layout.of(starts, places, start, end)
    first_end = starts[1] - 1 if len(starts) > 1 else len(text)
    if source.written is None or start >= first_end:
        return layout
    return _through_spelling(layout, text.split("\n", 1)[0], source.written, start)


def _through_spelling(layout: Layout, shown: str, written: str, start: int) -> Layout:
    """``layout`` with the first line's columns mapped through the source's own spelling.

    The two spellings share their ends (``%(prog)s --all`` shows as ``notes delete --all``):
    a character there is where the source has it; one in the part spelled otherwise is placed
    at the start of that part.
    """
    common = 0
    while (
        common < min(len(shown), len(written))
        and shown[len(shown) - 1 - common] == written[len(written) - 1 - common]
    ):
        common += 1
    differs = len(shown) - common
    delta = len(written) - len(shown)
    base = layout.columns[0] - start
    # The first piece becomes one piece per character class: the differing head, then the
    # shared tail (which the source has `delta` columns further on).
    offsets, lines, columns = list(layout.offsets), list(layout.lines), list(layout.columns)
    if start < differs:
        offsets.insert(1, differs - start)
        lines.insert(1, lines[0])
        columns.insert(1, base + differs + delta)
    else:
        columns[0] = base + start + delta
    return Layout(tuple(offsets), tuple(lines), tuple(columns), layout.address)
