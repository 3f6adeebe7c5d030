"""The ``argparse`` dialect: ``ArgumentParser.parse_known_args``, modelled exactly.

The pattern-matching algorithm of argparse: words classified as options or arguments up front
(negative numbers, abbreviations where the parser allows them, ``--``), positionals and options
consumed alternately by ``nargs`` patterns, subparsers recursing, mutually exclusive and required
groups checked as argparse checks them. Values are converted as they are consumed, in parse
order, as argparse converts them.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from exampleguard._bind._common import BinderBase, describe_level
from exampleguard._bind._records import (
    CLICK_BOOLEANS,
    Binding,
    FrameworkRules,
    Occurrence,
    Piece,
    Problem,
    Role,
)
from exampleguard._bind.dialect import Dialect, Memo, RulesRow
from exampleguard._model import Parameter

if TYPE_CHECKING:
    from exampleguard._contract import CommandNode, Contract

__all__ = ["DIALECT"]

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
    return _ArgparseTable(
        options=options,
        actions=accepted,
        positionals=positionals,
        prefix_chars=node.settings.prefix_chars,
        allow_abbrev=node.settings.allow_abbrev,
        negative_number_options=any(_NEGATIVE_NUMBER.match(flag) for flag in options),
        conflicts=_conflicts(node),
        require_one_of=_require_one_of(node),
    )


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
        # argparse's "-*A-*A…-*", one A per value, written as a repetition: the same pattern
        # without a string as long as any nargs a (hostile) file may declare.
        pattern = "(-*(?:A-*){%d})" % min(int(nargs), _MOST_WORDS)  # noqa: UP031
    if not parameter.positional:
        pattern = pattern.replace("-*", "").replace("-", "")
    return pattern


_MOST_WORDS = 2**31 - 1
"""More words than any command line holds (within the regular expression engine's repeat
limit): a count above it is as impossible to fill."""

_Optional = tuple[_Action | None, str, str | None, str | None]
"""What argparse's ``_parse_optional`` finds in a word: the action (``None``: an unknown
option), the option string, the explicit value, and what separated it (``=``, ``""`` for a
short option's attached value, ``None``)."""


class _ArgparseStop(Exception):
    """argparse stops here: an eager action ran (help, version)."""


class _ArgparseAbort(Exception):
    """argparse cannot go on at all (an unknown subcommand): nothing after it is parsed."""


class _ArgparseBinder(BinderBase):
    def __init__(
        self, contract: Contract, binding: Binding, memo: Memo, rules: FrameworkRules
    ) -> None:
        super().__init__(contract, binding, memo, rules)
        self.occurrences: list[Occurrence] = []
        self.origin: dict[int, tuple[CommandNode, str]] = {}
        """Word index of an unrecognised piece → the parser and prefix characters it came from."""
        self.suppressed = False
        """Positionals deactivated: the first pass of ``parse_intermixed_args``."""
        self.relaxed = False
        """No option or group required: the second pass of ``parse_intermixed_args``."""
        self.from_file: set[int] = set()
        """Word indexes of ``@file`` words: what is found in their arguments is at the word."""

    def run(self, pieces: list[Piece]) -> None:
        """``parse_args``: parse, then fail on whatever no parser recognised.

        Or ``parse_intermixed_args``, where the root's settings say the program parses that way.
        """
        self.pieces = pieces
        root = self.contract.root
        try:
            if root.settings.intermixed and not root.is_group:
                extras = self._intermixed(root, pieces)
            else:
                extras = self._parse(root, pieces)
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
        if self.from_file:
            self._at_file_words()

    def _at_file_words(self) -> None:
        """Locate what came from an ``@file`` at its whole word.

        The file's characters are not the example's: no span inside the word fits them.
        """
        problems = self.binding.problems
        for index, problem in enumerate(problems):
            if problem.word in self.from_file:
                problems[index] = replace(problem, offset=0, length=None)
        for occurrence in self.occurrences:
            if occurrence.word in self.from_file:
                occurrence.offset, occurrence.length = 0, None

    def _intermixed(self, node: CommandNode, pieces: list[Piece]) -> list[Piece]:
        """Parse as ``parse_known_intermixed_args`` does: two ``parse_known_args`` passes.

        The first parses the options with every positional deactivated (``nargs=SUPPRESS``:
        each matches nothing but the first ``--``, which it swallows); the second parses what
        the first left, with no option or group required (they were checked in the first).
        """
        self.suppressed = True
        try:
            remaining = self._parse(node, pieces)
        finally:
            self.suppressed = False
        self.relaxed = True
        before = len(self.binding.problems)
        extras = self._parse(node, remaining)
        # A word both passes find wrong (an ambiguous abbreviation) is reported once.
        seen = {(p.code, p.word, p.message) for p in self.binding.problems[:before]}
        self.binding.problems[before:] = [
            p for p in self.binding.problems[before:] if (p.code, p.word, p.message) not in seen
        ]
        return extras

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
                    f"'{describe_level(self.contract, node.path)}' does not take it",
                    piece,
                )
                self.role(piece, Role.EXTRA)

    def _parse(self, node: CommandNode, pieces: list[Piece]) -> list[Piece]:
        """One parser's ``_parse_known_args``: returns the words it did not recognise.

        Longer than a function should be because it mirrors argparse's ``_parse_known_args``
        step for step, its nested ``consume_optional`` and ``consume_positionals`` included, so
        the two can be read side by side when argparse changes.
        """
        table = self.compiled(node, _argparse_table)
        self.binding.node = node
        self.binding.path = node.path
        if node.settings.fromfile_prefix_chars:
            pieces = self._from_files(node, pieces, node.settings.fromfile_prefix_chars, ())
        options: dict[int, _Optional] = {}
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
            # argparse's own consume_optional, nested in _parse_known_args as it is there.
            action, spelling, explicit, sep = options[start]
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
                    if count == 0 and len(spelling) == 1:
                        # A bare prefix character spelled as an option (`-` for stdin) has no
                        # second character to read: argparse raises IndexError on `-=...`.
                        self.problem(
                            "unexpected-value",
                            f"{spelling} takes no value, but was given {explicit!r}",
                            source,
                        )
                        return stop
                    if count == 0 and spelling[1] not in table.prefix_chars and explicit != "":
                        separated = self.rules.bundle_equals_separator
                        if separated and (sep or explicit[0] in table.prefix_chars):
                            self.problem(
                                "unexpected-value",
                                f"{spelling} takes no value, but was given {explicit!r}",
                                source,
                            )
                            return stop
                        batch.append((action, [], spelling, *where))
                        where = (source.offset + len(source.text) - len(explicit), 1)
                        spelling, rest = spelling[0] + explicit[0], explicit[1:] or None
                        if spelling in table.options:
                            action, explicit = table.options[spelling], rest
                            if separated:
                                # 3.13: `=` after the letter separates that option's value.
                                sep = "=" if explicit is not None and explicit[0] == "=" else ""
                                if sep:
                                    explicit = explicit[1:] if explicit else explicit
                            continue
                        if separated:
                            # 3.13: the rest of the bundle is left unrecognized, and the
                            # options before it still act.
                            tail = spelling[0] + explicit
                            leftover = Piece(
                                tail, source.word, source.offset + len(source.text) - len(tail)
                            )
                            state.extras.append(leftover)
                            self.origin[source.word] = (node, table.prefix_chars)
                            break
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
            if self.suppressed:
                # nargs=SUPPRESS: each positional takes the first `--` at most, which
                # _get_values drops, and stores nothing; all match at the first chance.
                rest = pattern[start:]
                taken = len(rest) - len(rest.lstrip("-")) if positionals else 0
                for piece in pieces[start : start + taken]:
                    self.role(piece, Role.SEPARATOR)
                state.seen.update(id(p) for p in positionals)
                del positionals[:]
                return start + taken
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
        drops = parameter.positional or self.rules.option_values_drop_separator
        if (
            drops
            and parameter.values_per_occurrence != "..."
            and any(v.text == "--" for v in given)
        ):
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

    def _from_files(
        self, node: CommandNode, pieces: list[Piece], chars: str, reading: tuple[str, ...]
    ) -> list[Piece]:
        """Expand as argparse's ``_read_args_from_files``: each ``@file`` word by its arguments.

        Every argument read stands at the ``@file`` word of the example (what a person can
        point at). A file that cannot be read fails the parse there, as argparse's ``error()``
        does; one that includes itself would recurse without end in argparse.
        """
        expanded: list[Piece] = []
        for piece in pieces:
            if not piece.text or piece.text[0] not in chars:
                expanded.append(piece)
                continue
            name = piece.text[1:]
            read = self.contract.argument_files.get(name)
            error = read.error if read is not None else f"{name!r} was not read"
            if name in reading:
                error = f"{name!r} includes itself, and argparse reads it again without end"
            if read is None or error is not None:
                self.problem(
                    "argument-file-unreadable",
                    f"{piece.text}: {error}",
                    piece,
                    hint="argparse reads @file arguments relative to where the program runs: "
                    "the configuration's folder.",
                )
                self.role(piece, Role.UNKNOWN)
                self.binding.node = None
                self.binding.path = None
                raise _ArgparseAbort
            self.from_file.add(piece.word)
            lines = [Piece(line, piece.word) for line in read.lines]
            expanded.extend(self._from_files(node, lines, chars, (*reading, name)))
        return expanded

    # pieces of the algorithm --------------------------------------------------------------------

    def _parse_optional(self, table: _ArgparseTable, piece: Piece) -> _Optional | None:
        text = piece.text
        if not text or text[0] not in table.prefix_chars:
            return None
        if text in table.options:
            return table.options[text], text, None, None
        if len(text) == 1:
            return None
        if "=" in text:
            name, explicit = text.split("=", 1)
            if name in table.options:
                return table.options[name], name, explicit, "="
        matches = self._option_tuples(table, text)
        if len(matches) > 1:
            names = ", ".join(spelling for _, spelling, _, _ in matches)
            self.problem(
                "unknown-flag",
                f"{text.split('=', 1)[0]} is ambiguous: it could be {names}",
                piece,
                hint="Write the option in full.",
            )
            self.role(piece, Role.UNKNOWN)
            return None, text, None, None
        if len(matches) == 1:
            return matches[0]
        if _NEGATIVE_NUMBER.match(text) and not table.negative_number_options:
            return None
        if " " in text:
            return None
        return None, text, None, None

    def _option_tuples(self, table: _ArgparseTable, text: str) -> list[_Optional]:
        found: list[_Optional] = []
        chars = table.prefix_chars
        if text[0] in chars and text[1] in chars:
            if table.allow_abbrev:
                prefix, separator, explicit_text = text.partition("=")
                explicit = explicit_text if separator else None
                for spelling, action in table.options.items():
                    if spelling.startswith(prefix):
                        found.append((action, spelling, explicit, separator or None))
        elif text[0] in chars:
            short, short_explicit = text[:2], text[2:]
            for spelling, action in table.options.items():
                if spelling == short:
                    found.append((action, spelling, short_explicit, ""))
                elif spelling.startswith(text):
                    found.append((action, spelling, None, None))
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
            # Only the empty string is shared, and from CPython 3.13 on the one-character
            # Latin-1 strings too: other words from the command line are new objects
            # (measured against real processes).
            if text != default:
                return False
            shared = self.rules.shared_one_character_words and len(text) == 1 and ord(text) < 256
            return text == "" or shared
        return False

    def _check_values(self, parameter: Parameter, occurrence: Occurrence) -> None:
        """Convert and check each value now, in parse order, as argparse does."""
        if parameter.is_flag:
            return
        nargs = parameter.values_per_occurrence
        if parameter.choices is not None and parameter.positional and not occurrence.values:
            if (
                nargs in ("*", -1)
                and parameter.default is None
                and self.rules.empty_star_checks_choices
            ):
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
            self.unknown_command(name, node)
            self.binding.node = None
            self.binding.path = None
            raise _ArgparseAbort
        self.role(name, Role.COMMAND)
        return self._parse(child, rest)

    def _required(self, state: _ArgparseState) -> None:
        node = state.node
        level = describe_level(self.contract, node.path)
        if node.is_group and id(_SUBCOMMAND) not in state.seen and not node.runnable:
            self.needs_subcommand(node)
            self.binding.node = node
            self.binding.path = node.path
        missing = [
            p
            for p in state.table.actions
            if id(p) not in state.seen
            and ((p.positional and p.is_required) or (p.required is True and not self.relaxed))
        ]
        if missing:
            self.problem(
                "missing-required",
                f"'{level}' requires {', '.join(p.display() for p in missing)}",
            )
        for members in state.table.require_one_of if not self.relaxed else ():
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


