"""What every dialect's binder shares: recording problems and roles, and typing the values.

A dialect module's binder derives from :class:`BinderBase` and adds its framework's parsing
algorithm; what it finds goes through the methods here, so every dialect words an unknown flag,
a bad value or a repeated option the same way.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from exampleguard._adapters._common import switch_stores
from exampleguard._bind._records import (
    Binding,
    FrameworkRules,
    Occurrence,
    Path,
    Piece,
    Problem,
    Role,
    convert,
)

if TYPE_CHECKING:
    from exampleguard._bind.dialect import Memo
    from exampleguard._contract import CommandNode, Contract
    from exampleguard._model import Parameter

__all__ = ["BinderBase", "choices_hint", "describe_level"]

Table = TypeVar("Table")


def _flag_value(parameter: Parameter, negated: bool) -> bool:
    # A --x/--no-x pair stores True and False; a lone flag its recorded flag_value, else "not
    # its default".
    if parameter.negation_flags:
        return not negated
    if parameter.flag_value is not None:
        return parameter.flag_value
    return switch_stores(parameter.default)


_RIVAL_MARGIN = 0.1
"""How much less similar than the best a close candidate may be and still be a rival to it."""


_PREFIX_RIVALS = 3
"""At most this many candidates that ``word`` starts are named; more say nothing."""


def _close(word: str, candidates: Sequence[str]) -> list[str]:
    """The candidates close to ``word`` that are as good as the best one, best first.

    A candidate that ``word`` is the start of comes first (``--new`` for ``--new-version``,
    ``pars`` for ``parsable``): one such is *the* candidate, a few are rivals. Otherwise close
    is difflib's (similarity of at least 0.6); a candidate within :data:`_RIVAL_MARGIN` of the
    best is a rival (``--forn``: ``--form`` and ``--force``). One candidate that stands out is
    the one a did-you-mean proposes.
    """
    unique = list(dict.fromkeys(candidates))
    if word.lstrip("-+/"):
        started = [c for c in unique if len(c) > len(word) and c.startswith(word)]
        if 0 < len(started) <= _PREFIX_RIVALS:
            return started
    # Options are compared by their names: the dashes every one of them has would make `--ye`
    # look like `--help` (similarity 0.6) and `--new` like `--yes`.
    names: dict[str, str] = {}
    for candidate in unique:
        names.setdefault(candidate.lstrip("-+/") or candidate, candidate)
    name = word.lstrip("-+/") or word
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    matches = [names[match] for match in close]
    if len(matches) < 2:
        return matches
    matcher = difflib.SequenceMatcher(b=name)
    scores = []
    for match in close:
        matcher.set_seq1(match)
        scores.append(matcher.ratio())
    return [
        m for m, score in zip(matches, scores, strict=True) if score >= scores[0] - _RIVAL_MARGIN
    ]


def _did_you_mean(matches: Sequence[str], quote: str = "") -> tuple[str | None, str | None]:
    """The hint for ``matches`` and the suggestion, which only a single candidate makes.

    With two close candidates the hint names both and nothing is proposed as *the*
    replacement: a fix must not pick one.
    """
    if not matches:
        return None, None
    shown = [f"{quote}{match}{quote}" for match in matches]
    if len(matches) == 1:
        return f"Did you mean {shown[0]}?", matches[0]
    return f"Did you mean {', '.join(shown[:-1])} or {shown[-1]}?", None


def _same_but_case(value: str, choices: Sequence[object]) -> str | None:
    """The one choice ``value`` is, written in another case, if there is exactly one."""
    folded = value.casefold()
    matches = [c for c in choices if isinstance(c, str) and c.casefold() == folded]
    return matches[0] if len(matches) == 1 else None


def describe_level(contract: Contract, path: Path) -> str:
    """The command line of the level at ``path``, as messages name it (``notes tags``)."""
    return " ".join([contract.program, *path])


def _accepting_level(
    contract: Contract, flag: str, here: CommandNode, later: Sequence[str]
) -> str | None:
    """The level on the example's own path that declares ``flag``, for a hint that helps.

    Only levels where giving the option would be accepted are proposed: the commands the
    example goes on to name after ``here`` (the option belongs further along), nearest first,
    then the groups above ``here`` (it was given after their subcommand). A sibling command
    that happens to declare the same flag is not on the example's path: moving the option
    there would not make this example valid.
    """
    below: list[CommandNode] = []
    node = here
    for word in later:
        child = node.children.get(word)
        if child is not None:
            node = child
            below.append(node)
    above: list[CommandNode] = []
    node = contract.root
    for word in here.path:
        above.append(node)
        child = node.children.get(word)
        if child is None:
            break
        node = child
    for candidate in (*below, *reversed(above)):
        if candidate is not here and any(flag in p.all_flags for p in candidate.parameters):
            return describe_level(contract, candidate.path)
    return None


class BinderBase:
    """The part of a binder that does not depend on the parsing algorithm."""

    def __init__(
        self, contract: Contract, binding: Binding, memo: Memo, rules: FrameworkRules
    ) -> None:
        self.contract = contract
        self.binding = binding
        self.memo = memo
        self.rules = rules
        self.syntax = contract.value_syntax
        self.pieces: Sequence[Piece] = ()
        """Every word after the program, as ``run`` was given them (for hints that look ahead)."""

    def compiled(self, node: CommandNode, build: Callable[[CommandNode], Table]) -> Table:
        """``node``'s lookup table, built by ``build`` the first time and then kept in the memo.

        Each dialect builds its own kind of table; a memo serves one contract, so one dialect.
        """
        tables = self.memo.tables
        table: Table | None = tables.get(node)
        if table is None:
            table = tables[node] = build(node)
        return table

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
        suggestion: str | None = None,
    ) -> None:
        """Record a problem at ``piece`` (the whole piece unless ``length`` says otherwise)."""
        self.binding.problems.append(
            Problem(
                code=code,
                message=message,
                word=piece.word if piece is not None else None,
                offset=piece.offset if piece is not None else 0,
                length=length if length is not None else (len(piece.text) if piece else None),
                hint=hint,
                related=related,
                suggestion=suggestion,
            )
        )

    def role(self, piece: Piece, role: Role) -> None:
        """Say what the word of ``piece`` is."""
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
        """Report ``unknown-flag`` for ``piece`` at ``node``, with the best hint there is."""
        flag = spelling or piece.text.split("=", 1)[0]
        level = describe_level(self.contract, node.path)
        later = [p.text for p in self.pieces if p.word > piece.word]
        where = _accepting_level(self.contract, flag, node, later)
        hint: str | None
        guess: str | None = None
        if where is not None and where != level:
            hint = f"{flag} is an option of '{where}'; give it at that level."
        else:
            candidates = [f for p in node.accepted() for f in p.all_flags if not p.hidden]
            hint, guess = _did_you_mean(_close(flag, candidates))
        self.binding.problems.append(
            Problem(
                code="unknown-flag",
                message=f"{flag} is not an option of '{level}'",
                word=piece.word,
                offset=piece.offset if offset is None else offset,
                length=len(flag) if length is None else length,
                hint=hint,
                suggestion=guess,
            )
        )
        self.role(piece, Role.UNKNOWN)

    def unknown_command(self, word: Piece, node: CommandNode) -> None:
        """Report ``unknown-command``: ``word`` names none of ``node``'s subcommands.

        At the program's own level, for a program the configuration says rewrites its argv
        before parsing, it is ``argv-rewritten``: the parser never sees these words as written.
        """
        hint, guess = _did_you_mean(_close(word.text, node.names), quote="'")
        level = describe_level(self.contract, node.path)
        rewrite = self.contract.argv_rewrite
        if rewrite is not None and not node.path:
            self.problem(
                "argv-rewritten",
                f"'{word.text}' is not a command of '{level}' as its parser reads the words, "
                f"and the program rewrites its argv before parsing ({rewrite})",
                word,
                hint="exampleguard does not model the rewriting: check this example by hand, "
                "then record a reviewed exception for it.",
            )
        else:
            if node.own_lookup is not None and hint is None:
                # Typer's own `typer PATH run`: the group may create the command at run time.
                hint = (
                    f"The group looks its commands up with its own code ({node.own_lookup}), "
                    "which may create this one only for some command lines: a tree read "
                    "without one cannot hold it."
                )
            elif not node.path and guess is None and word.word > 1:
                # A command word after options: what a program that moves or inserts its
                # command word before parsing (tox, ansible-galaxy) is documented with.
                hint = (
                    f"If '{level}' rewrites its argv before its parser reads it, say so with "
                    "`argv_rewrite` in the configuration."
                )
            self.problem(
                "unknown-command",
                f"'{word.text}' is not a command of '{level}'",
                word,
                hint=hint,
                suggestion=guess,
            )
        self.role(word, Role.UNKNOWN)

    def needs_subcommand(self, node: CommandNode) -> None:
        """Report ``not-runnable``: the command line stops at a group that cannot run."""
        names = ", ".join(node.names[:6])
        self.problem(
            "not-runnable",
            f"'{describe_level(self.contract, node.path)}' needs a subcommand",
            hint=f"Subcommands: {names}" if names else None,
        )

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
                rules=self.rules,
            )
            if error is not None and report:
                hint = choices_hint(parameter) if error.code == "bad-choice" else None
                suggestion = None
                if error.code == "bad-choice":
                    items = parameter.item_choices
                    choices = (
                        items[position] if items and position < len(items) else parameter.choices
                    )
                    suggestion = _same_but_case(piece.text, choices or ())
                    if suggestion is None:
                        # A misspelled choice (`parseable` for `parsable`), or its start.
                        named = [c for c in choices or () if isinstance(c, str)]
                        close = _close(piece.text, named)
                        suggestion = close[0] if len(close) == 1 else None
                    if suggestion is not None:
                        hint = f"Did you mean {suggestion!r}? {hint}"
                self.problem(
                    error.code,
                    f"{error.message} for {parameter.display()}",
                    piece,
                    hint=hint,
                    suggestion=suggestion,
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


def choices_hint(parameter: Parameter) -> str:
    """The hint of a ``bad-choice`` problem: every choice the parameter accepts."""
    return "Choose from: " + ", ".join(str(c) for c in parameter.choices or ())
