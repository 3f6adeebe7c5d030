r"""Shell-accurate tokenizing of one example (SPEC 4, step 1).

An example is a line an agent may paste into a shell. It is valid only when bash would run it as
exactly one simple command, so that the argv bash builds is the argv the program receives when it
is called directly. :func:`tokenize` turns the example into that argv (:class:`Word` records with
their character spans) and reports everything that breaks the rule as :class:`ShellProblem`
records: pipes, lists, newlines, redirects, here-documents, subshells, compound commands,
substitutions, parameter and arithmetic expansion, ``$'…'`` and ``$"…"``, leading assignments,
comments and parse errors are errors; globs, brace expansion and tilde expansion are warnings.

Two paths produce the same :class:`Tokens` (a property test proves it):

* the fast path, one compiled regular expression, for the common plain example: words made of a
  safe character set, single-quoted strings, and double-quoted strings without ``$``, backtick,
  backslash or ``!``, separated by spaces and tabs, and no keyword or ``=`` in the first word.
  Nothing in such a text is a shell construct, so its words are the quote-stripped pieces;
* the accurate path for everything else, in three layers: a lexer of our own (quoting, nesting,
  comments, expansions, continuations, here-document bodies, exactly as bash's lexer sees them);
  bashlex for the command structure (lists, pipelines, redirects, assignments, compound commands)
  and the word spans; and bash's own expansion rules, ported (``braces.c``, ``pathexp.c``,
  ``subst.c``, ``general.c``), for quote removal and the glob, brace and tilde warnings. bashlex
  is imported only when the fast path declines (importing it costs about 120 ms).

bashlex's bugs, and how each is handled here:

* it re-reads single-quoted text as unquoted (``a'$X'`` gets a parameter, ``a'`'`` raises,
  ``a'${'`` loops forever, allocating memory) and misplaces comments (``a;#b`` runs ``b``): it
  is given a text where the content of '…', ``$'…'`` and ``$((…))`` is ``_`` and top-level
  comments are blanks, always of the same length, so every span stays where it was;
* it raises on ``$((…))`` (hidden as above) and on a trailing backslash-newline (lines are joined
  first, as bash's input reader does, and spans mapped back);
* it drops the backslash of ``"\a"`` (bash keeps it), calls ``$é`` and ``a$`` parameters and
  misses ``$X`` after a ``~`` prefix: quote removal and expansions come from our lexer instead;
* it takes the word after a plain word ``{`` for a keyword (``notes add { }`` fails): parsed again
  with a placeholder for such braces;
* it keeps the quotes of a here-document delimiter, and raises on ``time``, ``case``,
  ``coproc``, ``select``, ``[[``: the construct is reported from the text;
* it is slower than linear in the number of commands: hence :data:`MAX_CHARS`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

from exampleguard._codes import lookup
from exampleguard._diagnostics import Severity

__all__ = ["MAX_CHARS", "ShellProblem", "Tokens", "Word", "tokenize"]

MAX_CHARS: Final = 16384
"""Longest text :func:`tokenize` parses; longer text is a ``parse-error``, reported at once.

bashlex is slower than linear in the number of commands (8,192 commands of a 16k-character text
take about a second, a 32k-character pipeline several), so the limit bounds every call. It is
four times the default ``max_example_chars``.
"""


class Word(NamedTuple):
    """One shell word after quote removal, with where it came from.

    A tuple rather than a dataclass: one is made for every word of every example.
    """

    text: str
    """The argv element bash would pass: quotes removed, escapes resolved, continuations gone."""
    start: int
    """Character offset of the word's first raw character in the example."""
    end: int
    """Offset one past its last raw character (the raw span includes the quotes)."""


@dataclass(frozen=True, slots=True)
class ShellProblem:
    """Something in the example that bash would not pass through as plain arguments."""

    code: str
    """``parse-error``, ``shell-construct``, ``shell-comment`` or ``shell-expansion``."""
    message: str
    """One sentence a person reads, naming the construct."""
    start: int
    """Character offset where the offending text starts."""
    end: int
    """Offset one past the offending text."""

    @property
    def severity(self) -> Severity:
        """The registry's severity of the code; a warning never fails an example."""
        return lookup(self.code).severity


@dataclass(frozen=True, slots=True)
class Tokens:
    """The words of an example and the problems found in it.

    When the example has errors but its first simple command can still be identified (``notes
    delete 3 | head``), ``words`` holds that command's words so later stages can keep reporting;
    after a parse error ``words`` is empty.
    """

    words: tuple[Word, ...]
    problems: tuple[ShellProblem, ...]

    @property
    def ok(self) -> bool:
        """Whether no problem is an error (warnings allowed)."""
        return all(problem.severity is not Severity.ERROR for problem in self.problems)


def tokenize(text: str) -> Tokens:
    """Split one example into shell words the way bash would, reporting what is not plain.

    Never raises: malformed, hostile or huge input becomes a ``parse-error`` problem.
    """
    fast = _fast_tokenize(text)
    if fast is None and "\\\n" in text:
        fast = _fast_tokenize_continued(text)
    if fast is not None:
        return fast
    try:
        return _tokenize_with_bashlex(text)
    except Exception as exc:  # a bug of ours must not take the whole run down; tests assert none
        message = f"internal error while tokenizing: {type(exc).__name__}: {exc}"
        return Tokens((), (_error("parse-error", message, 0, len(text)),))


# ---------------------------------------------------------------------------------------------
# Fast path
# ---------------------------------------------------------------------------------------------

# Characters that are literal in an unquoted bash word and in every expansion rule: no
# metacharacters, quotes, `$`, backslash, glob (`*?[]`), brace (`{}`), tilde, history `!` or `#`
# (which starts a comment at the start of a word, so it is only allowed after the first piece).
# Non-ASCII characters are word characters for bash (it splits on space, tab and newline only);
# lone surrogates are excluded because they are not valid Unicode (a parse-error).
# Written as the complement of what is excluded (ASCII controls and specials, and surrogates):
# the same set as `[A-Za-z0-9_\-./:,=@%+^\u0080-\ud7ff\ue000-\U0010ffff]`, which the regex
# compiler takes tens of milliseconds to optimise at every start-up.
_EXCLUDED = "\\x00-\\x1f\\x7f \"!$&'()*;<>?\\[\\\\\\]`{|}~\ud800-\udfff"
_PLAIN = f"[^{_EXCLUDED}#]"
_PLAIN_OR_HASH = f"[^{_EXCLUDED}]"
_SQ = "'[^'\x00\ud800-\udfff]*+'"
_DQ = '"[^"$`\\\\!\x00\ud800-\udfff]*+"'
_FAST_WORD_SRC = f"(?:{_PLAIN}|{_SQ}|{_DQ})(?:{_PLAIN_OR_HASH}|{_SQ}|{_DQ})*+"
# Possessive quantifiers: the pieces are distinguished by their first character, so nothing ever
# needs to be given back, and a failing match stays linear in the length of the text.
_FAST_TEXT = re.compile(f"[ \t]*+{_FAST_WORD_SRC}(?:[ \t]++{_FAST_WORD_SRC})*+[ \t]*+")
_FAST_WORD = re.compile(_FAST_WORD_SRC)
_NON_BLANK = re.compile("[^ \t]+")
_FAST_QUOTED = re.compile("'[^']*'|\"[^\"]*\"")

