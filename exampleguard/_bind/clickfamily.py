"""The ``click`` dialect: Click's parser, and Typer's (which bundles Click), modelled exactly.

Per level, options are matched with Click's rules — a value-taking option takes the next word
even if it starts with ``-``; ``--opt=value``; bundled short flags; no abbreviations; a group
stops at the first word that is not an option and that word names the subcommand. Types and
required state are then processed as Click processes them, eager options (``--help``) first.
Problems do not stop the binder where Click's state is still well defined, so one run reports
all of an example's defects.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from exampleguard._bind._common import BinderBase, describe_level
from exampleguard._bind._records import (
    CLICK_81_BOOLEANS,
    CLICK_BOOLEANS,
    FrameworkRules,
    Occurrence,
    Piece,
    Problem,
    Role,
)
from exampleguard._bind.dialect import Dialect, Memo, RulesRow

if TYPE_CHECKING:
    from exampleguard._contract import CommandNode
    from exampleguard._model import Parameter

__all__ = ["DIALECT"]


@dataclass(slots=True)
class _ClickOption:
    """One option string's entry in a level's table: what Click's parser needs to know of it.

    Derived from the parameter once, when the table is built: the parser asks for every word.
    """

    parameter: Parameter
    negated: bool
    takes_value: bool
    optional_value: bool
    """Whether the value may be left out (``nargs="?"``)."""
    nargs: int
    """How many words one occurrence takes, when it takes any."""

    @classmethod
    def of(cls, parameter: Parameter, negated: bool) -> _ClickOption:
        """The entry of ``parameter``'s option strings (its negations' if ``negated``)."""
        value = parameter.values_per_occurrence
        return cls(
            parameter,
            negated,
            takes_value=not parameter.is_flag,
            optional_value=value == "?",
            nargs=value if isinstance(value, int) and value > 0 else 1,
        )


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


@functools.lru_cache(maxsize=4096)
def _split_opt(option: str) -> tuple[str, str]:
    """An option string's prefix and name, as Click's ``_split_opt`` splits it.

    Remembered for a bounded number of strings: a large catalog repeats the same few flags in
    every command, and every command's table splits them again.
    """
    first = option[:1]
    if first.isalnum():
        return "", option
    if option[1:2] == first:
        return option[:2], option[2:]
    return first, option[1:]


def _click_table(node: CommandNode, memo: Memo) -> _ClickTable:
    """The table of ``node``'s level: built from what it accepts, and whether it is a group."""
    accepted = node.accepted()
    is_group = node.is_group
    key = (is_group, *map(id, accepted))
    table: _ClickTable = memo.shared(
        key, accepted, lambda: _build_click_table(accepted, is_group=is_group)
    )
    return table


def _build_click_table(accepted: list[Parameter], *, is_group: bool) -> _ClickTable:
    long: dict[str, _ClickOption] = {}
    short: dict[str, _ClickOption] = {}
    prefixes = {"-", "--"}
    positionals: list[Parameter] = []
    for parameter in accepted:
        if parameter.positional:
            positionals.append(parameter)
            continue
        for negated, flags in ((False, parameter.flags), (True, parameter.negation_flags)):
            if not flags:
                continue
            option = _ClickOption.of(parameter, negated)
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
    routes_only = is_group and not positionals and not required
    specs = [_click_nargs(p) for p in positionals]
    return _ClickTable(long, short, prefixes, positionals, specs, required, routes_only)


class _ClickLevel:
    """The state of parsing one level (Click's ``_ParsingState``)."""

    def __init__(self, node: CommandNode, table: _ClickTable, pieces: list[Piece]) -> None:
        self.node = node
        self.table = table
        self.rargs: deque[Piece] = deque(pieces)
        self.largs: list[Piece] = []
        self.occurrences: list[Occurrence] = []
        self.failed = False


