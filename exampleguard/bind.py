"""Binding an example's words to the command tree, following the framework's own parser.

Two dialects, two parsers, each an exact model of the real one:

* ``click`` (also Typer): per level, options are matched with Click's rules — a value-taking
  option takes the next word even if it starts with ``-``; ``--opt=value``; bundled short flags;
  no abbreviations; a group stops at the first word that is not an option and that word names
  the subcommand. Types and required state are then processed as Click processes them, eager
  options (``--help``) first.
* ``argparse``: the pattern-matching algorithm of ``ArgumentParser.parse_known_args`` — words
  classified as options or arguments up front (negative numbers, abbreviations where the parser
  allows them, ``--``), positionals and options consumed alternately by ``nargs`` patterns,
  subparsers recursing, mutually exclusive groups checked as argparse checks them.

The result is a :class:`Binding`: the resolved command path, every occurrence of every
parameter, the role of each word, and every problem found. Problems do not stop the binder where
the framework's state is still well defined, so one run reports all of an example's defects.
"""

from __future__ import annotations

import bisect
import difflib
import enum
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from exampleguard.contract import CommandNode, Contract
from exampleguard.model import Parameter
from exampleguard.values import convert

__all__ = ["Binding", "Occurrence", "Problem", "Role", "bind"]

Path = tuple[str, ...]


class Role(enum.Enum):
    """What a word of the example turned out to be."""

    PROGRAM = "program"
    COMMAND = "command"
    OPTION = "option"
    VALUE = "value"
    POSITIONAL = "positional"
    SEPARATOR = "separator"
    UNKNOWN = "unknown"
    EXTRA = "extra"


class Piece(NamedTuple):
    """A word, or the part of a word the parser is looking at (a bundle's tail, ``=value``).

    A tuple rather than a dataclass: the binder makes one per word of every example.
    """

    text: str
    word: int
    offset: int = 0

    @property
    def whole(self) -> bool:
        """Whether this is an entire word."""
        return self.offset == 0


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem the binder found, located by word (and characters within it)."""

    code: str
    message: str
    word: int | None = None
    offset: int = 0
    length: int | None = None
    hint: str | None = None
    related: tuple[tuple[str, int], ...] = ()


@dataclass(slots=True)
class Occurrence:
    """One appearance of a parameter: which option string (if any) and which values."""

    parameter: Parameter
    level: Path
    spelling: str
    negated: bool
    word: int
    offset: int = 0
    length: int | None = None
    values: list[Piece] = field(default_factory=list)
    bare: bool = False
    """An optional-value option given without its value."""
    converted: list[Any] | None = field(default=None, repr=False, compare=False)
    """The values already converted while parsing (argparse converts as it goes), if so."""


@dataclass(slots=True)
class Binding:
    """Everything the binder learned about one example."""

    path: Path | None
    node: CommandNode | None
    occurrences: list[Occurrence]
    roles: list[Role]
    problems: list[Problem]
    eager: bool = False
    typed: dict[int, Any] = field(default_factory=dict)
    """Typed value of each given parameter, by ``id`` of the parameter as declared."""

    @property
    def ok(self) -> bool:
        """Whether the framework's parser would accept the example."""
        return not self.problems


def bind(contract: Contract, words: Sequence[str]) -> Binding:
    """Bind the example ``words`` (the program word first) to ``contract``'s command tree."""
    roles = [Role.EXTRA] * len(words)
    binding = Binding(path=None, node=None, occurrences=[], roles=roles, problems=[])
    if not words:
        return binding
    roles[0] = Role.PROGRAM
    pieces = [Piece(text, index) for index, text in enumerate(words) if index > 0]
    if contract.dialect == "argparse":
        _ArgparseBinder(contract, binding).run(pieces)
    else:
        _ClickBinder(contract, binding).run(pieces)
    return binding


# -- shared helpers -----------------------------------------------------------------------------


def _flag_value(parameter: Parameter, negated: bool) -> bool:
    # A --x/--no-x pair stores True and False. A lone flag stores "not its default", which is
    # False for argparse's store_false (default True) and True for everything else.
    if parameter.negation_flags:
        return not negated
    return not parameter.default if isinstance(parameter.default, bool) else True


