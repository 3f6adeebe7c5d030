"""argparse's ``@file`` arguments: the files an example names, read from the project.

A parser with ``fromfile_prefix_chars`` replaces every word that starts with one of them by the
arguments of the file the rest of the word names, one per line (``convert_arg_line_to_args``),
and reads the words those give in turn. An example's files are read here, by the loading stage,
relative to the project root (the configuration's folder) as the program run from there would
read them; binding expands them from what was read and opens no file, and the live judge reads
them through :func:`read_argument_file` too, so both see the same lines.

A name that leaves the project (absolute, or through ``..`` or a link) and anything but a regular
file are refused, never opened: an example's verdict depends on the project alone, and a FIFO
would block the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from exampleguard._files import read_regular

__all__ = ["MAX_ARGUMENT_FILE_BYTES", "ArgumentFile", "read_argument_file", "read_argument_files"]

MAX_ARGUMENT_FILE_BYTES = 1 << 20
"""The largest ``@file`` read: a command line's worth of arguments is far less."""


@dataclass(frozen=True, slots=True)
class ArgumentFile:
    """One ``@file`` as read: its lines, or why it could not be read (argparse's error)."""

    name: str
    """The file's name as the example writes it after the prefix character."""
    lines: tuple[str, ...] = ()
    error: str | None = None
    """Why the file cannot be read; argparse fails the parse with such a message."""


def read_argument_file(root: Path, name: str) -> ArgumentFile:
    """The file ``name`` (relative to ``root``) as argparse would read it, or why not.

    The lines are ``str.splitlines`` of the UTF-8 text, as argparse splits them.
    """
    path = root / name
    if not name or Path(name).is_absolute():
        return ArgumentFile(name, error=f"{name!r} is not a file inside the project")
    try:
        resolved = path.resolve()
        if not resolved.is_relative_to(root.resolve()):
            return ArgumentFile(name, error=f"{name!r} is outside the project")
        data = read_regular(resolved)
    except FileNotFoundError:
        return ArgumentFile(name, error=f"No such file or directory: {name!r}")
    except (OSError, RuntimeError) as error:
        # RuntimeError: a symlink loop while resolving.
        return ArgumentFile(name, error=f"cannot read {name!r}: {error}")
    if len(data) > MAX_ARGUMENT_FILE_BYTES:
        return ArgumentFile(name, error=f"{name!r} is larger than {MAX_ARGUMENT_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return ArgumentFile(name, error=f"{name!r} is not UTF-8 text: {error}")
    return ArgumentFile(name, lines=tuple(text.splitlines()))


def read_argument_files(
    root: Path, commands: Iterable[Sequence[str]], prefix_chars: str
) -> dict[str, ArgumentFile]:
    """Every file the words of ``commands`` name after one of ``prefix_chars``, by name.

    Files named on a line of a file read are read too (argparse reads them recursively); each
    name is read once. A line is taken as one argument, argparse's default; a program that
    overrides ``convert_arg_line_to_args`` is followed by its live judge, not by this.
    """
    found: dict[str, ArgumentFile] = {}
    if not prefix_chars:
        return found
    pending = [word for words in commands for word in words]
    while pending:
        word = pending.pop()
        if not word or word[0] not in prefix_chars or word[1:] in found:
            continue
        read = found[word[1:]] = read_argument_file(root, word[1:])
        pending.extend(read.lines)
    return found