# Reserved words are only special as the first word of a command (the only command position a
# plain text has); the fast path leaves them, and first words with `=` (assignments), to bashlex.
_RESERVED_WORDS: Final = frozenset(
    {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until"}
    | {"do", "done", "in", "function", "time", "coproc"}
)


def _fast_tokenize(text: str) -> Tokens | None:
    """Tokenize a plain text without bashlex, or return None when the text is not plain."""
    if len(text) > MAX_CHARS or _FAST_TEXT.fullmatch(text) is None:
        return None
    quoted = "'" in text or '"' in text
    # Without quotes the words are the runs of non-blanks; the simpler pattern is twice as fast.
    matches = _FAST_WORD.finditer(text) if quoted else _NON_BLANK.finditer(text)
    words: list[Word] = []
    for match in matches:
        raw = match.group()
        if not words and ("=" in raw or raw in _RESERVED_WORDS):
            return None
        # Only the words with quotes in them have quotes to remove.
        if quoted and ("'" in raw or '"' in raw):
            value = _FAST_QUOTED.sub(_strip_quotes, raw)
        else:
            value = raw
        words.append(Word(value, match.start(), match.end()))
    return Tokens(tuple(words), ())


def _fast_tokenize_continued(text: str) -> Tokens | None:
    """Tokenize a plain text written over several lines with backslash-newlines, or return None.

    Documentation breaks long command lines this way. bash removes each backslash-newline
    outside quotes before it splits anything, as the accurate path does; here only where that
    is all there is to know: every backslash is one of these, outside quotes, and there is no
    ``#`` (a comment would end at the newline). The joined text must then be plain.
    """
    if len(text) > MAX_CHARS or "#" in text:
        return None
    continuations = _unquoted_continuations(text)
    if continuations is None:
        return None
    joined, index = _join_lines(text, continuations)
    fast = _fast_tokenize(joined)
    if fast is None:
        return None
    return Tokens(tuple(Word(w.text, *_span_back(index, w.start, w.end)) for w in fast.words), ())


def _unquoted_continuations(text: str) -> list[int] | None:
    """Where the backslash-newlines outside quotes are; None if any other backslash is."""
    found: list[int] = []
    quote = ""
    for position, character in enumerate(text):
        if quote:
            if character == quote:
                quote = ""
            elif character == "\\":
                return None
        elif character in "'\"":
            quote = character
        elif character == "\\":
            if text[position + 1 : position + 2] != "\n":
                return None
            found.append(position)
    return found


def _strip_quotes(match: re.Match[str]) -> str:
    return match.group()[1:-1]


# ---------------------------------------------------------------------------------------------
# Accurate path
# ---------------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
_BLANK_OR_NEWLINE = " \t\n"
_METACHARS = "|&;()<>"  # with blanks and newline, these end a word (bash's shell_meta_chars)
_WORD_END = _BLANK_OR_NEWLINE + _METACHARS
_OPENING_KEYWORDS: Final = {
    "if": "an 'if' compound command",
    "for": "a 'for' loop",
    "while": "a 'while' loop",
    "until": "an 'until' loop",
    "case": "a 'case' compound command",
    "select": "a 'select' loop",
    "function": "a function definition",
    "coproc": "a 'coproc' coprocess",
    "time": "the 'time' keyword",
    "[[": "a '[[ … ]]' conditional command",
    "((": "an arithmetic command '(( … ))'",
    "{": "a command group '{ …; }'",
    "(": "a subshell '( … )'",
    "!": "the '!' keyword (it negates the exit status)",
}
# bashlex raises NotImplementedError for these; its message names the construct.
_NOT_IMPLEMENTED: Final = (
    ("arithmetic for", "for"),
    ("time command", "time"),
    ("coproc", "coproc"),
    ("select command", "select"),
    ("case", "case"),
    ("pattern", "case"),
    ("arithmetic command", "(("),
    ("cond command", "[["),
)
_LIST_OPERATORS: Final = {
    ";": "';' separates commands",
    "&&": "'&&' runs a second command",
    "||": "'||' runs a second command",
    "&": "'&' runs the command in the background",
}
_HEREDOCS: Final = frozenset({"<<", "<<-"})
# `a[1]=x` before the command is an array-element assignment for bash; bashlex calls it a word.
_SUBSCRIPT_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\]]*\]\+?=")
_NEWLINE_MESSAGE = (
    "a newline outside quotes ends the command: an example must be exactly one command"
)


def _tokenize_with_bashlex(text: str) -> Tokens:
    """Tokenize any text with bashlex for the structure (the accurate path; never raises)."""
    early = _check_text(text)
    if early is not None:
        return early
    lex = _lex(text)
    if not lex.continuations:
        return _tokenize_lines(text, lex)
    # bash's input reader removes every backslash-newline outside single quotes and comments
    # before it splits anything, so `$\<newline>X` is `$X`: tokenize the joined text and give
    # every span back in the example's own offsets.
    joined, index = _join_lines(text, lex.continuations)
    if not joined.strip(_BLANK_OR_NEWLINE):
        return Tokens((), (_error("parse-error", "the example is empty", 0, len(text)),))
    tokens = _tokenize_lines(joined, _lex(joined))
    return Tokens(
        tuple(Word(w.text, *_span_back(index, w.start, w.end)) for w in tokens.words),
        tuple(
            ShellProblem(p.code, p.message, *_span_back(index, p.start, p.end))
            for p in tokens.problems
        ),
    )


def _join_lines(text: str, continuations: list[int]) -> tuple[str, list[int]]:
    """Remove the backslash-newlines; index[k] is where joined character k was in text."""
    pieces = []
    index: list[int] = []
    previous = 0
    for position in continuations:
        pieces.append(text[previous:position])
        index.extend(range(previous, position))
        previous = position + 2
    pieces.append(text[previous:])
    index.extend(range(previous, len(text) + 1))  # one past the end maps to the end
    return "".join(pieces), index


def _span_back(index: list[int], start: int, end: int) -> tuple[int, int]:
    return index[start], (index[end - 1] + 1 if end > start else index[start])


