"""The ``cobra`` dialect: Go's cobra and its flag parser pflag, modelled exactly.

cobra finds the command before it parses any flag: ``Find`` strips what look like flags (a
``--flag`` or ``-f`` whose flag is not known to take no value swallows the next word) and
follows the remaining words down the tree, removing each command word where it first appears;
with ``TraverseChildren`` on the root, ``Traverse`` parses each level's own flags on the way
down instead. The command found then parses every word left with pflag: ``--flag=value``,
``--flag value`` (not for a flag with a ``NoOptDefVal``: switches, counters), ``-f value``,
``-fvalue``, ``-f=value``, shorthand bundles, ``--`` ending the flags, flags after arguments
unless interspersing is off, its own flags and the persistent flags of the commands above it.
cobra's help and version flags exist only then. What follows is cobra's ``execute``: help and
version end parsing; a command without a run function runs nothing; the argument validator,
the required flags and the flag groups are checked, in that order. pflag stops at its first
error, and so does this model: the state after it is not defined.

Values convert and accumulate as pflag's do (:mod:`exampleguard._bind._pflag`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from exampleguard._bind._common import BinderBase, choices_hint, describe_level
from exampleguard._bind._pflag import GoSyntaxError, PflagValue, value_kind
from exampleguard._bind._records import CLICK_BOOLEANS, FrameworkRules, Occurrence, Piece, Role
from exampleguard._bind.dialect import Dialect, RulesRow

if TYPE_CHECKING:
    from exampleguard._contract import CommandNode
    from exampleguard._model import Parameter

__all__ = ["DIALECT"]

_EAGER = ("help", "version")
"""The flags cobra adds to the command it runs, and only to it, just before parsing."""


def _no_opt_default(parameter: Parameter) -> str | None:
    """The flag's ``NoOptDefVal`` (pflag): the value it takes given bare, if it may be."""
    if parameter.no_opt_default is not None:
        return parameter.no_opt_default or None
    if parameter.count:
        return "+1"
    if parameter.type == "boolean" and parameter.nargs is None:
        return "true"
    return None


@dataclass(slots=True)
class _Flags:
    """One command's merged flag set as pflag looks flags up: by name and by shorthand."""

    long: dict[str, Parameter]
    short: dict[str, Parameter]

    def no_opt(self, name: str) -> bool:
        """Whether a known flag may be given without a value (cobra's ``hasNoOptDefVal``)."""
        parameter = self.long.get(name)
        return parameter is not None and _no_opt_default(parameter) is not None

    def short_no_opt(self, name: str) -> bool:
        """The same for a shorthand (cobra's ``shortHasNoOptDefVal``)."""
        parameter = self.short.get(name[:1])
        return parameter is not None and _no_opt_default(parameter) is not None


def _flags(parameters: list[Parameter], *, eager: bool) -> _Flags:
    long: dict[str, Parameter] = {}
    short: dict[str, Parameter] = {}
    for parameter in parameters:
        if parameter.positional or (not eager and _is_eager(parameter)):
            continue
        for flag in parameter.flags:
            if flag.startswith("--"):
                long.setdefault(flag[2:], parameter)
            elif flag.startswith("-") and len(flag) == 2:
                short.setdefault(flag[1:], parameter)
    return _Flags(long, short)


def _is_eager(parameter: Parameter) -> bool:
    return parameter.eager and parameter.name in _EAGER


@dataclass(slots=True)
class _Tables:
    """What a command's parse needs of it, built once per command."""

    finding: _Flags
    """Its flags before cobra adds help and version: what ``Find`` and ``Traverse`` see."""
    running: _Flags
    """Its flags as the command runs."""
    positional: Parameter | None
    required: list[Parameter]


def _tables(node: CommandNode) -> _Tables:
    accepted = node.accepted()
    positional = next((p for p in node.parameters if p.positional), None)
    required = [p for p in accepted if not p.positional and p.required is True]
    return _Tables(
        _flags(accepted, eager=False), _flags(accepted, eager=True), positional, required
    )


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _is_flag_arg(text: str, *, two_dashes: bool) -> bool:
    """Whether Traverse takes ``text`` for a flag (``isFlagArg``), by bytes as Go indexes.

    cobra 1.6 looked at the second byte alone (``a-b`` was a flag); 1.7 and later at ``--``.
    """
    raw = text.encode("utf-8")
    long = raw[:2] == b"--" if two_dashes else raw[1:2] == b"-"
    return (len(raw) >= 3 and long) or (len(raw) >= 2 and raw[:1] == b"-" and raw[1:2] != b"-")


