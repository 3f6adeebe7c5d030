r"""Finding the program's own commands in a line of prose shell: the policy for documentation.

A README line is written for a person at a shell, not for an agent calling the program
directly: ``mycli list --json | jq .``, ``cd repo && mycli init``, ``TOKEN=x mycli sync`` and
``mycli export > out.json`` are normal there. :func:`program_commands` splits such a line into
its simple commands, at the top level only (``|``, ``|&``, ``||``, ``&&``, ``;``, ``&``), and
keeps those that start with the program:

* leading ``NAME=value`` assignments belong to the shell and are left out;
* a trailing ``# comment`` is prose and is left out;
* redirections after the program's last word (``> out.json``, ``2>&1``, ``< in.csv``) are the
  shell's, not the program's, and are left out; one before a word of the program's stays, and
  the example then fails with ``shell-construct``;
* a command or process substitution, a parameter expansion or a subshell inside the program's
  own words stays in the example and is reported: it hides the arguments the program gets. The
  program's commands inside a substitution (``kill $(mycli pid)``) are examples of their own.

:func:`placeholders` finds what documentation writes for a value the reader fills in:
``<name>``, ``{id}`` and ``...`` (see :data:`PLACEHOLDER_RULE`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from exampleguard._diagnostics import Span

__all__ = [
    "DEFAULT_PROMPTS",
    "PLACEHOLDER_RULE",
    "Command",
    "LineExample",
    "blank_continuations",
    "ends_inside_quotes",
    "line_examples",
    "mask_placeholders",
    "placeholders",
    "program_commands",
    "unmask_placeholders",
]

DEFAULT_PROMPTS = ("$", "%", ">>>")
"""The prompts a documented command line may start with, each followed by a blank: sh's,
zsh's, and the ``>>>`` some CLI guides use in shell blocks (the ``doc_prompts`` default)."""

PLACEHOLDER_RULE = (
    "A word, or part of a word, written `<name>` or `{name}` (a letter, then letters, digits, "
    "`_`, `-` or `.`) stands for one value the reader supplies: it fills the place of exactly "
    "one value (a positional or an option's value), its type and choices are not checked, and "
    "anywhere else (where a command word or a flag is expected) it is reported like any other "
    "word. A `...` standing alone, right after a placeholder, or right after a `]` (a usage "
    "synopsis's `[FILES]...`), means 'more of the same' and is left out; what remains must "
    "still be a complete command. An example with a placeholder is "
    "judged by exampleguard's model alone, and its argument object is not checked against the "
    "tool's schema: its values are not known."
)
"""The documented placeholder rule (docs/docs-examples.md, "Examples in documentation")."""

_PLACEHOLDER = re.compile(r"<[A-Za-z][\w.-]*>|\{[A-Za-z][\w.-]*\}")
_ELLIPSIS = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=[>}\]]))\.\.\.(?=\s|$)")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_REDIRECT = re.compile(r"(?:[0-9]+|\{[A-Za-z_]\w*\})?(?:&>>?|>>?&?|<<<|<<-?|<>|<&?)")
_OPEN, _CLOSE = "\u1438", "\u1433"
_SEPARATORS = ("||", "&&", "|&", "|", ";;", ";", "&", "(", ")")
# Characters that mean something to the scan; a line without any is plain words.
_SPECIAL = re.compile(r"[\\#|&;()'\"$`<>\n]")
# A run of characters inside a word that need no look: everything the scan does not stop at.
_WORD_RUN = re.compile(r"[^\s|;&\\'\"$<>`()]+")
_WORD = re.compile(r"[^ \t\n]+")
_OPENING_WORDS = frozenset(
    {"if", "then", "elif", "else", "while", "until", "do", "!", "{", "time", "coproc"}
)
"""Words the shell reads before a compound command's own simple command (``if mycli check``)."""
_RUNNING_BUILTINS = frozenset({"exec", "command"})
"""Builtins that run the command their words name, as it is (``exec mycli serve``); with an
option of theirs first (``command -v mycli``) they look the program up instead."""


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command of a line that starts with the program: ``[start, end)`` of its text."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class LineExample:
    """One example of a command line: ``[start, end)`` of the line, its text, what it holds.

    ``placeholders`` and ``blanks`` are spans of ``text`` (see
    :class:`~exampleguard._sources._records.ExampleRecord`).
    """

    start: int
    end: int
    text: str
    placeholders: tuple[Span, ...]
    blanks: tuple[Span, ...]