def _tokenize_lines(text: str, lex: _Lex) -> Tokens:
    """Tokenize a text without backslash-newlines (outside single quotes and comments)."""
    if lex.unclosed is not None:
        position, opener = lex.unclosed
        what = "quote" if opener in ("'", '"', "`") else "expansion"
        message = f"unbalanced {what}: the {opener} at offset {position} is never closed"
        return Tokens((), (_error("parse-error", message, position, len(text)),))
    if lex.trailing_backslash is not None:
        position = lex.trailing_backslash
        message = "the example ends with a lone backslash, which escapes nothing"
        return Tokens((), (_error("parse-error", message, position, position + 1),))
    hidden = lex.hide_literal_text(text)
    if not hidden.strip(_BLANK_OR_NEWLINE):
        problems = [_comment_problem(text, start, end) for start, end in lex.comments]
        message = "the example has no command" if problems else "the example is empty"
        problems.append(_error("parse-error", message, 0, len(text)))
        return _tokens([], problems)
    trees, error = _parse(hidden)
    if error is not None and lex.brace_words:
        # bashlex bug: after a plain word `{` or `}` it treats the next word as a reserved word
        # (`notes add { }` fails to parse). Such braces are ordinary words for bash; parse again
        # with a placeholder of the same length so every span stays where it was.
        patched = list(hidden)
        for position in _argument_braces(text, lex.brace_words):
            patched[position] = "_"
        retry, retry_error = _parse("".join(patched))
        if retry_error is None:
            trees, error = retry, None
    if error is not None:
        return _failure(text, error, lex)
    return _Collector(text, lex).run(trees)


def _check_text(text: str) -> Tokens | None:
    """Reject what no parser should see: huge text, NUL, lone surrogates, nothing at all."""
    problems: list[ShellProblem] = []
    if len(text) > MAX_CHARS:
        message = (
            f"the example is {len(text)} characters long; examples longer than {MAX_CHARS} "
            "characters are not parsed"
        )
        return Tokens((), (_error("parse-error", message, MAX_CHARS, len(text)),))
    nul = text.find("\x00")
    if nul >= 0:
        message = "the example contains a NUL character, which cannot be part of an argument"
        problems.append(_error("parse-error", message, nul, nul + 1))
    surrogate = _SURROGATE.search(text)
    if surrogate is not None:
        message = "the example is not valid Unicode: it contains a lone surrogate"
        problems.append(_error("parse-error", message, surrogate.start(), surrogate.end()))
    if problems:
        return _tokens([], problems)
    if not text.strip(_BLANK_OR_NEWLINE):
        return Tokens((), (_error("parse-error", "the example is empty", 0, len(text)),))
    return None


def _parse(text: str) -> tuple[list[Any], Exception | None]:
    """Run bashlex; return its trees or the exception it raised."""
    # Imported here, not at the top: the fast path handles most examples, and importing bashlex
    # costs about 120 ms of start-up.
    import bashlex  # noqa: PLC0415

    try:
        return list(bashlex.parse(text)), None
    except Exception as exc:  # any bashlex failure, even one of its bugs, is a parse-error
        return [], exc


def _argument_braces(text: str, brace_words: list[int]) -> list[int]:
    """Those one-character words `{` / `}` that follow another word (so are plain words)."""
    positions = []
    for position in brace_words:
        end = position  # look back only to the previous word: linear in the whole text
        while end > 0 and text[end - 1] in " \t":
            end -= 1
        if end == 0 or text[end - 1] in _METACHARS + "\n":
            continue  # command position: a real group brace, or bash would not accept it either
        start = end
        while start > 0 and text[start - 1] not in _BLANK_OR_NEWLINE:
            start -= 1
        previous = text[start:end]
        if previous not in _RESERVED_WORDS and previous not in _OPENING_KEYWORDS:
            positions.append(position)
    return positions


def _failure(text: str, error: Exception, lex: _Lex) -> Tokens:
    """Turn a bashlex exception into one problem with the best span we can find."""
    n = len(text)
    if isinstance(error, RecursionError):
        message = "the example is nested too deeply to parse"
        return Tokens((), (_error("parse-error", message, 0, n),))
    if isinstance(error, NotImplementedError):
        reason = str(error)
        for marker, keyword in _NOT_IMPLEMENTED:
            if marker in reason:
                start, end = _find_keyword(text, keyword)
                message = f"{_OPENING_KEYWORDS[keyword]} is a shell construct, not one command"
                return Tokens((), (_error("shell-construct", message, start, end),))
    first = _first_token(text)
    if first is not None and first[0] in _OPENING_KEYWORDS:
        keyword, start, end = first
        message = f"{_OPENING_KEYWORDS[keyword]} is a shell construct, not one command"
        return Tokens((), (_error("shell-construct", message, start, end),))
    if lex.heredocs:  # bashlex bug: it keeps the quotes of a delimiter (`<<'EOF'`) and fails
        start, end = lex.heredocs[0]
        message = "a here-document '<<' is fed to the command by the shell"
        return Tokens((), (_error("shell-construct", message, start, end),))
    reason = getattr(error, "message", None) or str(error) or type(error).__name__
    where: object = getattr(error, "position", None)
    if reason == "unexpected EOF":
        # bashlex bug: its end-of-input token can keep the lexer of an earlier failed parse, so
        # the position is that text's length; the end of input is the end of this text.
        where = n
    start = min(max(where, 0), n - 1) if isinstance(where, int) else 0
    message = f"the shell cannot parse this: {reason}"
    return Tokens((), (_error("parse-error", message, start, start + 1),))


def _first_token(text: str) -> tuple[str, int, int] | None:
    """Return the first raw token: an opening keyword or a word up to a blank or metachar."""
    start = len(text) - len(text.lstrip(_BLANK_OR_NEWLINE))
    if text.startswith("((", start):
        return "((", start, start + 2
    if text.startswith("(", start):
        return "(", start, start + 1
    end = start
    while end < len(text) and text[end] not in _WORD_END:
        end += 1
    return (text[start:end], start, end) if end > start else None


def _find_keyword(text: str, keyword: str) -> tuple[int, int]:
    """Span of the first occurrence of a keyword that starts a token, else the whole text."""
    pattern = re.escape(keyword) if keyword in ("((", "[[") else rf"{keyword}(?![^\s;&|()<>])"
    match = re.search(rf"(?<![^\s;&|()<>]){pattern}", text)
    return (match.start(), match.end()) if match else (0, len(text))