class _Failed(Exception):
    """pflag returned an error: the parse of the command line ends here."""


@dataclass(slots=True)
class _Parse:
    """The flags set so far, by parameter: shared between levels as cobra's flag objects are."""

    values: dict[int, PflagValue] = field(default_factory=dict)
    occurrences: list[Occurrence] = field(default_factory=list)


class _CobraBinder(BinderBase):
    def run(self, pieces: list[Piece]) -> None:
        self.pieces = pieces
        self.state = _Parse()
        root = self.contract.root
        try:
            if root.settings.traverse_children:
                node, words = self._traverse(root, pieces)
            else:
                node, words = self._find(root, pieces)
            self.binding.path = node.path
            self.binding.node = node
            self._execute(node, words)
        except _Failed:
            pass
        self.binding.occurrences = self.state.occurrences
        self.type_given()
        if not self.binding.eager:
            self.repeated(self.state.occurrences)

    def _table(self, node: CommandNode) -> _Tables:
        return self.compiled(node, _tables)

    # -- finding the command (cobra's Find, and Traverse) -----------------------------------------

    def _strip(self, words: list[Piece], flags: _Flags) -> list[str]:
        """The words that may name commands, flags and values taken out (``stripFlags``)."""
        commands: list[str] = []
        rest = list(words)
        while rest:
            text = rest.pop(0).text
            if text == "--":
                break
            long = text.startswith("--") and "=" not in text and not flags.no_opt(text[2:])
            short = (
                text.startswith("-")
                and "=" not in text
                and _bytes(text) == 2
                and not flags.short_no_opt(text[1:])
            )
            if long or short:
                # The next word is taken for the flag's value (the last one never is).
                if len(rest) <= 1:
                    break
                rest.pop(0)
            elif text and not text.startswith("-"):
                commands.append(text)
        return commands

    def _command_word(self, words: list[Piece], name: str, flags: _Flags) -> int | None:
        """Where cobra's ``argsMinusFirstX`` takes the command's word ``name`` out of ``words``.

        cobra 1.6 removes the first word equal to it, even a flag's value before it; 1.7 and
        later skip flags and their values as ``stripFlags`` does (``None``: none is removed).
        """
        if not self.rules.find_skips_flag_values:
            return next(i for i, piece in enumerate(words) if piece.text == name)
        position = 0
        while position < len(words):
            text = words[position].text
            if text == "--":
                return None
            long = text.startswith("--") and "=" not in text and not flags.no_opt(text[2:])
            short = (
                text.startswith("-")
                and "=" not in text
                and _bytes(text) == 2
                and not flags.short_no_opt(text[1:])
            )
            if long or short:
                position += 2
                continue
            if not text.startswith("-") and text == name:
                return position
            position += 1
        return None

    def _find(self, root: CommandNode, pieces: list[Piece]) -> tuple[CommandNode, list[Piece]]:
        node, words = root, list(pieces)
        while True:
            commands = self._strip(words, self._table(node).finding)
            if not commands:
                break
            child = node.children.get(commands[0])
            if child is None:
                break
            at = self._command_word(words, commands[0], self._table(node).finding)
            if at is None:
                node = child
                continue
            self.role(words[at], Role.COMMAND)
            node, words = child, words[:at] + words[at + 1 :]
        if node.settings.legacy_args and node is root and node.is_group:
            stray = self._strip(words, self._table(node).finding)
            if stray:
                word = next(p for p in words if p.text == stray[0])
                self.unknown_command(word, node)
                raise _Failed
        return node, words

    def _traverse(self, root: CommandNode, pieces: list[Piece]) -> tuple[CommandNode, list[Piece]]:
        node, words = root, list(pieces)
        while True:
            flags = self._table(node).finding
            taken: list[Piece] = []
            value_next = False
            for index, piece in enumerate(words):
                text = piece.text
                if text.startswith("--") and "=" not in text:
                    value_next = not flags.no_opt(text[2:])
                    taken.append(piece)
                    continue
                if (
                    text.startswith("-")
                    and "=" not in text
                    and _bytes(text) == 2
                    and not flags.short_no_opt(text[1:])
                ):
                    value_next = True
                    taken.append(piece)
                    continue
                if value_next:
                    value_next = False
                    taken.append(piece)
                    continue
                if _is_flag_arg(text, two_dashes=self.rules.find_skips_flag_values):
                    taken.append(piece)
                    continue
                child = node.children.get(text)
                if child is None:
                    return node, words
                # This level's own flags are parsed before the subcommand's words.
                self._parse_flags(node, taken, flags)
                self.role(piece, Role.COMMAND)
                node, words = child, words[index + 1 :]
                break
            else:
                return node, words

    # -- running it (cobra's execute, up to the command's Run) ------------------------------------

    def _execute(self, node: CommandNode, words: list[Piece]) -> None:
        table = self._table(node)
        settings = node.settings
        if settings.disable_flag_parsing:
            positional = list(words)
        else:
            positional = self._parse_flags(node, words, table.running)
        for name in _EAGER:
            parameter = table.running.long.get(name)
            if parameter is not None and _is_eager(parameter):
                value = self.state.values.get(id(parameter))
                if value is not None and value.value is True:
                    self.binding.eager = True
                    return
        for piece in positional:
            self.role(piece, Role.POSITIONAL)
        if not node.runnable:
            if positional and node.is_group:
                self.unknown_command(positional[0], node)
            else:
                self.needs_subcommand(node)
            return
        self._arguments(node, table, positional)
        if settings.disable_flag_parsing:
            return
        changed = self._changed()
        given = {id(parameter) for parameter in changed}
        for parameter in table.required:
            if id(parameter) not in given:
                self.problem(
                    "missing-required",
                    f"'{describe_level(self.contract, node.path)}' requires {parameter.display()}",
                )
        self._groups(node, {parameter.name for parameter in changed})

    def _changed(self) -> list[Parameter]:
        """The flags set so far (pflag's ``Changed``): ``--x=false`` is set too."""
        by_id = {id(o.parameter): o.parameter for o in self.state.occurrences}
        return [by_id[key] for key, value in self.state.values.items() if value.changed]

    def _arguments(self, node: CommandNode, table: _Tables, positional: list[Piece]) -> None:
        settings = node.settings
        parameter = table.positional
        if positional and parameter is not None:
            self.state.occurrences.append(
                Occurrence(
                    parameter=parameter,
                    level=node.path,
                    spelling="",
                    negated=False,
                    word=positional[0].word,
                    values=list(positional),
                )
            )
        if settings.legacy_args or settings.custom_args:
            return
        level = describe_level(self.contract, node.path)
        count = len(positional)
        # What the validator accepts, as the tree records it; a catalog's tool (no tree)
        # accepts the positional it declares, and none if it declares none.
        least, most = settings.min_args, settings.max_args
        if parameter is None:
            most = 0
        else:
            nargs = parameter.values_per_occurrence
            if most is None and isinstance(nargs, int) and nargs > 0:
                most = nargs
            least = max(least, 1 if parameter.is_required else 0)
        if most is not None and count > most:
            extra = positional[most]
            if most == 0 and node.is_group:
                self.unknown_command(extra, node)
                return
            self.problem(
                "extra-positional",
                f"unexpected extra argument(s) {' '.join(repr(p.text) for p in positional[most:])}"
                f": '{level}' accepts at most {most} argument{'s' if most != 1 else ''}",
                extra,
            )
            return
        if count < least:
            self.problem(
                "missing-required",
                f"'{level}' requires at least {least} argument{'s' if least != 1 else ''}, "
                f"{count} given",
            )
            return
        choices = parameter.choices if parameter is not None else None
        if choices is not None:
            for piece in positional:
                if piece.text not in [str(c) for c in choices]:
                    self.problem(
                        "bad-choice",
                        f"{piece.text!r} is not one of the arguments '{level}' accepts",
                        piece,
                        hint="Choose from: " + ", ".join(str(c) for c in choices),
                    )
                    return

    def _groups(self, node: CommandNode, names: set[str]) -> None:
        """The flag groups, by the names of the flags set (``--x=false`` is set too)."""
        known = {p.name for p in node.accepted()}
        constraints = node.framework_constraints
        level = describe_level(self.contract, node.path)
        for group in constraints.require_together:
            present = [name for name in group if name in names]
            if present and len(present) < len(group) and set(group) <= known:
                missing = [name for name in group if name not in names]
                self.problem(
                    "require-together",
                    f"'{level}': {', '.join('--' + n for n in present)} needs "
                    f"{', '.join('--' + n for n in missing)} too",
                )
        for group in constraints.mutually_exclusive:
            present = [name for name in group if name in names]
            if len(present) > 1 and set(group) <= known:
                self.problem(
                    "mutually-exclusive",
                    f"'{level}': {' and '.join('--' + n for n in present)} cannot be given "
                    "together",
                )
        for group in constraints.require_one_of:
            if set(group) <= known and not names.intersection(group):
                self.problem(
                    "require-one-of",
                    f"'{level}' requires one of {', '.join('--' + n for n in group)}",
                )

    # -- pflag's parse -----------------------------------------------------------------------------

    def _parse_flags(self, node: CommandNode, words: list[Piece], flags: _Flags) -> list[Piece]:
        """Parse ``words`` with ``flags`` as pflag's ``parseArgs``: the arguments left, in order."""
        settings = node.settings
        positional: list[Piece] = []
        rest = list(words)
        while rest:
            piece = rest.pop(0)
            text = piece.text
            if not text or text[0] != "-" or text == "-":
                positional.append(piece)
                if not settings.allow_interspersed_args:
                    positional.extend(rest)
                    return positional
                continue
            if text[1] == "-":
                if text == "--":
                    self.role(piece, Role.SEPARATOR)
                    positional.extend(rest)
                    return positional
                rest = self._long(node, piece, rest, flags)
            else:
                rest = self._shorts(node, piece, rest, flags)
        return positional

    def _fail(self, code: str, message: str, piece: Piece, rest: list[Piece]) -> None:
        self.problem(code, message, piece)
        for leftover in rest:
            self.role(leftover, Role.EXTRA)
        raise _Failed

    def _long(
        self, node: CommandNode, piece: Piece, rest: list[Piece], flags: _Flags
    ) -> list[Piece]:
        text = piece.text
        name = text[2:]
        if not name or name[0] in "-=":
            self.unknown_option(piece, node, text)
            raise _Failed
        name, equals, attached = name.partition("=")
        parameter = flags.long.get(name)
        if parameter is None:
            if name == "help":
                # pflag's own answer to an undefined --help: cobra shows help, or fails.
                self._help_requested(piece, rest)
            if node.settings.ignore_unknown_options:
                self.role(piece, Role.UNKNOWN)
                return rest if equals else _strip_unknown_value(rest)
            self.unknown_option(piece, node, "--" + name)
            raise _Failed
        self.role(piece, Role.OPTION)
        occurrence = self._occurrence(
            parameter, node, "--" + name, piece, offset=0, length=len(name) + 2
        )
        bare = _no_opt_default(parameter)
        if equals:
            value = Piece(attached, piece.word, piece.offset + len(name) + 3)
        elif bare is not None:
            occurrence.bare = True
            value = Piece(bare, piece.word, -1)
        elif rest:
            value = rest.pop(0)
            self.role(value, Role.VALUE)
        else:
            self._fail("missing-value", f"--{name} needs a value", piece, rest)
        self._set_value(parameter, occurrence, value, piece, rest)
        return rest

    def _shorts(
        self, node: CommandNode, piece: Piece, rest: list[Piece], flags: _Flags
    ) -> list[Piece]:
        raw = piece.text.encode("utf-8")
        shorthands = raw[1:]
        original = rest
        result = rest
        position = 1
        while shorthands:
            if shorthands.startswith(b"test."):
                # pflag leaves Go's own test flags alone.
                break
            char = shorthands[:1].decode("latin-1")
            parameter = flags.short.get(char) if shorthands[0] < 0x80 else None
            remaining = shorthands[1:]
            if parameter is None:
                if char == "h":
                    self._help_requested(piece, original)
                if node.settings.ignore_unknown_options:
                    self.role(piece, Role.UNKNOWN)
                    if len(shorthands) > 2 and shorthands[1:2] == b"=":
                        break
                    result = _strip_unknown_value(original)
                    shorthands, position = remaining, position + 1
                    continue
                alone = len(raw) == 2
                self.unknown_option(
                    piece,
                    node,
                    "-" + (char if shorthands[0] < 0x80 else _text(shorthands[:4])),
                    offset=piece.offset if alone else piece.offset + position,
                    length=2 if alone else 1,
                )
                raise _Failed
            self.role(piece, Role.OPTION)
            alone = len(raw) == 2
            occurrence = self._occurrence(
                parameter,
                node,
                "-" + char,
                piece,
                offset=0 if alone else position,
                length=2 if alone else 1,
            )
            bare = _no_opt_default(parameter)
            result = original
            if len(shorthands) > 2 and shorthands[1:2] == b"=":
                value = Piece(_text(shorthands[2:]), piece.word, piece.offset + position + 2)
                remaining = b""
            elif bare is not None:
                occurrence.bare = True
                value = Piece(bare, piece.word, -1)
            elif len(shorthands) > 1:
                value = Piece(_text(shorthands[1:]), piece.word, piece.offset + position + 1)
                remaining = b""
            elif original:
                value = original[0]
                result = original[1:]
                self.role(value, Role.VALUE)
            else:
                self._fail("missing-value", f"-{char} needs a value", piece, original)
            self._set_value(parameter, occurrence, value, piece, original)
            shorthands, position = remaining, position + 1
        return list(result)

    def _help_requested(self, piece: Piece, rest: list[Piece]) -> None:
        """An undefined help flag: pflag's ErrHelp.

        cobra shows the help as the command runs, and fails while it traverses.
        """
        if self.binding.path is None and self.contract.root.settings.traverse_children:
            self._fail(
                "unknown-flag",
                f"{piece.text} asks for help where cobra has no help flag yet",
                piece,
                rest,
            )
        self.role(piece, Role.OPTION)
        self.binding.eager = True
        raise _Failed

    def _occurrence(
        self,
        parameter: Parameter,
        node: CommandNode,
        spelling: str,
        piece: Piece,
        *,
        offset: int,
        length: int,
    ) -> Occurrence:
        occurrence = Occurrence(
            parameter=parameter,
            level=node.path,
            spelling=spelling,
            negated=False,
            word=piece.word,
            offset=piece.offset + offset,
            length=length,
        )
        self.state.occurrences.append(occurrence)
        return occurrence

    def _set_value(
        self,
        parameter: Parameter,
        occurrence: Occurrence,
        value: Piece,
        piece: Piece,
        rest: list[Piece],
    ) -> None:
        """``Value.Set``: a word that does not convert ends the parse as pflag's error does."""
        if value.offset >= 0:
            occurrence.values.append(value)
        state = self.state.values.get(id(parameter))
        if state is None:
            kind = value_kind(
                parameter.pflag_type,
                type_=str(parameter.type),
                count=parameter.count,
                multiple=parameter.multiple,
            )
            state = self.state.values[id(parameter)] = PflagValue(kind)
        try:
            state.set(value.text)
        except GoSyntaxError as error:
            shown = value if value.offset >= 0 else piece
            self._fail(
                "bad-type",
                f"invalid argument {value.text!r} for {parameter.display()}: {error}",
                shown,
                rest,
            )
        choices = parameter.choices
        if choices is not None:
            # A catalog's choices (pflag has none): matched by text, the choice itself kept.
            chosen = next((c for c in choices if str(c) == value.text), None)
            if chosen is None:
                self.problem(
                    "bad-choice",
                    f"{value.text!r} is not one of {', '.join(map(str, choices))} "
                    f"for {parameter.display()}",
                    value if value.offset >= 0 else piece,
                    hint=choices_hint(parameter),
                )
                raise _Failed
            if not state.modelled or state.kind == "string":
                state.value = chosen

    # -- values ------------------------------------------------------------------------------------

    def type_given(self) -> None:
        """Each flag set, with the value the program reads; the arguments as their words."""
        for occurrence in self.state.occurrences:
            parameter = occurrence.parameter
            if parameter.positional:
                words = [p.text for p in occurrence.values]
                single = parameter.values_per_occurrence == 1 and len(words) == 1
                self.binding.typed[id(parameter)] = words[0] if single else words
                continue
            value = self.state.values.get(id(parameter))
            if value is not None and value.changed:
                self.binding.typed[id(parameter)] = value.value