class _ClickBinder(BinderBase):
    def _table(self, node: CommandNode) -> _ClickTable:
        return _click_table(node, self.memo)

    def run(self, pieces: list[Piece]) -> None:
        """Click's parse of the whole command line, level by level (``Group.invoke``)."""
        self.pieces = pieces
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
                    f"'{describe_level(self.contract, node.path)}' prints its help and fails "
                    "when given no arguments",
                )
                self.binding.path = node.path
                self.binding.node = node
                break
            table = self.compiled(node, self._table)
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
            level = _ClickLevel(node, table, pieces)
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
                    self.needs_subcommand(node)
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
            self._unresolved(node, rest)
            break
        self.binding.occurrences = all_occurrences
        if not self.binding.eager:
            self.repeated(all_occurrences)

    def _unresolved(self, node: CommandNode, rest: list[Piece]) -> None:
        """A group's first leftover word names none of its subcommands: Click fails there."""
        word = rest[0]
        self.binding.path = node.path
        self.binding.node = node
        if _split_opt(word.text)[0]:
            # Click re-parses the group's words (8.1: only those after this one) to report the
            # option; if that parse reaches an eager option (`-- -h`), help runs and the
            # command line is accepted.
            if self._reparse_reaches_eager(node, rest):
                self.binding.eager = True
                return
            self.unknown_option(word, node)
        else:
            self.unknown_command(word, node)
        for piece in rest[1:]:
            self.role(piece, Role.EXTRA)
        self.binding.node = None
        self.binding.path = None

    def _reparse_reaches_eager(self, node: CommandNode, rest: list[Piece]) -> bool:
        problems = len(self.binding.problems)
        roles = list(self.binding.roles)
        words = rest[1:] if self.rules.reparse_skips_command_word else rest
        level = _ClickLevel(node, self.compiled(node, self._table), list(words))
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
        table = level.table
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
                f"'{describe_level(self.contract, level.node.path)}' takes "
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
        before = len(self.binding.problems)
        self.type_values(level.occurrences)
        required = level.table.required
        given = {id(o.parameter) for o in level.occurrences}
        for parameter in required:
            if id(parameter) not in given:
                self.problem(
                    "missing-required",
                    f"'{describe_level(self.contract, level.node.path)}' requires "
                    f"{parameter.display()}",
                )
        if len(self.binding.problems) == before:
            # cloup checks its constraints once the level's values are processed, and only then.
            self._constraints(level)

    def _constraints(self, level: _ClickLevel) -> None:
        """The level's framework constraints (cloup's), as cloup checks ``ctx.params``.

        A parameter is set when it was given, except a switch given its ``False`` (cloup: a
        boolean flag is set only if true). The tree records only constraints where that is
        cloup's own rule (no parameter whose default would count as set).
        """
        rules = level.node.framework_constraints
        if not (rules.require_one_of or rules.require_together or rules.mutually_exclusive):
            return
        typed = self.binding.typed
        first: dict[str, Occurrence] = {}
        for occurrence in level.occurrences:
            parameter = occurrence.parameter
            if parameter.positional and not occurrence.values:
                continue
            if parameter.is_flag and not parameter.count and typed.get(id(parameter)) is False:
                continue
            first.setdefault(parameter.name, occurrence)
        by_name = {p.name: p for p in level.node.parameters}
        where = describe_level(self.contract, level.node.path)

        def shown(names: list[str]) -> str:
            return ", ".join(by_name[n].display() if n in by_name else n for n in names)

        for group in rules.require_one_of:
            if not any(name in first for name in group):
                self.problem("require-one-of", f"'{where}' requires one of {shown(group)}")
        for group in rules.require_together:
            present = [name for name in group if name in first]
            if present and len(present) < len(group):
                missing = [name for name in group if name not in first]
                at = first[present[0]]
                self.binding.problems.append(
                    Problem(
                        code="require-together",
                        message=f"{shown(present)} must be given together with {shown(missing)}",
                        word=at.word if at.word >= 0 else None,
                    )
                )
        for group in rules.mutually_exclusive:
            present = sorted(
                (name for name in group if name in first), key=lambda name: first[name].word
            )
            for name in present[1:]:
                at, earlier = first[name], first[present[0]]
                self.binding.problems.append(
                    Problem(
                        code="mutually-exclusive",
                        message=f"{shown([name])} cannot be combined with {shown(present[:1])}",
                        word=at.word if at.word >= 0 else None,
                        related=(("given here", earlier.word),) if earlier.word >= 0 else (),
                    )
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
    if len(specs) == 1 and specs[0] < 0:
        # The common case of a command with one variadic parameter: it takes every word.
        return [list(pieces)], []
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
            # The words there are, and one hole for all that are missing: what the caller looks
            # at, without a list as long as any nargs a (hostile) file may declare.
            available = min(nargs, len(words))
            taken = [fetch() for _ in range(available)]
            if available < nargs:
                taken.append(None)
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


_CLICK_83 = FrameworkRules(choices_by_text=True, booleans=CLICK_BOOLEANS)

DIALECT = Dialect(
    name="click",
    binder=_ClickBinder,
    # A tree that records no version: Click 8.2 and later, as exampleguard modelled Click
    # before trees recorded their version.
    rules=_CLICK_83,
    versions=(
        RulesRow(
            "click",
            (8, 0),
            FrameworkRules(
                choices_by_text=True,
                booleans=CLICK_81_BOOLEANS,
                reparse_skips_command_word=True,
            ),
            "Click 8.1 and before: an empty boolean value is not a boolean; an explicit "
            "default=None does not satisfy required=True (read off the objects when the tree "
            "is extracted, so the snapshot records it); an unknown option-like subcommand "
            "word is dropped before the group re-parses for help",
        ),
        RulesRow(
            "click",
            (8, 2),
            FrameworkRules(choices_by_text=True, booleans=CLICK_81_BOOLEANS),
            "Click 8.2: an unknown option-like subcommand word is re-parsed with the rest "
            "(an empty boolean value is still not a boolean)",
        ),
        RulesRow(
            "click",
            (8, 3),
            _CLICK_83,
            "Click 8.3: an empty boolean value reads as absent, False; 'no default' is a "
            "sentinel of its own, so an explicit default=None satisfies required=True",
        ),
        # Typer 0.26 and later bundle a Click of their own and convert values through
        # pydantic (the tree's value_syntax); nothing else differs between their versions yet.
        RulesRow("typer", (0, 26), _CLICK_83, "Typer's bundled Click"),
    ),
)