class _Collector:
    """Walks bashlex's trees: the first simple command's words and every problem found."""

    def __init__(self, text: str, lex: _Lex) -> None:
        self.text = text
        self.lex = lex
        self.problems: list[ShellProblem] = []
        self.covered: list[tuple[int, int]] = []  # compound commands and here-documents
        self.first_done = False
        self.first_words: list[Any] = []

    def run(self, trees: list[Any]) -> Tokens:
        """Collect the problems of every tree and the words of the first simple command."""
        stack = list(reversed(trees))
        while stack:
            node = stack.pop()
            kind = node.kind
            if kind in ("list", "pipeline"):
                stack.extend(reversed(node.parts))
            elif kind == "operator":
                if node.op in _LIST_OPERATORS:  # newlines come from the lexer
                    message = f"{_LIST_OPERATORS[node.op]}: an example must be exactly one command"
                    self._add("shell-construct", message, node.pos)
            elif kind == "pipe":
                message = f"a pipe '{node.pipe}' makes this two commands"
                self._add("shell-construct", message, node.pos)
            elif kind == "reservedword":
                message = f"{_OPENING_KEYWORDS['!']} is a shell construct, not one command"
                self._add("shell-construct", message, node.pos)
            elif kind == "command":
                self._command(node)
            else:
                self._compound(node)

        problems = self.problems
        lex = self.lex
        # What the lexer found at the top level, except inside a compound command or a
        # here-document, which are reported whole.
        covered = _merge(self.covered)
        starts = [start for start, _ in covered]
        problems.extend(
            _comment_problem(self.text, start, end)
            for start, end in lex.comments
            if not _inside(start, covered, starts)
        )
        problems.extend(
            _error("shell-construct", _NEWLINE_MESSAGE, position, position + 1)
            for position in lex.newlines
            if not _inside(position, covered, starts)
        )
        expansions: dict[int, int] = {}
        for start, end in lex.expansions:
            if not _inside(start, covered, starts):
                problems.append(_expansion_problem(self.text, start, end))
                expansions[start] = end
        for start, end in lex.dollar_quotes:
            if not _inside(start, covered, starts):
                ansi = self.text.startswith("'", start + 1)
                kind = "ANSI-C quoting $'…'" if ansi else 'locale quoting $"…"'
                problems.append(
                    _error("shell-construct", f"{kind} is interpreted by the shell", start, end)
                )

        words = []
        for node in self.first_words:
            start, end = node.pos
            analysis = _analyze_word(self.text, start, end, expansions)
            words.append(Word(analysis.value, start, end))
            problems.extend(analysis.warnings)
        return _tokens(words, problems)

    def _add(self, code: str, message: str, pos: tuple[int, int]) -> None:
        self.problems.append(_error(code, message, pos[0], pos[1]))

    def _command(self, node: Any) -> None:
        first = not self.first_done
        self.first_done = True
        prefix = True  # assignments count only before the command name
        for part in node.parts:
            start, end = part.pos
            raw = self.text[start:end]
            if part.kind == "redirect":
                self._redirect(part)
            elif prefix and (
                part.kind == "assignment" or _SUBSCRIPT_ASSIGNMENT.match(raw) is not None
            ):
                message = (
                    f"the assignment {_show(raw)} sets a shell variable: "
                    "it is not an argument of the command"
                )
                self._add("shell-construct", message, part.pos)
            elif part.kind in ("word", "assignment"):
                prefix = False
                if first:
                    self.first_words.append(part)
            else:
                self._compound(part)

    def _redirect(self, node: Any) -> None:
        operator = str(node.type)
        start, end = node.pos
        if operator in _HEREDOCS:
            message = f"a here-document '{operator}' is fed to the command by the shell"
            self.covered.append((start, end))
        elif operator == "<<<":
            message = "a here-string '<<<' is fed to the command by the shell"
        else:
            message = f"a redirect {_show(self.text[start:end])} is performed by the shell"
        self._add("shell-construct", message, node.pos)

    def _compound(self, node: Any) -> None:
        self.first_done = True
        start, end = node.pos
        raw = self.text[start:end]
        if node.kind == "function":
            what = _OPENING_KEYWORDS["function"]
        elif raw.startswith("(("):
            what = _OPENING_KEYWORDS["(("]
        else:
            first = _first_token(raw)
            keyword = first[0] if first is not None else ""
            what = _OPENING_KEYWORDS.get(keyword, "a compound command")
        message = f"{what} is a shell construct, not one command"
        self._add("shell-construct", message, node.pos)
        self.covered.append((start, end))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort and merge overlapping spans, so that membership is one binary search."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _inside(position: int, merged: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether position falls in one of the merged spans (starts: their start offsets)."""
    index = bisect.bisect_right(starts, position) - 1
    return index >= 0 and position < merged[index][1]


def _tokens(words: list[Word], problems: list[ShellProblem]) -> Tokens:
    """Build the result with its problems in reading order (by span, then code)."""
    problems.sort(key=lambda p: (p.start, p.end, p.code, p.message))
    return Tokens(tuple(words), tuple(problems))


def _expansion_problem(text: str, start: int, end: int) -> ShellProblem:
    shown = _show(text[start:end])
    if text.startswith(("$((", "$["), start):
        message = f"arithmetic expansion {shown} is evaluated by the shell"
    elif text.startswith(("$(", "`"), start):
        message = f"command substitution {shown} is expanded by the shell"
    elif text.startswith(("<(", ">("), start):
        message = f"process substitution {shown} is expanded by the shell"
    else:
        message = f"parameter expansion {shown} is expanded by the shell"
    return _error("shell-construct", message, start, end)


def _comment_problem(text: str, start: int, end: int) -> ShellProblem:
    message = (
        f"'#' starts a comment: the shell drops {_show(text[start:end])} "
        "(quote it to pass it as an argument)"
    )
    return _error("shell-comment", message, start, end)


def _error(code: str, message: str, start: int, end: int) -> ShellProblem:
    return ShellProblem(code, message, start, end)


def _warning(message: str, start: int, end: int) -> ShellProblem:
    return ShellProblem("shell-expansion", message, start, end)


def _show(fragment: str, limit: int = 40) -> str:
    """Quote a fragment of the example for a message: short, on one line, printable."""
    if len(fragment) > limit:
        fragment = fragment[: limit - 1] + "…"
    shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in fragment)
    return f"'{shown}'"


# ---------------------------------------------------------------------------------------------
# Lexer: quoting and nesting as bash sees them, independent of bashlex
# ---------------------------------------------------------------------------------------------