def _strip_unknown_value(rest: list[Piece]) -> list[Piece]:
    """An unknown flag's value, when one follows, goes too (``stripUnknownFlagValue``)."""
    if not rest:
        return rest
    if rest[0].text.startswith("-"):
        return rest
    return rest[1:]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


_COBRA_16 = FrameworkRules(choices_by_text=True, booleans=CLICK_BOOLEANS)
_COBRA = replace(_COBRA_16, find_skips_flag_values=True)

DIALECT = Dialect(
    name="cobra",
    binder=_CobraBinder,
    # A tree that records no version: cobra 1.7 and later (the helper measures what its
    # program's cobra does and the snapshot says so, whatever the build recorded).
    rules=_COBRA,
    versions=(
        # Tested against Debian's cobra 1.6.1 by tests/differential/test_cobra_differential.py,
        # and against 1.7 and later by the same tests where such a cobra is installed. What 1.8
        # adds to the parse (MarkFlagsOneRequired) the snapshot records where the program's
        # cobra checks it.
        RulesRow(
            "cobra",
            (1, 6),
            _COBRA_16,
            "cobra 1.6, the oldest the helper supports: Find removes the first word equal to a "
            "command's name, a flag's value before it included; Traverse takes any word whose "
            "second byte is '-' for a flag",
        ),
        RulesRow(
            "cobra",
            (1, 7),
            _COBRA,
            "cobra 1.7: Find removes a command's word past the flag values before it; Traverse "
            "takes '--x' and '-x' words for flags",
        ),
    ),
)