_PYTHON_311 = FrameworkRules(
    choices_by_text=False,
    booleans=CLICK_BOOLEANS,
    empty_star_checks_choices=True,
    option_values_drop_separator=True,
)
_PYTHON_312 = replace(_PYTHON_311, empty_star_checks_choices=False)
_PYTHON_313 = replace(
    _PYTHON_312,
    option_values_drop_separator=False,
    bundle_equals_separator=True,
    shared_one_character_words=True,
)

DIALECT = Dialect(
    name="argparse",
    binder=_ArgparseBinder,
    # A tree that records no version: CPython 3.11's argparse, as exampleguard modelled it
    # before trees recorded their version.
    rules=_PYTHON_311,
    versions=(
        RulesRow("argparse", (3, 11), _PYTHON_311, "CPython 3.11, the oldest modelled"),
        RulesRow(
            "argparse",
            (3, 12),
            _PYTHON_312,
            "CPython 3.12: a nargs='*' positional with choices that receives no word is "
            "accepted (3.11 checks the empty list against the choices)",
        ),
        RulesRow(
            "argparse",
            (3, 13),
            _PYTHON_313,
            "CPython 3.13: `=` inside a bundle of short options separates a value "
            "(-ft=x), a switch given `=value` is an error, an unknown letter ends the bundle; "
            "`--` is dropped from positionals' values only; a one-character word is the "
            "shared string object, so it can be taken for a default it equals",
        ),
    ),
)