_FrameKind = Literal["dq", "bq", "cmd", "brace", "arith", "bracket"]
_OPENERS: Final = {
    "dq": '"',
    "bq": "`",
    "cmd": "$(",
    "brace": "${",
    "arith": "$((",
    "bracket": "$[",
}
_DOLLAR_OPENERS: Final[tuple[tuple[str, _FrameKind], ...]] = (
    ("$((", "arith"),
    ("$[", "bracket"),
    ("${", "brace"),
    ("$(", "cmd"),
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL_PARAMETERS = "0123456789@*#?-$!"


@dataclass(slots=True)
class _Frame:
    """An open construct: `"…"`, `` `…` ``, `$(…)` / `<(…)`, `${…}`, `$((…))` or `$[…]`."""

    kind: _FrameKind
    start: int
    outermost: bool  # an expansion not inside another expansion (double quotes do not count)
    depth: int = 0  # parentheses (or brackets) opened inside and not yet closed
    dollar: bool = False  # a `$"…"` string


@dataclass(slots=True)
class _Lex:
    """What one pass over the text found; problems come from the top-level findings."""

    comments: list[tuple[int, int]] = field(default_factory=list)
    newlines: list[int] = field(default_factory=list)
    dollar_quotes: list[tuple[int, int]] = field(default_factory=list)
    expansions: list[tuple[int, int]] = field(default_factory=list)  # outermost ones
    brace_words: list[int] = field(default_factory=list)  # one-character words `{` and `}`
    literal: list[tuple[int, int]] = field(default_factory=list)  # inside '…' and $'…'
    double_quoted: list[tuple[int, int]] = field(default_factory=list)  # inside top-level "…"
    continuations: list[int] = field(default_factory=list)  # backslash-newlines bash removes
    heredocs: list[tuple[int, int]] = field(default_factory=list)  # `<<WORD` operators
    unclosed: tuple[int, str] | None = None
    trailing_backslash: int | None = None

    def hide_literal_text(self, text: str) -> str:
        """Text for bashlex, of the same length: only what it needs to see, nothing to misread.

        bash never looks inside '…' or a comment, but bashlex does: its word expansion re-reads
        the content of a single-quoted part as unquoted text (a `$X` there becomes a parameter,
        `a'`'` raises, `a'${'` loops forever). Nor does bashlex need the inside of an expansion,
        which the lexer reports whole; left there, it recurses into it, raises on `$((…))`, and
        its tilde rule can skip an opening backquote and loop on the `${` behind it. So the
        content of quotes and expansions becomes `_` and top-level comments become blanks; every
        span stays where it was.
        """
        if not (self.literal or self.comments or self.expansions or self.double_quoted):
            return text
        chars = list(text)
        # Inside double quotes only expansions matter, and the lexer reports those itself;
        # bashlex misreads some quoted text (`0"<("` as a process substitution).
        for start, end in (*self.literal, *self.double_quoted):
            chars[start:end] = "_" * (end - start)
        for start, end in self.expansions:
            if text.startswith(("$((", "$["), start):  # bashlex cannot parse these at all
                inner = (start, end)
            elif text.startswith("`", start):
                inner = (start + 1, end - 1)
            elif text.startswith(("$(", "${", "<(", ">("), start):
                inner = (start + 2, end - 1)
            else:
                continue  # `$NAME`: nothing inside
            chars[inner[0] : inner[1]] = "_" * (inner[1] - inner[0])
        for start, end in self.comments:
            chars[start:end] = " " * (end - start)
        return "".join(chars)


class _Lexer:
    """One pass over the text with an explicit stack of open constructs (no recursion).

    Follows bash's lexer where it matters here: `#` starts a comment only at the start of a
    token (after a blank, a newline or a metacharacter) and runs to the end of the line,
    backslashes included; `$'…'` escapes with backslashes; a backquote ends `` `…` `` even inside
    quotes; `$` starts an expansion only before a name, a digit, a special parameter, `{`, `(`
    or `[`; here-document bodies are skipped.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lex = _Lex()
        self.stack: list[_Frame] = []
        self.expansion_frames = 0  # frames on the stack that are expansions (not "dq")
        self.token_start = True  # whether the next character starts a token
        self.pending: list[tuple[str, bool]] = []  # here-document delimiters awaiting a newline

    def push(self, kind: _FrameKind, start: int, *, dollar: bool = False) -> None:
        outermost = kind != "dq" and self.expansion_frames == 0
        self.stack.append(_Frame(kind, start, outermost, dollar=dollar))
        self.expansion_frames += kind != "dq"

    def pop(self, end: int) -> None:
        frame = self.stack.pop()
        self.expansion_frames -= frame.kind != "dq"
        if frame.kind == "dq" and self.expansion_frames == 0:
            opening = 2 if frame.dollar else 1
            self.lex.double_quoted.append((frame.start + opening, end - 1))
        if frame.outermost:
            self.lex.expansions.append((frame.start, end))
        if frame.dollar and not self.stack:
            self.lex.dollar_quotes.append((frame.start, end))

    def dollar(self, i: int) -> int:
        """Handle a `$` at i that is not `$'` or `$"`; return where scanning goes on."""
        text = self.text
        for prefix, kind in _DOLLAR_OPENERS:
            if text.startswith(prefix, i):
                self.push(kind, i)
                return i + len(prefix)
        following = text[i + 1 : i + 2]
        if following and following in _SPECIAL_PARAMETERS:
            end = i + 2
        else:
            name = _NAME.match(text, i + 1)
            if name is None:
                return i + 1  # a lone `$` is literal
            end = name.end()
        if self.expansion_frames == 0:
            self.lex.expansions.append((i, end))
        return end

    def run(self) -> _Lex:
        """Scan the whole text once; what it finds is in the returned :class:`_Lex`."""
        text, stack = self.text, self.stack
        n = len(text)
        i = 0
        while i < n:
            frame = stack[-1] if stack else None
            if frame is None or frame.kind not in ("dq", "bq"):
                i = self._unquoted(i, frame)
            elif frame.kind == "dq":
                i = self._in_double_quotes(i)
            else:
                i = self._in_backquotes(i)
        lex = self.lex
        if stack and lex.unclosed is None:
            frame = stack[-1]
            lex.unclosed = (frame.start + frame.dollar, _OPENERS[frame.kind])
        return lex

    def _in_double_quotes(self, i: int) -> int:
        """One step inside `"…"`: only `"`, backslash, backquote and `$` mean anything."""
        c = self.text[i]
        if c == '"':
            self.pop(i + 1)
            return i + 1
        if c == "\\":
            return self._escape(i)
        if c == "`":
            self.push("bq", i)
            return i + 1
        if c == "$":
            self.token_start = True  # if it opened $(…), its first word starts here
            return self.dollar(i)
        return i + 1

    def _in_backquotes(self, i: int) -> int:
        """One step inside `` `…` ``: the closing backquote ends them even inside a quote."""
        text, c = self.text, self.text[i]
        if c == "`":
            self.pop(i + 1)
            self.token_start = False
            return i + 1
        if c == "\\":
            return self._escape(i)
        if c == "'":
            j = i + 1
            while j < len(text) and text[j] not in "'`":
                j += 1
            if j < len(text) and text[j] == "'":
                self.lex.literal.append((i + 1, j))
                j += 1
            return j
        return i + 1

    def _escape(self, i: int) -> int:
        """A backslash inside quotes: it and the next character; a backslash-newline is noted."""
        if self.text.startswith("\n", i + 1):
            self.lex.continuations.append(i)
        return i + 2

    def _unquoted(self, i: int, frame: _Frame | None) -> int:
        """One step at the top level or inside `$(…)`, `${…}`, `$((…))` or `$[…]`."""
        # Quotes and expansions work alike at the top level and inside every expansion.
        quoted = self._quote_or_expansion(i)
        if quoted is not None:
            return quoted
        if frame is not None and frame.kind == "brace":
            if self.text[i] == "}":
                self.pop(i + 1)
            return i + 1
        if frame is not None and frame.kind in ("arith", "bracket"):
            return self._in_arithmetic(i, frame)
        return self._in_commands(i, frame)

    def _quote_or_expansion(self, i: int) -> int | None:
        """Where scanning goes on after a backslash, quote or `$` at i; None for anything else.

        An unclosed quote, or a backslash that ends the text, ends the scan (returns its end).
        """
        text, lex, c = self.text, self.lex, self.text[i]
        if c == "\\":
            if i + 1 == len(text):
                if not self.stack:
                    lex.trailing_backslash = i
                return i + 1
            if text[i + 1] == "\n":
                lex.continuations.append(i)
            else:
                self.token_start = False
            return i + 2
        if c == "'":
            close = text.find("'", i + 1)
            if close < 0:
                lex.unclosed = (i, c)
                return len(text)
            lex.literal.append((i + 1, close))
            self.token_start = False
            return close + 1
        if c in '"`':
            self.push("dq" if c == '"' else "bq", i)
            self.token_start = False
            return i + 1
        if c != "$":
            return None
        if text.startswith("'", i + 1):
            close = _ansi_c_end(text, i + 2)
            if close < 0:
                lex.unclosed = (i + 1, "'")
                return len(text)
            lex.literal.append((i + 2, close))
            if not self.stack:
                lex.dollar_quotes.append((i, close + 1))
            self.token_start = False
            return close + 1
        if text.startswith('"', i + 1):
            self.push("dq", i, dollar=True)
            self.token_start = False
            return i + 2
        end = self.dollar(i)
        self.token_start = text.startswith("$(", end - 2) and self.stack[-1].start == end - 2
        return end

    def _in_arithmetic(self, i: int, frame: _Frame) -> int:
        """One step inside `$((…))` or `$[…]`, counting the parentheses or brackets."""
        text, c = self.text, self.text[i]
        opener, closer = ("(", ")") if frame.kind == "arith" else ("[", "]")
        if c == opener:
            frame.depth += 1
        elif c == closer and frame.depth:
            frame.depth -= 1
        elif c == closer:
            end = i + (2 if frame.kind == "arith" and text.startswith("))", i) else 1)
            self.pop(end)
            return end
        return i + 1

    def _in_commands(self, i: int, frame: _Frame | None) -> int:
        """One step at the top level or in `$(…)`, `<(…)`, `>(…)`: words, operators, comments."""
        text, lex, stack, c = self.text, self.lex, self.stack, self.text[i]
        if c == "#" and self.token_start:
            newline = text.find("\n", i)
            end = len(text) if newline < 0 else newline
            if not stack:
                lex.comments.append((i, end))
            return end
        if c in "<>" and text.startswith("(", i + 1):
            self.push("cmd", i)
            self.token_start = True
            return i + 2
        if text.startswith("<<", i):
            self.token_start = True
            if text.startswith("<<<", i):
                return i + 3
            end = _heredoc_operator(text, i, self.pending)
            lex.heredocs.append((i, end))
            return end
        if c == "\n":
            if not stack:
                lex.newlines.append(i)
            self.token_start = True
            if not self.pending:
                return i + 1
            end = _skip_heredoc_bodies(text, i + 1, self.pending)
            self.pending.clear()
            return end
        if frame is not None and frame.kind == "cmd" and c in "()":
            if c == "(":
                frame.depth += 1
            elif frame.depth:
                frame.depth -= 1
            else:
                self.pop(i + 1)
                self.token_start = False
                return i + 1
        elif (
            c in "{}"
            and not stack
            and self.token_start
            and (i + 1 == len(text) or text[i + 1] in _WORD_END)
        ):
            lex.brace_words.append(i)
        self.token_start = c in _WORD_END
        return i + 1


def _lex(text: str) -> _Lex:
    """Lex the text (see :class:`_Lexer`)."""
    return _Lexer(text).run()


def _ansi_c_end(text: str, i: int) -> int:
    """Index of the `'` closing a $'…' string whose content starts at i, or -1.

    Inside $'…' a backslash escapes the next character, a quote included.
    """
    n = len(text)
    while i < n:
        c = text[i]
        if c == "'":
            return i
        i += 2 if c == "\\" else 1
    return -1


def _heredoc_operator(text: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    """Read `<<WORD` / `<<-WORD` at i, queue its delimiter, and return the index after it."""
    n = len(text)
    j = i + 2
    strip_tabs = text.startswith("-", j)
    j += strip_tabs
    while j < n and text[j] in " \t":
        j += 1
    delimiter = []
    while j < n and text[j] not in _WORD_END:
        c = text[j]
        if c in "'\"":
            close = text.find(c, j + 1)
            if close < 0:
                return i + 2  # unbalanced: let the main loop report the quote
            delimiter.append(text[j + 1 : close])
            j = close + 1
        elif c == "\\" and j + 1 < n:
            delimiter.append(text[j + 1])
            j += 2
        else:
            delimiter.append(c)
            j += 1
    if delimiter:
        heredocs.append(("".join(delimiter), strip_tabs))
    return j


def _skip_heredoc_bodies(text: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    """Skip the here-document bodies that start at i; return the index after the last one."""
    n = len(text)
    for delimiter, strip_tabs in heredocs:
        while i < n:
            newline = text.find("\n", i)
            line_end = n if newline < 0 else newline
            line = text[i:line_end]
            i = line_end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return min(i, n)


# ---------------------------------------------------------------------------------------------
# One word: quote removal and the expansions bash would still perform (warnings)
# ---------------------------------------------------------------------------------------------

_ANSI_C_ESCAPES: Final = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_DOUBLE_QUOTE_ESCAPABLE = '$`"\\'
_ASSIGNMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
# Beyond this many `{` in one word, the brace search (quadratic in bash too) is replaced by a
# conservative warning; real examples have a handful at most.
_MAX_BRACES = 32
_EXPANSION_MARK = "\x00"  # stands for a whole $(…) / ${…} in the raw word (NUL never gets here)


@dataclass(slots=True)
class _WordAnalysis:
    value: str
    warnings: list[ShellProblem]


def _analyze_word(text: str, start: int, end: int, expansions: dict[int, int]) -> _WordAnalysis:
    """Quote-remove the raw word text[start:end] and find the expansions bash would do to it.

    The text has no backslash-newlines left outside single quotes (see _join_lines).

    ``expansions`` maps the start of each substitution or parameter expansion to its end: they
    stay in the value verbatim (the example is rejected for them) and count as quoted text.
    """
    word = _QuoteRemoval(text, end, expansions)
    word.run(start)
    warnings = _brace_warnings(text, word.raw, word.raw_pos)
    warnings.extend(_tilde_warnings(word.raw, word.raw_pos))
    warnings.extend(_glob_warnings(word.value, word.quoted, word.value_pos))
    return _WordAnalysis("".join(word.value), warnings)


class _QuoteRemoval:
    """One word read the way bash reads it: as its expansions see it, and after quote removal.

    Each method reads one construct starting at an index and returns the index after it.
    """

    __slots__ = ("end", "expansions", "quoted", "raw", "raw_pos", "text", "value", "value_pos")

    def __init__(self, text: str, end: int, expansions: dict[int, int]) -> None:
        self.text, self.end, self.expansions = text, end, expansions
        self.raw: list[str] = []  # the word as bash's expansions see it, quotes included
        self.raw_pos: list[int] = []
        self.value: list[str] = []  # after quote removal
        self.quoted: list[bool] = []
        self.value_pos: list[int] = []

    def put_raw(self, ch: str, position: int) -> None:
        self.raw.append(ch)
        self.raw_pos.append(position)

    def put_value(self, ch: str, position: int, is_quoted: bool) -> None:
        self.value.append(ch)
        self.quoted.append(is_quoted)
        self.value_pos.append(position)

    def run(self, i: int) -> None:
        text, end = self.text, self.end
        while i < end:
            c = text[i]
            if i in self.expansions:
                i = self.expansion(i)
            elif c == "\\":
                i = self.backslash(i)
            elif c == "'" or (c == "$" and i + 1 < end and text[i + 1] == "'"):
                i = self.single_quoted(i)
            elif c == '"' or (c == "$" and i + 1 < end and text[i + 1] == '"'):
                i = self.double_quoted(i)
            else:
                self.put_raw(c, i)
                self.put_value(c, i, False)
                i += 1

    def expansion(self, i: int) -> int:
        stop = min(self.expansions[i], self.end)
        self.put_raw(_EXPANSION_MARK, i)
        for k in range(i, stop):
            self.put_value(self.text[k], k, True)
        return stop

    def backslash(self, i: int) -> int:
        text = self.text
        self.put_raw(text[i], i)
        if i + 1 < self.end:
            self.put_raw(text[i + 1], i + 1)
            self.put_value(text[i + 1], i + 1, True)
        else:
            self.put_value(text[i], i, False)
        return i + 2

    def single_quoted(self, i: int) -> int:
        """`'…'`, or `$'…'` with its backslash escapes decoded."""
        text, end = self.text, self.end
        ansi_c = text[i] == "$"
        if ansi_c:
            self.put_raw("$", i)
            i += 1
        self.put_raw("'", i)
        i += 1
        while i < end and text[i] != "'":
            self.put_raw(text[i], i)
            if ansi_c and text[i] == "\\" and i + 1 < end:
                self.put_raw(text[i + 1], i + 1)
                decoded = _ANSI_C_ESCAPES.get(text[i + 1], "\\" + text[i + 1])
                for ch in decoded:
                    self.put_value(ch, i, True)
                i += 2
                continue
            self.put_value(text[i], i, True)
            i += 1
        if i < end:
            self.put_raw("'", i)
        return i + 1

    def double_quoted(self, i: int) -> int:
        """`"…"`, or `$"…"` (a double-quoted string translated through the locale)."""
        text, end = self.text, self.end
        if text[i] == "$":
            self.put_raw("$", i)
            i += 1
        self.put_raw('"', i)
        i += 1
        while i < end and text[i] != '"':
            ch = text[i]
            if i in self.expansions:
                i = self.expansion(i)
                continue
            if ch == "\\" and i + 1 < end and text[i + 1] in _DOUBLE_QUOTE_ESCAPABLE:
                self.put_raw(ch, i)
                self.put_raw(text[i + 1], i + 1)
                self.put_value(text[i + 1], i + 1, True)
                i += 2
                continue
            self.put_raw(ch, i)
            self.put_value(ch, i, True)
            i += 1
        if i < end:
            self.put_raw('"', i)
        return i + 1


def _glob_warnings(
    value: list[str], quoted: list[bool], positions: list[int]
) -> list[ShellProblem]:
    """Warn about unquoted `*`, `?` and `[…]`, following bash's unquoted_glob_pattern_p."""
    warnings = []
    bracket: int | None = None
    for ch, is_quoted, position in zip(value, quoted, positions, strict=True):
        if is_quoted:
            continue
        if ch in "*?":
            message = f"'{ch}' is a glob: the shell replaces the word with matching file names"
            warnings.append(_warning(message, position, position + 1))
        elif ch == "[":
            if bracket is None:
                bracket = position
        elif ch == "]" and bracket is not None:
            message = "'[…]' is a glob: the shell replaces the word with matching file names"
            warnings.append(_warning(message, bracket, position + 1))
            bracket = None
        elif ch == "/":
            bracket = None  # a bracket expression cannot contain a slash (POSIX 2.13.3)
    return warnings


def _tilde_warnings(raw: list[str], positions: list[int]) -> list[ShellProblem]:
    """Warn about a `~` that starts a word, or follows `=` / `:` in an assignment-like word."""
    candidates = []  # indexes of a `~` that starts a tilde prefix
    if raw and raw[0] == "~":
        candidates.append(0)
    if _ASSIGNMENT_NAME.match("".join(raw)):
        # Outside POSIX mode bash expands a `~` after the first `=` and after every unquoted `:`
        # of a word that looks like an assignment, even when the word is an argument.
        seen_equals = False
        quote = ""
        k = 0
        while k < len(raw):
            ch = raw[k]
            if quote:
                if ch == "\\" and quote == '"':
                    k += 1
                elif ch == quote:
                    quote = ""
            elif ch == "\\":
                k += 1
            elif ch in "'\"":
                quote = ch
            elif ch in "=:":
                first_equals = ch == "=" and not seen_equals
                seen_equals = seen_equals or ch == "="
                if (ch == ":" or first_equals) and k + 1 < len(raw) and raw[k + 1] == "~":
                    candidates.append(k + 1)
            k += 1
    warnings = []
    for index in candidates:
        in_assignment = index > 0
        end = index + 1
        expands = True
        # bash_tilde_find_word: the prefix runs to the first `/` and is not expanded when it holds
        # a quote or a backslash; in an assignment a `:` ends it first. tilde_expand also ends
        # the user name at `:` (`~:x` becomes `$HOME:x`).
        prefix_end: int | None = None
        while end < len(raw) and raw[end] != "/":
            ch = raw[end]
            if ch == ":" and prefix_end is None:
                prefix_end = end
                if in_assignment:
                    break
            if ch in "\\'\"" or ch == _EXPANSION_MARK:  # `~$X` is a user name with a `$`
                expands = False
                break
            end += 1
        if not expands:
            continue
        stop = prefix_end if prefix_end is not None else end
        name = "".join(raw[index + 1 : stop])
        span_end = positions[stop - 1] + 1
        if name in ("", "+", "-") or name.lstrip("+-").isdigit():
            message = f"{_show('~' + name)} is expanded by the shell (tilde expansion)"
        else:
            message = (
                f"{_show('~' + name)} is expanded by the shell to the home directory of "
                f"user {_show(name)} if that user exists"
            )
        warnings.append(_warning(message, positions[index], span_end))
    return warnings


def _brace_warnings(text: str, raw: list[str], positions: list[int]) -> list[ShellProblem]:
    """Warn about the brace expansions bash would perform on the raw word (braces.c)."""
    if "{" not in raw:
        return []
    word = "".join(raw)
    spans: list[tuple[int, int]] = []
    if word.count("{") > _MAX_BRACES:
        first, last = word.find("{"), word.rfind("}")
        if last > first and ("," in word or ".." in word):
            spans.append((first, last + 1))
    else:
        spans = _brace_expansions(word)
    warnings = []
    for start, end in spans:
        span_start, span_end = positions[start], positions[end - 1] + 1
        shown = _show(text[span_start:span_end])
        message = f"{shown} is brace-expanded by the shell into several words"
        warnings.append(_warning(message, span_start, span_end))
    return warnings


def _brace_expansions(text: str) -> list[tuple[int, int]]:
    """Spans (indexes into text) of the brace expressions bash expands (brace_expand)."""
    spans: list[tuple[int, int]] = []
    base = 0
    while True:
        i = 0
        while True:  # find a `{` with a matching `}` that has a `,` or `..` at its level
            found, i = _brace_gobbler(text, i, "{")
            if not found:
                return spans
            found, close = _brace_gobbler(text, i + 1, "}")
            if found:
                break
            i += 1
        amble = text[i + 1 : close]
        if _has_unescaped_comma(amble) or _valid_sequence(amble):
            spans.append((base + i, base + close + 1))
        elif close + 1 >= len(text):
            return spans
        # bash goes on with the text after the closing brace as a new word of its own.
        base += close + 1
        text = text[close + 1 :]


def _brace_gobbler(text: str, i: int, satisfy: str) -> tuple[bool, int]:
    """Port of bash's brace_gobbler: find `satisfy` at brace level 0, understanding quotes."""
    level = 0
    quoted = ""
    pass_next = False
    commas = 0 if satisfy == "}" else 1
    n = len(text)
    while i < n:
        c = text[i]
        if pass_next:
            pass_next = False
            i += 1
            continue
        if c == "\\" and quoted in ("", '"', "`"):
            pass_next = True
            i += 1
            continue
        if c == "$" and text.startswith("{", i + 1) and quoted != "'":
            pass_next = True  # ${…} is not a brace expression
            i += 1
            if not quoted:
                level += 1
            continue
        if quoted:
            if c == quoted:
                quoted = ""
            i += 1
            continue
        if c in "\"'`":
            quoted = c
            i += 1
            continue
        if c == satisfy and level == 0 and commas > 0:
            # An open brace at the start of a word followed by whitespace or `}` (`{}`) is not
            # the start of an expansion.
            if (
                c == "{"
                and (i == 0 or text[i - 1] in _BLANK_OR_NEWLINE)
                and (i + 1 == n or text[i + 1] in _BLANK_OR_NEWLINE + "}")
            ):
                i += 1
                continue
            return True, i
        if c == "{":
            level += 1
        elif c == "}" and level:
            level -= 1
        elif (
            satisfy == "}"
            and level == 0
            and (c == "," or (text.startswith("..", i) and not text.startswith("}", i + 2)))
        ):
            commas += 1
        i += 1
    return False, i


def _has_unescaped_comma(amble: str) -> bool:
    i = 0
    while i < len(amble):
        if amble[i] == "\\":
            i += 2
            continue
        if amble[i] == ",":
            return True
        i += 1
    return False


_INTMAX_MIN = -(2**63)
_INTMAX_MAX = 2**63 - 1
_INT_MAX = 2**31 - 1
_C_SPACE = " \t\n\v\f\r"


def _strtoimax(text: str, i: int) -> tuple[int, int, bool]:
    """C strtoimax in base 10: (value, end index, out of range); end is i when nothing parsed."""
    j = i
    while j < len(text) and text[j] in _C_SPACE:
        j += 1
    sign = 1
    if j < len(text) and text[j] in "+-":
        sign = -1 if text[j] == "-" else 1
        j += 1
    digits_start = j
    while j < len(text) and "0" <= text[j] <= "9":
        j += 1
    if j == digits_start:
        return 0, i, False
    value = sign * int(text[digits_start:j])
    return value, j, not _INTMAX_MIN <= value <= _INTMAX_MAX


def _is_alpha(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _valid_sequence(amble: str) -> bool:
    """Tell whether `{x..y[..incr]}` is a sequence bash expands (expand_seqterm and mkseq)."""
    dots = amble.find("..")
    if dots < 0:
        return False
    lhs, rhs = amble[:dots], amble[dots + 2 :]
    if not lhs or not rhs:
        return False
    left, left_end, left_range = _strtoimax(lhs, 0)
    while left_end < len(lhs) and lhs[left_end] in " \t":
        left_end += 1
    if left_end > 0 and left_end == len(lhs) and not left_range:
        lhs_type = "int"
    elif _is_alpha(lhs[0]) and len(lhs) == 1:
        lhs_type, left = "char", ord(lhs[0])
    else:
        return False
    if "0" <= rhs[0] <= "9" or (rhs[0] in "+-" and len(rhs) > 1 and "0" <= rhs[1] <= "9"):
        right, end, out_of_range = _strtoimax(rhs, 0)
        if out_of_range or (end < len(rhs) and rhs[end] != "."):
            return False
        rhs_type = "int"
    elif _is_alpha(rhs[0]) and (len(rhs) == 1 or rhs[1] == "."):
        rhs_type, right, end = "char", ord(rhs[0]), 1
    else:
        return False
    increment = 1
    if rhs.startswith("..", end) and end + 2 < len(rhs):
        # When nothing parses, strtoimax leaves the end where it started, inside the text.
        increment, end, out_of_range = _strtoimax(rhs, end + 2)
        if out_of_range:
            return False
    if end != len(rhs) or lhs_type != rhs_type:
        return False
    return _sequence_fits(left, right, increment)


def _sequence_fits(start: int, end: int, increment: int) -> bool:
    """Apply the overflow checks of bash's mkseq (it expands nothing when they fail)."""
    if increment == 0:
        increment = 1
    if start > end and increment > 0:
        increment = -increment
    elif start < end and increment < 0:
        if increment == _INTMAX_MIN:
            return False
        increment = -increment
    difference = end - start
    if not _INTMAX_MIN + 3 <= difference <= _INTMAX_MAX - 2:
        return False
    return abs(difference) // abs(increment) <= _INT_MAX - 3
