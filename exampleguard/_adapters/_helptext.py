r"""The command lines a CLI prints in its own help: what counts as an example there.

Framework-neutral and free of imports from any framework: the adapters hand over each help text
of a command (its help or docstring, its epilog, an argparse description or usage, each
parameter's help) as plain text, and get back the command lines found in it, each with the
line and column where it starts. Which of those lines run the program, and how they are split
and checked, is decided later, exactly as for Markdown (:mod:`exampleguard._sources.help`).

The rule (docs/docs-examples.md, "Examples in help text"):

* a line whose text, once its indentation is removed, starts with the ``$ `` prompt is a command
  line, anywhere in the text;
* an *Examples section* starts after a heading line: its text, without leading ``#`` marks and
  trailing colons, is ``Example``, ``Examples``, ``Example usage``, ``Usage example`` or
  ``Usage examples`` (any case). In it, a line that starts with the program's name (followed by
  a blank or the end of the line) is a command line too, unless the section is a session (one
  of its lines is prompted): then only prompted lines are, the rest is output;
* the section ends before the next heading, or before the first non-blank line indented no more
  than the heading that is neither a command line nor a Markdown fence's line (a paragraph of
  prose after the examples);
* a command line that ends in a backslash continues on the next line, whose indentation stays
  part of the command as the shell keeps it; a ``> `` prompt on it is removed.

Everything else — prose, usage lines (``usage: notes [-h] ...``), output — is left alone.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "HEADINGS",
    "PROMPT",
    "HelpLine",
    "help_argvs",
    "help_examples",
    "help_tokenizer",
    "normalise_click_help",
    "place_in_source",
]

PROMPT = "$ "
"""The prompt that makes a line a command line anywhere in a help text."""
HEADINGS = frozenset({"example", "examples", "example usage", "usage example", "usage examples"})
"""The headings (lower-cased, without ``#`` marks and trailing colons) of an Examples section."""
_CONTINUATION_PROMPT = "> "
_HEADING = re.compile(r"#*\s*(?P<title>[^#:]*?)\s*:*\s*$")


@dataclass(frozen=True, slots=True)
class HelpLine:
    """One command line of a help text: its text, its help text, and where it starts there.

    ``command`` holds every physical line of a continued command, joined by newlines (the
    backslashes kept). ``line`` and ``column`` are 1-based, in the text as normalised.
    """

    command: str
    field: str
    line: int
    column: int

    def to_json(self, source: dict[str, Any] | None = None) -> dict[str, Any]:
        """The snapshot record of the line (``help_examples`` of a tree command)."""
        record: dict[str, Any] = {
            "command": self.command,
            "field": self.field,
            "line": self.line,
            "column": self.column,
        }
        if source is not None:
            record["source"] = source
        return record


def normalise_click_help(text: Any) -> str | None:
    r"""A Click-family help text as Click prints it: dedented, cut at ``\f``, ``\b`` blanked.

    ``None`` for anything that is not text (lazy strings and markers are not read).
    """
    if not isinstance(text, str) or not text.strip():
        return None
    # Click shows nothing after a form feed, and a line holding only `\b` is a marker that keeps
    # the next paragraph unwrapped: a blank line to a reader.
    shown = inspect.cleandoc(text).partition("\f")[0]
    return "\n".join("" if line.strip() == "\b" else line for line in shown.split("\n"))


def help_examples(texts: Iterable[tuple[str, str | None]], program: str) -> list[HelpLine]:
    """Every command line of the help texts ``texts`` (``(field, text)`` pairs), in order."""
    found: list[HelpLine] = []
    named = re.compile(rf"(?<![\w.-]){re.escape(program)}(?![\w.-])")
    for field, text in texts:
        if text and program in text:
            found.extend(_lines_of(text, field, program, named))
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_heading(stripped: str) -> bool:
    match = _HEADING.fullmatch(stripped)
    return match is not None and match["title"].lower() in HEADINGS


def _starts_with_program(stripped: str, program: str) -> bool:
    return stripped.startswith(program) and (
        len(stripped) == len(program) or stripped[len(program)].isspace()
    )


def _lines_of(text: str, field: str, program: str, named: re.Pattern[str]) -> list[HelpLine]:
    lines = text.split("\n")
    sections = _sections(lines, program)
    found: list[HelpLine] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.lstrip()
        number = i + 1
        i += 1
        prompted = stripped.startswith(PROMPT)
        section = sections.get(number)
        if prompted:
            cut = _indent(raw) + len(PROMPT)
        elif section is not None and not section and _starts_with_program(stripped, program):
            cut = _indent(raw)
        else:
            continue
        pieces = [raw[cut:]]
        while pieces[-1].endswith("\\") and i < len(lines):
            following = lines[i]
            i += 1
            if prompted and following.lstrip().startswith(_CONTINUATION_PROMPT):
                following = following.lstrip()[len(_CONTINUATION_PROMPT) :]
            pieces.append(following)
        command = "\n".join(pieces)
        # A prompted line of another program (`$ pip install notes`) is nobody's example.
        if named.search(command):
            found.append(HelpLine(command, field, number, cut + 1))
    return found


def _sections(lines: list[str], program: str) -> dict[int, bool]:
    """The lines (1-based) inside an Examples section, each → whether that section is a session."""
    inside: dict[int, bool] = {}
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not _is_heading(stripped):
            i += 1
            continue
        heading_indent = _indent(lines[i])
        members: list[int] = []
        j = i + 1
        continued = False
        while j < len(lines):
            line = lines[j]
            text = line.strip()
            if text and not continued:
                if _is_heading(text):
                    break
                command = text.startswith(PROMPT) or _starts_with_program(text, program)
                # A Markdown fence's own lines (Typer's markdown help) frame the examples.
                fence = text.startswith(("```", "~~~"))
                if _indent(line) <= heading_indent and not (command or fence):
                    break
            continued = text.endswith("\\")
            members.append(j + 1)
            j += 1
        session = any(lines[m - 1].lstrip().startswith(PROMPT) for m in members)
        for member in members:
            inside[member] = session
        i = j
    return inside


def place_in_source(
    where: Any, line: HelpLine, root: Path, written: str | None = None
) -> dict[str, Any] | None:
    """Where ``line`` is written in the Python source of ``where`` (a function or a module).

    The first line of the command is looked for in the object's source, as written (in a
    docstring each backslash may be doubled). ``file`` is relative to ``root`` when inside it.
    ``None`` when the object has no source or the line is not written there literally (a help
    text built at run time). ``written`` is the first line as the source spells it, where
    that differs from the help text (argparse's ``%(prog)s``).
    """
    # A framework's wrapper (Typer's) keeps the application's function as `__wrapped__`.
    where = inspect.unwrap(where) if callable(where) else where
    try:
        file = inspect.getsourcefile(where)
        source, first = inspect.getsourcelines(where)
    except (OSError, TypeError):
        return None
    if file is None:
        return None
    first = max(first, 1)
    wanted = (written or line.command).split("\n", 1)[0].rstrip("\\").rstrip()
    for spelling in dict.fromkeys((wanted, wanted.replace("\\", "\\\\"))):
        if not spelling:
            continue
        # The whole line, not the head of a longer one: after it the string or the line ends.
        pattern = re.compile(re.escape(spelling) + r"(?=[ \t]*(?:$|[\"'\\]))")
        for offset, text in enumerate(source):
            match = pattern.search(text)
            if match is not None:
                column = match.start()
                place: dict[str, Any] = {
                    "file": _shown(Path(file), root),
                    "line": first + offset,
                    "column": column + 1,
                }
                shown = line.command.split("\n", 1)[0].rstrip("\\").rstrip()
                if spelling != shown:
                    # Columns past what the source spells otherwise are mapped through it.
                    place["written"] = spelling
                return place
    return None


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def help_tokenizer() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """What reads a help example's words: the documentation's shell policy, then the tokenizer.

    Imported when first asked for: only a child asked about help examples needs them (one
    started ahead loads them while it waits for its questions).
    """
    from exampleguard._docshell import line_examples  # noqa: PLC0415
    from exampleguard._tokenize import tokenize  # noqa: PLC0415

    return line_examples, tokenize


def help_argvs(snapshot: dict[str, Any]) -> list[list[str]]:
    """The words after the program of every help example of ``snapshot``, as a run asks them.

    Exactly the words the parent reads from the same examples (the documentation's shell
    policy, then the tokenizer), so that the framework's verdict on each is found by its words.
    An example with a placeholder is judged by the model alone and is not asked about.
    """
    line_examples, tokenize = help_tokenizer()
    program = str(snapshot.get("program", ""))
    argvs: list[list[str]] = []
    for command in snapshot.get("commands", ()):
        for example in command.get("help_examples", ()):
            for found in line_examples(example["command"], program):
                if found.placeholders:
                    continue
                words = [word.text for word in tokenize(found.text).words]
                if words and words[0] == program:
                    argvs.append(words[1:])
    return list(map(list, dict.fromkeys(tuple(argv) for argv in argvs)))