def line_examples(text: str, program: str) -> list[LineExample]:
    """The examples of one logical command line of documentation or help text.

    Every simple command that runs ``program`` (:func:`program_commands`), with the
    placeholders that fall inside it and the backslash-newlines that blanks may stand for.
    """
    spans = placeholders(text)
    # `<name>` would be a redirection to the shell: split with it masked. A `...` means
    # nothing to the shell and stays, so the example's text keeps it.
    kept = tuple(s for s in spans if text[s.start : s.end] != "...")
    found: list[LineExample] = []
    for command in program_commands(mask_placeholders(text, kept), program):
        start, end = command.start, command.end
        own = tuple(
            Span(span.start - start, span.end - start)
            for span in spans
            if span.start >= start and span.end <= end
        )
        own_text = text[start:end]
        blanks = blank_continuations(own_text) if "\\\n" in own_text else ()
        found.append(LineExample(start, end, own_text, own, blanks))
    return found


@dataclass(slots=True)
class _Word:
    start: int
    end: int
    raw: str


def placeholders(text: str) -> tuple[Span, ...]:
    """The spans of the placeholders in ``text`` (:data:`PLACEHOLDER_RULE`), in order.

    Placeholders inside single quotes are text, not placeholders.
    """
    if "<" not in text and "{" not in text and "..." not in text:
        return ()
    quoted = _single_quoted(text)
    found = [
        Span(match.start(), match.end())
        for pattern in (_PLACEHOLDER, _ELLIPSIS)
        for match in pattern.finditer(text)
        if not _inside(match.start(), quoted)
    ]
    return tuple(sorted(found, key=lambda span: span.start))


def mask_placeholders(text: str, spans: tuple[Span, ...]) -> str:
    """``text`` with each placeholder made a plain word of the same length.

    ``<name>`` and ``{name}`` become ``\u1438name\u1433``: two Canadian syllabics that look like
    angle brackets, so messages show the word as written, and that are letters to the shell and to
    every parser (Click takes a word that starts with anything but a letter or digit for an
    option). ``...`` becomes blanks. Offsets stay where they were.
    """
    if not spans:
        return text
    characters = list(text)
    for span in spans:
        if text[span.start : span.end] == "...":
            characters[span.start : span.end] = "   "
        else:
            characters[span.start] = _OPEN
            characters[span.end - 1] = _CLOSE
    return "".join(characters)


def unmask_placeholders(value: str, text: str, spans: tuple[Span, ...]) -> str:
    """``value`` (a word of ``text`` masked, or a message quoting one) as ``text`` writes it.

    Every masked placeholder in ``value`` becomes the placeholder of ``text`` it stands for
    (``<name>`` or ``{name}``), so no output ever shows the masking characters. A masked word
    that both spellings mask alike is given the first spelling ``text`` uses.
    """
    if _OPEN not in value:
        return value
    originals: dict[str, str] = {}
    for span in spans:
        written = text[span.start : span.end]
        if written != "...":
            masked = _OPEN + written[1:-1] + _CLOSE
            originals.setdefault(masked, written)
    for masked, written in originals.items():
        value = value.replace(masked, written)
    return value