def _suggest(word: str, candidates: Sequence[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _describe_level(contract: Contract, path: Path) -> str:
    return " ".join([contract.program, *path])


def _elsewhere(contract: Contract, flag: str, here: CommandNode) -> str | None:
    """Where else in the tree ``flag`` is declared, for a helpful hint."""
    pending = deque([contract.root])
    seen: set[int] = set()
    while pending:
        node = pending.popleft()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node is not here and any(flag in p.all_flags for p in node.parameters):
            return _describe_level(contract, node.path)
        pending.extend(node.children[name] for name in node.names)
    return None


class _Base:
    def __init__(self, contract: Contract, binding: Binding) -> None:
        self.contract = contract
        self.binding = binding
        self.syntax = contract.value_syntax
        self.stopped = False

    # problems -----------------------------------------------------------------------------------

    def problem(
        self,
        code: str,
        message: str,
        piece: Piece | None = None,
        *,
        length: int | None = None,
        hint: str | None = None,
        related: tuple[tuple[str, int], ...] = (),
    ) -> None:
        self.binding.problems.append(
            Problem(
                code=code,
                message=message,
                word=piece.word if piece is not None else None,
                offset=piece.offset if piece is not None else 0,
                length=length if length is not None else (len(piece.text) if piece else None),
                hint=hint,
                related=related,
            )
        )

    def role(self, piece: Piece, role: Role) -> None:
        # A word split into pieces keeps the role of its first piece (the option it starts with).
        if piece.whole or self.binding.roles[piece.word] is Role.EXTRA:
            self.binding.roles[piece.word] = role

    def unknown_option(
        self,
        piece: Piece,
        node: CommandNode,
        spelling: str | None = None,
        *,
        offset: int | None = None,
        length: int | None = None,
    ) -> None:
        flag = spelling or piece.text.split("=", 1)[0]
        level = _describe_level(self.contract, node.path)
        where = _elsewhere(self.contract, flag, node)
        hint: str | None
        if where is not None and where != level:
            hint = f"{flag} is an option of '{where}'; give it at that level."
        else:
            candidates = [f for p in node.accepted() for f in p.all_flags if not p.hidden]
            guess = _suggest(flag, candidates)
            hint = f"Did you mean {guess}?" if guess else None
        self.binding.problems.append(
            Problem(
                code="unknown-flag",
                message=f"{flag} is not an option of '{level}'",
                word=piece.word,
                offset=piece.offset if offset is None else offset,
                length=len(flag) if length is None else length,
                hint=hint,
            )
        )
        self.role(piece, Role.UNKNOWN)

    # typing -------------------------------------------------------------------------------------

    def type_values(self, occurrences: list[Occurrence], *, report: bool = True) -> None:
        """Convert each occurrence's values and record the typed value of each parameter.

        With ``report``, values that do not convert become ``bad-type``/``bad-choice`` problems.
        """
        by_parameter: dict[int, list[Occurrence]] = {}
        for occurrence in occurrences:
            by_parameter.setdefault(id(occurrence.parameter), []).append(occurrence)
        for group in by_parameter.values():
            parameter = group[0].parameter
            self.binding.typed[id(parameter)] = self._typed(parameter, group, report=report)

    def _typed(self, parameter: Parameter, group: list[Occurrence], *, report: bool) -> Any:
        if parameter.count:
            return len(group)
        per_occurrence: list[Any] = []
        if not parameter.multiple and not parameter.positional:
            # A repeated single-valued option keeps only its last occurrence; the earlier
            # values are overwritten before anything converts them.
            group = group[-1:]
        for occurrence in group:
            if parameter.is_flag:
                per_occurrence.append(_flag_value(parameter, occurrence.negated))
                continue
            if occurrence.bare:
                per_occurrence.append(True if parameter.type == "boolean" else None)
                continue
            converted = occurrence.converted
            if converted is None:
                converted = self._convert_values(parameter, occurrence.values, report=report)
            nargs = parameter.values_per_occurrence
            single = nargs == 1 or (nargs == "?" and not parameter.positional)
            per_occurrence.append(converted[0] if single and len(converted) == 1 else converted)
        if parameter.positional:
            flat = [
                value
                for item in per_occurrence
                for value in (item if isinstance(item, list) else [item])
            ]
            if parameter.variadic or (isinstance(parameter.nargs, int) and parameter.nargs > 1):
                return flat
            return flat[0] if flat else None
        if parameter.multiple:
            return per_occurrence
        return per_occurrence[-1]

    def _convert_values(
        self, parameter: Parameter, pieces: list[Piece], *, report: bool
    ) -> list[Any]:
        """Convert one occurrence's values in order; a value that fails stays as its text.

        With ``report``, each failure becomes a ``bad-type``/``bad-choice`` problem.
        """
        converted = []
        for position, piece in enumerate(pieces):
            value, error = convert(
                parameter,
                piece.text,
                position,
                syntax=self.syntax,
                dialect=self.contract.dialect,
            )
            if error is not None and report:
                self.problem(
                    error.code,
                    f"{error.message} for {parameter.display()}",
                    piece,
                    hint=_choices_hint(parameter) if error.code == "bad-choice" else None,
                )
            converted.append(value)
        return converted

    def repeated(self, occurrences: list[Occurrence]) -> None:
        """Warn when a single-valued option is given more than once (the last one wins)."""
        first: dict[int, Occurrence] = {}
        for occurrence in occurrences:
            parameter = occurrence.parameter
            if parameter.positional or parameter.multiple or parameter.count or parameter.eager:
                continue
            earlier = first.get(id(parameter))
            if earlier is None:
                first[id(parameter)] = occurrence
                continue
            self.binding.problems.append(
                Problem(
                    code="repeated-option",
                    message=f"{parameter.display()} is given more than once; only the last "
                    "value takes effect",
                    word=occurrence.word,
                    offset=occurrence.offset,
                    length=occurrence.length,
                    related=(("first given here", earlier.word),),
                )
            )


def _choices_hint(parameter: Parameter) -> str:
    return "Choose from: " + ", ".join(str(c) for c in parameter.choices or ())


# -- Click --------------------------------------------------------------------------------------


@dataclass(slots=True)
class _ClickOption:
    parameter: Parameter
    negated: bool

    @property
    def takes_value(self) -> bool:
        return not self.parameter.is_flag

    @property
    def optional_value(self) -> bool:
        return self.parameter.values_per_occurrence == "?"

    @property
    def nargs(self) -> int:
        value = self.parameter.values_per_occurrence
        return value if isinstance(value, int) and value > 0 else 1


@dataclass(slots=True)
class _ClickTable:
    long: dict[str, _ClickOption]
    short: dict[str, _ClickOption]
    prefixes: set[str]
    positionals: list[Parameter]
    specs: list[int]
    """Each positional's nargs as Click distributes words (``-1`` takes the rest)."""
    required: list[Parameter]
    """Parameters Click itself requires (prompts excluded: Click would ask, the rules object)."""
    routes_only: bool
    """A group with no positionals and nothing required: a non-option word just routes."""


def _split_opt(option: str) -> tuple[str, str]:
    known = _SPLIT.get(option)
    if known is not None:
        return known
    first = option[:1]
    if first.isalnum():
        split = ("", option)
    elif option[1:2] == first:
        split = (option[:2], option[2:])
    else:
        split = (first, option[1:])
    _SPLIT[option] = split
    return split


_SPLIT: dict[str, tuple[str, str]] = {}
"""Option strings already split into prefix and name (Click's ``_split_opt``)."""


def _click_table(node: CommandNode) -> _ClickTable:
    cached = node.cache.get("click")
    if isinstance(cached, _ClickTable):
        return cached
    long: dict[str, _ClickOption] = {}
    short: dict[str, _ClickOption] = {}
    prefixes = {"-", "--"}
    positionals: list[Parameter] = []
    accepted = node.accepted()
    for parameter in accepted:
        if parameter.positional:
            positionals.append(parameter)
            continue
        for negated, flags in ((False, parameter.flags), (True, parameter.negation_flags)):
            option = _ClickOption(parameter, negated)
            for flag in flags:
                prefix, rest = _split_opt(flag)
                if not prefix:
                    continue
                prefixes.add(prefix[0])
                if len(prefix) == 1 and len(rest) == 1:
                    short.setdefault(flag, option)
                else:
                    long.setdefault(flag, option)
                    prefixes.add(prefix)
    required = [
        p
        for p in accepted
        if not p.prompt and (p.required is True or (p.positional and p.is_required))
    ]
    routes_only = node.is_group and not positionals and not required
    specs = [_click_nargs(p) for p in positionals]
    table = _ClickTable(long, short, prefixes, positionals, specs, required, routes_only)
    node.cache["click"] = table
    return table


class _ClickLevel:
    """The state of parsing one level (Click's ``_ParsingState``)."""

    def __init__(self, node: CommandNode, pieces: list[Piece]) -> None:
        self.node = node
        self.rargs: deque[Piece] = deque(pieces)
        self.largs: list[Piece] = []
        self.occurrences: list[Occurrence] = []
        self.failed = False


class _ClickBinder(_Base):
    def run(self, pieces: list[Piece]) -> None:
        node = self.contract.root
        all_occurrences: list[Occurrence] = []
        while True:
            if not pieces and node.default_command and node.default_if_no_args:
                child = node.children.get(node.default_command)
                if child is not None:
                    node = child
                    continue
            if (
                not pieces
                and node.settings.no_args_is_help
                and (node.runnable or not node.is_group)
            ):
                self.problem(
                    "not-runnable",
                    f"'{_describe_level(self.contract, node.path)}' prints its help and fails "
                    "when given no arguments",
                )
                self.binding.path = node.path
                self.binding.node = node
                break
            table = _click_table(node)
            if table.routes_only and pieces:
                # The common case of a group: its first word is not an option, so parsing the
                # level would stop right there; route without building the level's state.
                first = pieces[0]
                text = first.text
                child = node.children.get(text)
                if child is not None and not (text[:1] in table.prefixes and len(text) > 1):
                    self.role(first, Role.COMMAND)
                    node, pieces = child, pieces[1:]
                    continue
            level = _ClickLevel(node, pieces)
            rest = self._parse_level(level)
            all_occurrences.extend(level.occurrences)
            eager = any(o.parameter.eager for o in level.occurrences)
            if eager:
                # Click runs eager callbacks first; help and version exit before anything else
                # is converted or required.
                self.type_values(level.occurrences, report=False)
                self.binding.eager = True
                self.binding.path = node.path
                self.binding.node = node
                break
            self._process(level)
            if not node.is_group:
                self._leftover(level, rest)
                self.binding.path = node.path
                self.binding.node = node
                break
            if not rest:
                self.binding.path = node.path
                self.binding.node = node
                if not node.runnable:
                    names = ", ".join(node.names[:6])
                    self.problem(
                        "not-runnable",
                        f"'{_describe_level(self.contract, node.path)}' needs a subcommand",
                        hint=f"Subcommands: {names}" if names else None,
                    )
                break
            word = rest[0]
            child = node.children.get(word.text)
            if child is not None:
                self.role(word, Role.COMMAND)
                node, pieces = child, rest[1:]
                continue
            if node.default_command and node.default_command in node.children:
                node, pieces = node.children[node.default_command], rest
                continue
            self.binding.path = node.path
            self.binding.node = node
            if _split_opt(word.text)[0]:
                # Click re-parses the group's words to report the option; if that parse reaches
                # an eager option (`-- -h`), help runs and the command line is accepted.
                if self._reparse_reaches_eager(node, rest):
                    self.binding.eager = True
                    break
                self.unknown_option(word, node)
            else:
                guess = node.suggest(word.text)
                self.problem(
                    "unknown-command",
                    f"'{word.text}' is not a command of "
                    f"'{_describe_level(self.contract, node.path)}'",
                    word,
                    hint=f"Did you mean '{guess}'?" if guess else None,
                )
                self.role(word, Role.UNKNOWN)
            for piece in rest[1:]:
                self.role(piece, Role.EXTRA)
            self.binding.node = None
            self.binding.path = None
            break
        self.binding.occurrences = all_occurrences
        if not self.binding.eager:
            self.repeated(all_occurrences)

    def _reparse_reaches_eager(self, node: CommandNode, rest: list[Piece]) -> bool:
        problems = len(self.binding.problems)
        roles = list(self.binding.roles)
        level = _ClickLevel(node, list(rest))
        self._parse_level(level)
        reached = len(self.binding.problems) == problems and any(
            o.parameter.eager for o in level.occurrences
        )
        if not reached:
            del self.binding.problems[problems:]
            self.binding.roles[:] = roles
        return reached

    # option parsing (Click's _OptionParser) -----------------------------------------------------

    def _parse_level(self, level: _ClickLevel) -> list[Piece]:
        table = _click_table(level.node)
        settings = level.node.settings
        interspersed = settings.allow_interspersed_args and not level.node.is_group
        while level.rargs and not level.failed:
            piece = level.rargs.popleft()
            if piece.text == "--":
                self.role(piece, Role.SEPARATOR)
                break
            if piece.text[:1] in table.prefixes and len(piece.text) > 1:
                self._process_opts(level, table, piece)
            elif interspersed:
                level.largs.append(piece)
            else:
                level.rargs.appendleft(piece)
                break
        if level.failed:
            for piece in level.rargs:
                self.role(piece, Role.EXTRA)
            return []
        return self._positionals(level, table)

    def _process_opts(self, level: _ClickLevel, table: _ClickTable, piece: Piece) -> None:
        text = piece.text
        explicit: str | None = None
        name = text
        if "=" in text:
            name, explicit = text.split("=", 1)
        option = table.long.get(name)
        if option is not None:
            self._match_long(level, table, option=option, name=name, explicit=explicit, piece=piece)
            return
        if text[:2] not in table.prefixes:
            self._match_short(level, table, piece)
            return
        if level.node.settings.ignore_unknown_options:
            level.largs.append(piece)
            return
        self.unknown_option(piece, level.node, None)

    def _match_long(
        self,
        level: _ClickLevel,
        table: _ClickTable,
        *,
        option: _ClickOption,
        name: str,
        explicit: str | None,
        piece: Piece,
    ) -> None:
        occurrence = Occurrence(
            parameter=option.parameter,
            level=level.node.path,
            spelling=name,
            negated=option.negated,
            word=piece.word,
            offset=piece.offset,
            length=len(name),
        )
        self.role(piece, Role.OPTION)
        if option.takes_value:
            if explicit is not None:
                level.rargs.appendleft(Piece(explicit, piece.word, piece.offset + len(name) + 1))
            self._take_values(
                level, table, option=option, occurrence=occurrence, name=name, piece=piece
            )
        elif explicit is not None:
            self.problem(
                "unexpected-value",
                f"{name} takes no value, but was given {explicit!r}",
                piece,
                hint="Write the flag alone"
                + (
                    f", or its negation {option.parameter.negation_flags[0]}."
                    if option.parameter.negation_flags
                    else "."
                ),
            )
            return
        level.occurrences.append(occurrence)

    def _match_short(self, level: _ClickLevel, table: _ClickTable, piece: Piece) -> None:
        text = piece.text
        prefix = text[0]
        unknown: list[str] = []
        position = 1
        for char in text[1:]:
            name = f"{prefix}{char}"
            option = table.short.get(name)
            position += 1
            if option is None:
                if level.node.settings.ignore_unknown_options:
                    unknown.append(char)
                    continue
                # Click stops at the first unknown character of a bundle.
                alone = len(text) == 2
                self.unknown_option(
                    piece,
                    level.node,
                    name,
                    offset=piece.offset if alone else piece.offset + position - 1,
                    length=2 if alone else 1,
                )
                if position > 2:
                    self.role(piece, Role.OPTION)
                return
            alone = len(text) == 2
            occurrence = Occurrence(
                parameter=option.parameter,
                level=level.node.path,
                spelling=name,
                negated=option.negated,
                word=piece.word,
                # Alone, the flag is the whole word; in a bundle, its own character.
                offset=piece.offset if alone else piece.offset + position - 1,
                length=2 if alone else 1,
            )
            self.role(piece, Role.OPTION)
            if option.takes_value:
                stop = position < len(text)
                if stop:
                    level.rargs.appendleft(
                        Piece(text[position:], piece.word, piece.offset + position)
                    )
                self._take_values(
                    level, table, option=option, occurrence=occurrence, name=name, piece=piece
                )
                level.occurrences.append(occurrence)
                if stop:
                    break
            else:
                level.occurrences.append(occurrence)
        if unknown and level.node.settings.ignore_unknown_options:
            level.largs.append(Piece(prefix + "".join(unknown), piece.word, piece.offset))

    def _take_values(
        self,
        level: _ClickLevel,
        table: _ClickTable,
        *,
        option: _ClickOption,
        occurrence: Occurrence,
        name: str,
        piece: Piece,
    ) -> None:
        nargs = option.nargs
        if len(level.rargs) < nargs:
            if option.optional_value:
                occurrence.bare = True
                return
            self.problem(
                "missing-value",
                f"{name} needs {'a value' if nargs == 1 else f'{nargs} values'}",
                piece,
                length=len(name) if piece.whole else None,
            )
            for leftover in level.rargs:
                self.role(leftover, Role.VALUE)
            level.rargs.clear()
            level.failed = True
            return
        if nargs == 1:
            following = level.rargs[0]
            if (
                option.optional_value
                and following.text[:1] in table.prefixes
                and len(following.text) > 1
            ):
                occurrence.bare = True
                return
            value = level.rargs.popleft()
            occurrence.values.append(value)
            self.role(value, Role.VALUE)
            return
        for _ in range(nargs):
            value = level.rargs.popleft()
            occurrence.values.append(value)
            self.role(value, Role.VALUE)

    def _positionals(self, level: _ClickLevel, table: _ClickTable) -> list[Piece]:
        remaining = [*level.largs, *level.rargs]
        if not table.positionals:
            return remaining
        assigned, rest = _unpack(remaining, table.specs)
        for parameter, nargs, values in zip(table.positionals, table.specs, assigned, strict=True):
            if values is None or (isinstance(values, list) and all(v is None for v in values)):
                continue
            if isinstance(values, list) and nargs > 1 and any(v is None for v in values):
                given = [v for v in values if v is not None]
                self.problem(
                    "missing-value",
                    f"{parameter.display()} takes {nargs} values, {len(given)} given",
                    given[0] if given else None,
                )
                for value in given:
                    self.role(value, Role.POSITIONAL)
                level.failed = True
                continue
            pieces = values if isinstance(values, list) else [values]
            concrete = [p for p in pieces if p is not None]
            for piece in concrete:
                self.role(piece, Role.POSITIONAL)
            level.occurrences.append(
                Occurrence(
                    parameter=parameter,
                    level=level.node.path,
                    spelling="",
                    negated=False,
                    word=concrete[0].word,
                    values=concrete,
                )
            )
        return rest

    def _leftover(self, level: _ClickLevel, rest: list[Piece]) -> None:
        if not rest or level.failed:
            return
        for piece in rest:
            self.role(piece, Role.EXTRA)
        if level.node.settings.allow_extra_args:
            return
        first = rest[0]
        accepted = sum(1 for p in level.node.accepted() if p.positional)
        self.binding.problems.append(
            Problem(
                code="extra-positional",
                message=f"unexpected extra argument(s) {' '.join(repr(p.text) for p in rest)}: "
                f"'{_describe_level(self.contract, level.node.path)}' takes "
                f"{accepted or 'no'} positional argument{'s' if accepted != 1 else ''}",
                word=first.word,
                offset=first.offset,
                length=None,
                hint="Quote a value that contains spaces, or remove the extra words."
                if accepted
                else None,
            )
        )

    # processing (Click's handle_parse_result) ---------------------------------------------------

    def _process(self, level: _ClickLevel) -> None:
        if level.failed:
            return
        self.type_values(level.occurrences)
        required = _click_table(level.node).required
        if not required:
            return
        given = {id(o.parameter) for o in level.occurrences}
        for parameter in required:
            if id(parameter) not in given:
                self.problem(
                    "missing-required",
                    f"'{_describe_level(self.contract, level.node.path)}' requires "
                    f"{parameter.display()}",
                )


def _click_nargs(parameter: Parameter) -> int:
    value = parameter.values_per_occurrence
    if value in ("*", "+", "...", -1):
        return -1
    if value == "?":
        return 1
    return int(value)


def _unpack(pieces: list[Piece], specs: list[int]) -> tuple[list[Any], list[Piece]]:
    """Distribute words over positional parameters by nargs, exactly as Click does.

    A variadic parameter (``-1``) takes what the parameters after it do not need; a missing
    single value is ``None``; a fixed-count parameter gets a list with ``None`` holes.
    """
    words = deque(pieces)
    pending = deque(specs)
    result: list[Any] = []
    star: int | None = None

    def fetch() -> Piece | None:
        if not words:
            return None
        return words.popleft() if star is None else words.pop()

    while pending:
        nargs = pending.popleft() if star is None else pending.pop()
        if nargs == 1:
            result.append(fetch())
        elif nargs > 1:
            taken = [fetch() for _ in range(nargs)]
            if star is not None:
                taken.reverse()
            result.append(taken)
        elif nargs < 0:
            star = len(result)
            result.append(None)
    if star is not None:
        result[star] = list(words)
        words.clear()
        result[star + 1 :] = reversed(result[star + 1 :])
    return result, list(words)


# -- argparse -----------------------------------------------------------------------------------

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_PARSER = "A..."
_SUBCOMMAND = Parameter(name="{command}", positional=True, nargs="+", required=True)


@dataclass(slots=True)
class _Action:
    parameter: Parameter
    negated: bool = False

    @property
    def is_subcommand(self) -> bool:
        return self.parameter is _SUBCOMMAND


@dataclass(slots=True)
class _ArgparseTable:
    options: dict[str, _Action]
    actions: list[Parameter]
    positionals: list[Parameter]
    prefix_chars: str
    allow_abbrev: bool
    negative_number_options: bool
    conflicts: dict[int, list[Parameter]]
    """Each mutually exclusive parameter (by ``id``) → the members of its groups it excludes."""
    require_one_of: list[list[Parameter]]
    """The parameters of each non-empty require-one-of group, in declaration order."""


def _argparse_table(node: CommandNode) -> _ArgparseTable:
    cached = node.cache.get("argparse")
    if isinstance(cached, _ArgparseTable):
        return cached
    options: dict[str, _Action] = {}
    positionals: list[Parameter] = []
    accepted = node.accepted()
    for parameter in accepted:
        if parameter.positional:
            positionals.append(parameter)
            continue
        for flag in parameter.flags:
            options.setdefault(flag, _Action(parameter))
        for flag in parameter.negation_flags:
            options.setdefault(flag, _Action(parameter, negated=True))
    if node.is_group:
        positionals.append(_SUBCOMMAND)
    table = _ArgparseTable(
        options=options,
        actions=accepted,
        positionals=positionals,
        prefix_chars=node.settings.prefix_chars,
        allow_abbrev=node.settings.allow_abbrev,
        negative_number_options=any(_NEGATIVE_NUMBER.match(flag) for flag in options),
        conflicts=_conflicts(node),
        require_one_of=_require_one_of(node),
    )
    node.cache["argparse"] = table
    return table


def _conflicts(node: CommandNode) -> dict[int, list[Parameter]]:
    by_name = {p.name: p for p in node.parameters}
    conflicts: dict[int, list[Parameter]] = {}
    for group in node.framework_constraints.mutually_exclusive:
        members = [by_name[name] for name in group if name in by_name]
        for member in members:
            conflicts.setdefault(id(member), []).extend(m for m in members if m is not member)
    return conflicts


def _require_one_of(node: CommandNode) -> list[list[Parameter]]:
    by_name = {p.name: p for p in node.parameters}
    groups = (
        [by_name[name] for name in group if name in by_name]
        for group in node.framework_constraints.require_one_of
    )
    # A group naming none of this node's parameters is never checked.
    return [members for members in groups if members]


def _pattern(parameter: Parameter) -> str:
    """The regular expression argparse matches an action's arguments with.

    The same patterns as argparse's ``_get_nargs_pattern``, over a string with one letter per word:
    ``O`` an option, ``A`` an argument, ``-`` the ``--`` separator.
    """
    if parameter is _SUBCOMMAND:
        nargs: Any = _PARSER
    else:
        nargs = parameter.values_per_occurrence
        if nargs == -1:
            nargs = "+" if parameter.is_required else "*"
    if nargs == 1:
        pattern = "(-*A-*)"
    elif nargs == "?":
        pattern = "(-*A?-*)"
    elif nargs == "*":
        pattern = "(-*[A-]*)"
    elif nargs == "+":
        pattern = "(-*A[A-]*)"
    elif nargs == "...":
        pattern = "([-AO]*)"
    elif nargs == _PARSER:
        pattern = "(-*A[-AO]*)"
    else:
        pattern = "(-*%s-*)" % "-*".join("A" * int(nargs))  # noqa: UP031 - mirrors argparse
    if not parameter.positional:
        pattern = pattern.replace("-*", "").replace("-", "")
    return pattern


class _ArgparseStop(Exception):
    """argparse stops here: an eager action ran (help, version)."""


class _ArgparseAbort(Exception):
    """argparse cannot go on at all (an unknown subcommand): nothing after it is parsed."""


class _ArgparseBinder(_Base):
    def __init__(self, contract: Contract, binding: Binding) -> None:
        super().__init__(contract, binding)
        self.occurrences: list[Occurrence] = []
        self.origin: dict[int, tuple[CommandNode, str]] = {}
        """Word index of an unrecognised piece → the parser and prefix characters it came from."""

    def run(self, pieces: list[Piece]) -> None:
        try:
            extras = self._parse(self.contract.root, pieces)
        except _ArgparseStop:
            self.binding.eager = True
            extras = []
        except _ArgparseAbort:
            extras = []
        self.binding.occurrences = self.occurrences
        self.type_values(self.occurrences, report=False)
        if extras:
            self._unrecognized(extras)
        if not self.binding.eager:
            self.repeated(self.occurrences)

    def _unrecognized(self, extras: list[Piece]) -> None:
        # parse_args fails on whatever no parser recognised, subparsers' leftovers included.
        for piece in extras:
            node, prefix_chars = self.origin.get(piece.word, (self.contract.root, "-"))
            if self.binding.roles[piece.word] is Role.UNKNOWN:
                continue
            if piece.text[:1] in prefix_chars and len(piece.text) > 1:
                self.unknown_option(piece, node)
            else:
                self.problem(
                    "extra-positional",
                    f"unrecognized argument {piece.text!r}: "
                    f"'{_describe_level(self.contract, node.path)}' does not take it",
                    piece,
                )
                self.role(piece, Role.EXTRA)

    def _parse(self, node: CommandNode, pieces: list[Piece]) -> list[Piece]:
        """One parser's ``_parse_known_args``: returns the words it did not recognise."""
        table = _argparse_table(node)
        self.binding.node = node
        self.binding.path = node.path
        options: dict[int, tuple[_Action | None, str, str | None]] = {}
        parts: list[str] = []
        after_separator = False
        for index, piece in enumerate(pieces):
            if after_separator:
                parts.append("A")
            elif piece.text == "--":
                parts.append("-")
                after_separator = True
            else:
                found = self._parse_optional(table, piece)
                if found is None:
                    parts.append("A")
                else:
                    options[index] = found
                    parts.append("O")
        pattern = "".join(parts)
        state = _ArgparseState(node, table)
        positionals = list(table.positionals)

        def consume_optional(start: int) -> int:
            action, spelling, explicit = options[start]
            source = pieces[start]
            if action is None:
                state.extras.append(source)
                self.origin[source.word] = (node, table.prefix_chars)
                return start + 1
            self.role(source, Role.OPTION)
            # Each entry: the action, its values, the option string, and where in the word the
            # option's own characters are (a bundle's later options are one character each).
            batch: list[tuple[_Action, list[Piece], str, int, int]] = []
            where = (source.offset, min(len(spelling), len(source.text)))
            stop = start + 1
            while True:
                if explicit is not None:
                    count = self._match_count(action.parameter, "A")
                    if count == 0 and spelling[1] not in table.prefix_chars and explicit != "":
                        batch.append((action, [], spelling, *where))
                        where = (source.offset + len(source.text) - len(explicit), 1)
                        spelling, rest = spelling[0] + explicit[0], explicit[1:] or None
                        if spelling in table.options:
                            action, explicit = table.options[spelling], rest
                            continue
                        self.problem(
                            "unexpected-value",
                            f"{batch[-1][2]} takes no value, and {explicit!r} is not a bundle "
                            "of options",
                            source,
                        )
                        return stop
                    if count == 1:
                        # The explicit value is always the tail of the word.
                        value_at = source.offset + len(source.text) - len(explicit)
                        batch.append(
                            (action, [Piece(explicit, source.word, value_at)], spelling, *where)
                        )
                        break
                    if count is None:
                        self.problem(
                            "missing-value",
                            f"{spelling} {self._expected(action.parameter)}",
                            source,
                        )
                    else:
                        self.problem(
                            "unexpected-value",
                            f"{spelling} takes no value, but was given {explicit!r}",
                            source,
                        )
                    return stop
                count = self._match_count(action.parameter, pattern[start + 1 :])
                if count is None:
                    self.problem(
                        "missing-value",
                        f"{spelling} {self._expected(action.parameter)}",
                        source,
                    )
                    return stop
                stop = start + 1 + count
                batch.append((action, list(pieces[start + 1 : stop]), spelling, *where))
                break
            for item_action, values, item_spelling, at, length in batch:
                self._take(
                    state,
                    item_action,
                    values,
                    spelling=item_spelling,
                    source=source,
                    offset=at,
                    length=length,
                )
            return stop

        def consume_positionals(start: int) -> int:
            counts = self._match_partial(positionals, pattern[start:])
            for parameter, count in zip(positionals, counts, strict=False):
                values = list(pieces[start : start + count])
                start += count
                self._take(
                    state, _Action(parameter), values, spelling="", source=None, offset=0, length=0
                )
            del positionals[: len(counts)]
            return start

        start = 0
        # Sorted once: a long example with many options must not cost a scan per option.
        option_indices = sorted(options)
        last_option = option_indices[-1] if option_indices else -1
        while start <= last_option:
            following = option_indices[bisect.bisect_left(option_indices, start)]
            if start != following:
                end = consume_positionals(start)
                if end > start:
                    start = end
                    continue
                start = end
            if start not in options:
                state.extras.extend(pieces[start:following])
                for piece in pieces[start:following]:
                    self.origin[piece.word] = (node, table.prefix_chars)
                start = following
            start = consume_optional(start)
        stop = consume_positionals(start)
        for piece in pieces[stop:]:
            self.origin[piece.word] = (node, table.prefix_chars)
        state.extras.extend(pieces[stop:])
        self._required(state)
        return state.extras

    def _take(
        self,
        state: _ArgparseState,
        action: _Action,
        values: list[Piece],
        *,
        spelling: str,
        source: Piece | None,
        offset: int,
        length: int,
    ) -> None:
        """Argparse's ``take_action``: convert, check conflicts, run the action."""
        parameter = action.parameter
        state.seen.add(id(parameter))
        if action.is_subcommand:
            state.seen_non_default.add(id(parameter))
            state.extras.extend(self._subcommand(state.node, values))
            return
        given = list(values)
        if parameter.values_per_occurrence != "..." and any(v.text == "--" for v in given):
            # argparse drops the first "--" from an action's arguments.
            first = next(i for i, v in enumerate(given) if v.text == "--")
            self.role(given[first], Role.SEPARATOR)
            del given[first]
        occurrence = Occurrence(
            parameter=parameter,
            level=state.node.path,
            spelling=spelling,
            negated=action.negated,
            word=source.word if source is not None else (given[0].word if given else -1),
            offset=offset if source is not None else (given[0].offset if given else 0),
            length=length if source is not None else None,
            values=given,
            bare=parameter.values_per_occurrence == "?" and not parameter.positional and not given,
        )
        for value in given:
            self.role(value, Role.POSITIONAL if parameter.positional else Role.VALUE)
        before = len(self.binding.problems)
        self._check_values(parameter, occurrence)
        if not parameter.positional or given:
            self.occurrences.append(occurrence)
        if len(self.binding.problems) == before and not self._is_default(parameter, occurrence):
            state.seen_non_default.add(id(parameter))
            for other in state.table.conflicts.get(id(parameter), []):
                if id(other) in state.seen_non_default:
                    earlier = next(
                        (o for o in self.occurrences if o.parameter is other and o.word >= 0), None
                    )
                    self.binding.problems.append(
                        Problem(
                            code="mutually-exclusive",
                            message=f"{parameter.display()} is not allowed with {other.display()}",
                            word=occurrence.word if occurrence.word >= 0 else None,
                            offset=occurrence.offset,
                            length=occurrence.length,
                            related=(("given here", earlier.word),) if earlier else (),
                        )
                    )
        if parameter.eager:
            raise _ArgparseStop

    # pieces of the algorithm --------------------------------------------------------------------

    def _parse_optional(
        self, table: _ArgparseTable, piece: Piece
    ) -> tuple[_Action | None, str, str | None] | None:
        text = piece.text
        if not text or text[0] not in table.prefix_chars:
            return None
        if text in table.options:
            return table.options[text], text, None
        if len(text) == 1:
            return None
        if "=" in text:
            name, explicit = text.split("=", 1)
            if name in table.options:
                return table.options[name], name, explicit
        matches = self._option_tuples(table, text)
        if len(matches) > 1:
            names = ", ".join(spelling for _, spelling, _ in matches)
            self.problem(
                "unknown-flag",
                f"{text.split('=', 1)[0]} is ambiguous: it could be {names}",
                piece,
                hint="Write the option in full.",
            )
            self.role(piece, Role.UNKNOWN)
            return None, text, None
        if len(matches) == 1:
            return matches[0]
        if _NEGATIVE_NUMBER.match(text) and not table.negative_number_options:
            return None
        if " " in text:
            return None
        return None, text, None

    def _option_tuples(
        self, table: _ArgparseTable, text: str
    ) -> list[tuple[_Action, str, str | None]]:
        found: list[tuple[_Action, str, str | None]] = []
        chars = table.prefix_chars
        if text[0] in chars and text[1] in chars:
            if table.allow_abbrev:
                prefix, separator, explicit_text = text.partition("=")
                explicit = explicit_text if separator else None
                for spelling, action in table.options.items():
                    if spelling.startswith(prefix):
                        found.append((action, spelling, explicit))
        elif text[0] in chars:
            short, short_explicit = text[:2], text[2:]
            for spelling, action in table.options.items():
                if spelling == short:
                    found.append((action, spelling, short_explicit))
                elif spelling.startswith(text):
                    found.append((action, spelling, None))
        return found

    def _match_count(self, parameter: Parameter, pattern: str) -> int | None:
        match = re.match(_pattern(parameter), pattern)
        return None if match is None else len(match.group(1))

    def _match_partial(self, actions: list[Parameter], pattern: str) -> list[int]:
        for size in range(len(actions), 0, -1):
            joined = "".join(_pattern(p) for p in actions[:size])
            match = re.match(joined, pattern)
            if match is not None:
                return [len(group) for group in match.groups()]
        return []

    def _expected(self, parameter: Parameter) -> str:
        nargs = parameter.values_per_occurrence
        if nargs == "?":
            return "expects at most one value"
        if nargs == "+":
            return "expects at least one value"
        if isinstance(nargs, int) and nargs > 1:
            return f"expects {nargs} values"
        return "expects a value"

    def _is_default(self, parameter: Parameter, occurrence: Occurrence) -> bool:
        """Whether argparse would take the converted value for the default (an identity test).

        argparse compares with ``is``: an optional positional that received nothing yields the
        default object itself, and CPython shares small integers and the empty string, so such
        a value equal to the default counts as "not given" when argparse checks mutual
        exclusion and required groups.
        """
        default = parameter.default
        values = occurrence.values
        nargs = parameter.values_per_occurrence
        if parameter.is_flag or occurrence.bare:
            return False
        if parameter.positional and not values:
            if nargs == "?":
                return True
            if nargs in ("*", -1):
                return default is not None
            return False
        if len(values) != 1 or nargs not in (1, "?"):
            return False
        text = values[0].text
        kind = parameter.value_type(0)
        if kind == "integer" and isinstance(default, int) and not isinstance(default, bool):
            try:
                number = int(text)
            except ValueError:
                return False
            return -5 <= number <= 256 and number == default
        if kind in ("string", "path") and isinstance(default, str):
            # Only the empty string is shared: words from the command line are new objects
            # even when they are one character long (measured against real processes).
            return text == default == ""
        return False

    def _check_values(self, parameter: Parameter, occurrence: Occurrence) -> None:
        """Convert and check each value now, in parse order, as argparse does."""
        if parameter.is_flag:
            return
        nargs = parameter.values_per_occurrence
        if parameter.choices is not None and parameter.positional and not occurrence.values:
            if nargs in ("*", -1) and parameter.default is None:
                # argparse checks the empty list itself against the choices, and fails.
                self.problem(
                    "bad-choice",
                    f"{parameter.display()} got no value, which argparse rejects because the "
                    "parameter has choices",
                )
            return
        # Kept for typing the occurrence later: the same values, converted the same way.
        occurrence.converted = self._convert_values(parameter, occurrence.values, report=True)

    def _subcommand(self, node: CommandNode, values: list[Piece]) -> list[Piece]:
        name, rest = values[0], values[1:]
        child = node.children.get(name.text)
        if child is None:
            guess = node.suggest(name.text)
            self.problem(
                "unknown-command",
                f"'{name.text}' is not a command of '{_describe_level(self.contract, node.path)}'",
                name,
                hint=f"Did you mean '{guess}'?" if guess else None,
            )
            self.role(name, Role.UNKNOWN)
            self.binding.node = None
            self.binding.path = None
            raise _ArgparseAbort
        self.role(name, Role.COMMAND)
        return self._parse(child, rest)

    def _required(self, state: _ArgparseState) -> None:
        node = state.node
        level = _describe_level(self.contract, node.path)
        if node.is_group and id(_SUBCOMMAND) not in state.seen and not node.runnable:
            names = ", ".join(node.names[:6])
            self.problem(
                "not-runnable",
                f"'{level}' needs a subcommand",
                hint=f"Subcommands: {names}" if names else None,
            )
            self.binding.node = node
            self.binding.path = node.path
        missing = [
            p
            for p in state.table.actions
            if id(p) not in state.seen and (p.required is True or (p.positional and p.is_required))
        ]
        if missing:
            self.problem(
                "missing-required",
                f"'{level}' requires {', '.join(p.display() for p in missing)}",
            )
        for members in state.table.require_one_of:
            if not any(id(m) in state.seen_non_default for m in members):
                self.problem(
                    "require-one-of",
                    f"'{level}' requires one of {', '.join(m.display() for m in members)}",
                )


@dataclass(slots=True)
class _ArgparseState:
    """What one parser has seen so far (the sets ``_parse_known_args`` keeps)."""

    node: CommandNode
    table: _ArgparseTable
    seen: set[int] = field(default_factory=set)
    seen_non_default: set[int] = field(default_factory=set)
    extras: list[Piece] = field(default_factory=list)