def blank_continuations(text: str) -> tuple[Span, ...]:
    """The backslash-newlines of ``text`` that two blanks may stand for, with the same words.

    bash removes a backslash-newline outside single quotes; where a blank is on either side of
    it and it is outside every quote, the words are the same with two blanks in its place, and
    the example stays a plain line (tokenized without bashlex). Inside quotes it is left alone.
    """
    found: list[Span] = []
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            if not quote and text.startswith("\\\n", i):
                before = text[i - 1] if i > 0 else " "
                after = text[i + 2] if i + 2 < len(text) else " "
                if before in " \t" or after in " \t":
                    found.append(Span(i, i + 2))
            i += 2
            continue
        elif quote == '"':
            quote = "" if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        i += 1
    return tuple(found)


def ends_inside_quotes(text: str) -> bool:
    """Whether ``text`` ends inside a quote: the shell reads the next line as more of it.

    A quote opened in a ``# comment`` is prose, and a backslash escapes the next character
    outside single quotes, as in sh.
    """
    if "'" not in text and '"' not in text:
        return False
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 2
            continue
        elif quote == '"':
            quote = "" if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;|&("):
            newline = text.find("\n", i)
            if newline < 0:
                return False
            i = newline
        i += 1
    return bool(quote)


def program_commands(text: str, program: str) -> list[Command]:
    """The simple commands of ``text`` that run ``program``, each without what the shell adds.

    ``text`` is one logical command line (backslash-newlines included), with placeholders
    already masked. Commands inside ``$(...)`` and backquotes are searched too.
    """
    if _SPECIAL.search(text) is None:
        # Most documentation lines are plain words: the scan would find just this.
        words = [_Word(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
        plain: list[Command] = []
        _command(words, program, plain)
        return plain
    found: list[Command] = []
    _scan(text, 0, len(text), program, found)
    return sorted(found, key=lambda command: command.start)


def _scan(text: str, start: int, end: int, program: str, found: list[Command]) -> None:
    """Split ``text[start:end]`` at its top-level separators and look at each command."""
    words: list[_Word] = []
    i = start
    while i < end:
        ch = text[i]
        if ch in " \t":
            i += 1
            continue
        if text.startswith("\\\n", i):
            i += 2
            continue
        if ch == "\n":
            # A newline outside quotes ends a command, as `;` does.
            _command(words, program, found)
            words = []
            i += 1
            continue
        if ch == "#" and (i == start or text[i - 1] in " \t\n;|&("):
            # A comment runs to the end of the line: prose, not the program's.
            newline = text.find("\n", i, end)
            i = end if newline < 0 else newline
            continue
        separator = (
            next((s for s in _SEPARATORS if text.startswith(s, i)), None) if ch in "|;&()" else None
        )
        if separator is not None and not _is_redirect_ampersand(text, i, words):
            _command(words, program, found)
            words = []
            i += len(separator)
            continue
        word_end = _word_end(text, i, end, program, found)
        words.append(_Word(i, word_end, text[i:word_end]))
        i = word_end
    _command(words, program, found)


def _is_redirect_ampersand(text: str, i: int, words: list[_Word]) -> bool:
    """Whether the ``&`` at ``i`` is part of a redirection (``&>``, ``>&``), not a separator."""
    if text[i] != "&":
        return False
    if text.startswith("&>", i):
        return True
    return i > 0 and text[i - 1] in "<>" and bool(words) and words[-1].end == i


def _word_end(text: str, i: int, end: int, program: str, found: list[Command]) -> int:
    """Where the shell word starting at ``i`` ends; substitutions in it are scanned too."""
    while i < end:
        run = _WORD_RUN.match(text, i, end)
        if run is not None:
            i = run.end()
            continue
        ch = text[i]
        if ch in " \t\n" or (ch in "|;&" and not _glued_ampersand(text, i)):
            return i
        if ch == "\\":
            i += 2
        elif ch == "'":
            close = text.find("'", i + 1, end)
            i = end if close < 0 else close + 1
        elif ch == '"':
            i = _double_quoted_end(text, i + 1, end, program, found)
        elif text.startswith("$(", i) or text.startswith("<(", i) or text.startswith(">(", i):
            i = _substitution_end(text, i + 2, end, program, found)
        elif ch == "`":
            i = _backquote_end(text, i + 1, end, program, found)
        elif ch in "()":
            return i
        else:
            i += 1
    return end


def _glued_ampersand(text: str, i: int) -> bool:
    """``&`` inside a redirection word (``2>&1``, ``&>``)."""
    return text[i] == "&" and ((i > 0 and text[i - 1] in "<>") or text.startswith("&>", i))


def _backquote_end(text: str, i: int, end: int, program: str, found: list[Command]) -> int:
    """Where the backquote opened just before ``i`` closes; its commands are scanned too."""
    close = text.find("`", i, end)
    close = end if close < 0 else close
    _scan(text, i, close, program, found)
    return close + 1


def _double_quoted_end(text: str, i: int, end: int, program: str, found: list[Command]) -> int:
    while i < end:
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == '"':
            return i + 1
        elif text.startswith("$(", i):
            i = _substitution_end(text, i + 2, end, program, found)
        elif ch == "`":
            i = _backquote_end(text, i + 1, end, program, found)
        else:
            i += 1
    return end


def _substitution_end(text: str, i: int, end: int, program: str, found: list[Command]) -> int:
    """Where the ``$(`` opened just before ``i`` closes; its commands are scanned as well."""
    begin = i
    depth = 1
    while i < end:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            close = text.find("'", i + 1, end)
            i = end if close < 0 else close + 1
            continue
        if ch == '"':
            i = _double_quoted_end(text, i + 1, end, program, [])
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                _scan(text, begin, i, program, found)
                return i + 1
        i += 1
    _scan(text, begin, end, program, found)
    return end


def _command(words: list[_Word], program: str, found: list[Command]) -> None:
    """Note the command of ``words`` if, after what the shell reads first, it runs ``program``.

    The shell reads first: assignments, the reserved words that open or continue a compound
    command (``if``, ``then``, ``do``, ``{``, ``!``, ``coproc``, ...), ``time`` with its ``-p``,
    ``function NAME``, and the builtins ``exec`` and ``command`` that run the words after them.
    """
    first = 0
    while first < len(words):
        raw = words[first].raw
        timed = raw == "-p" and first > 0 and words[first - 1].raw == "time"
        if raw == "function":
            # `function name { mycli ...; }`: the name is the function's, not a command.
            first += 2
            continue
        shell_word = timed or raw in _OPENING_WORDS or raw in _RUNNING_BUILTINS
        if not (shell_word or _ASSIGNMENT.match(raw)):
            break
        first += 1
    if first >= len(words) or words[first].raw != program:
        return
    own = words[first:]
    last = _last_own_word(own)
    found.append(Command(own[0].start, own[last].end))


def _last_own_word(words: list[_Word]) -> int:
    """The index of the last word before the trailing redirections (and their targets)."""
    cut: int | None = None
    i = 1
    while i < len(words):
        match = _REDIRECT.match(words[i].raw)
        if match is None:
            # A word of the program's after a redirection: the redirection stays, and is
            # reported.
            cut = None
            i += 1
            continue
        if cut is None:
            cut = i
        # `> file` takes the next word as its target; `>file` and `2>&1` are whole.
        i += 2 if match.end() == len(words[i].raw) else 1
    return (cut if cut is not None else len(words)) - 1


def _single_quoted(text: str) -> list[tuple[int, int]]:
    if "'" not in text:
        return []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == '"':
            i = _double_quoted_end(text, i + 1, len(text), "", [])
            continue
        if ch == "'":
            close = text.find("'", i + 1)
            close = len(text) if close < 0 else close
            spans.append((i, close))
            i = close + 1
            continue
        i += 1
    return spans


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < position < end for start, end in spans)
