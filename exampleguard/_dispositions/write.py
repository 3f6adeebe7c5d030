"""Writing records: a new disposition or exclusion appended, an existing one rewritten in place."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path

from exampleguard._dispositions.load import refuse_escape
from exampleguard._dispositions.records import (
    DOC_EXCEPTIONS_FILE,
    EXCLUSIONS_FILE,
    Disposition,
    Exclusion,
)
from exampleguard._documents import Document, SourceError
from exampleguard._files import locked, write_atomically

__all__ = [
    "RecordError",
    "append_record",
    "disposition_file",
    "render_disposition",
    "render_exclusion",
    "rewrite_disposition",
    "toml_string",
]


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


_MAX_NAME = 120


class RecordError(ValueError):
    """A record cannot be written; the message says why, naming the record and the file."""


def disposition_file(folder: Path, tool_id: str) -> Path:
    """The file a tool's dispositions are written to: ``dispositions/<tool-id>.toml``.

    The tool id is data, never a path: every character outside ``[A-Za-z0-9._-]`` becomes ``_``
    and leading dots are dropped, so no id can name a file outside the folder.
    """
    name = _SAFE_NAME.sub("_", tool_id).lstrip(".") or "tool"
    if name in (EXCLUSIONS_FILE.removesuffix(".toml"), DOC_EXCEPTIONS_FILE.removesuffix(".toml")):
        name = f"{name}_"
    if len(name) > _MAX_NAME:
        # File names have a length limit (255 bytes on most filesystems); a long id keeps a
        # readable head and a digest that tells ids with the same head apart.
        digest = hashlib.sha256(tool_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[: _MAX_NAME - 17]}-{digest}"
    path = folder / f"{name}.toml"
    if path.parent != folder:
        raise RecordError(f"tool id {tool_id!r} cannot be turned into a file name")
    return path


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (JSON's escapes are TOML's, but DEL must be escaped)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_disposition(disposition: Disposition) -> str:
    """The ``[[disposition]]`` block for one record, as ``dispositions add`` writes it."""
    lines = [
        "[[disposition]]",
        f"tool = {toml_string(disposition.tool)}",
        f"example = {disposition.example}",
        f"reason_code = {toml_string(disposition.reason_code)}",
        f"reason = {toml_string(disposition.reason)}",
    ]
    if disposition.reviewer is not None:
        lines.append(f"reviewer = {toml_string(disposition.reviewer)}")
    if disposition.evidence:
        lines.append(f"evidence = [{', '.join(toml_string(e) for e in disposition.evidence)}]")
    if disposition.command is not None:
        lines.append(f"command = {toml_string(disposition.command)}")
    return "\n".join(lines) + "\n"


def render_exclusion(exclusion: Exclusion) -> str:
    """The ``[[exclusion]]`` block for one record, as ``dispositions exclude`` writes it."""
    lines = [
        "[[exclusion]]",
        f"path = [{', '.join(toml_string(word) for word in exclusion.path)}]",
        f"reason = {toml_string(exclusion.reason)}",
    ]
    if exclusion.reviewer is not None:
        lines.append(f"reviewer = {toml_string(exclusion.reviewer)}")
    return "\n".join(lines) + "\n"


def append_record(path: Path, block: str, *, root: Path, kind: str) -> None:
    """Append ``block`` to ``path`` keeping every existing byte, atomically and under a lock.

    The lock is on the folder: the target itself is replaced by a rename, so a lock on it would
    protect nothing. The old text is read inside the lock, so two concurrent writers both land.
    The result is parsed before it replaces the file: a write that would leave invalid TOML is
    refused.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        refuse_escape(folder, root, str(folder))
    except SourceError as error:
        raise RecordError(error.diagnostic.message) from None
    with locked(folder):
        old = _current_text(path) if path.exists() or path.is_symlink() else ""
        newline = "\r\n" if "\r\n" in old else "\n"
        separator = "" if not old else (newline if old.endswith("\n") else newline * 2)
        new = f"{old}{separator}{block.replace(chr(10), newline)}"
        try:
            records = tomllib.loads(new).get(kind, [])
        except tomllib.TOMLDecodeError as error:
            raise RecordError(
                f"{path.name} would not be valid TOML after the write: {error}"
            ) from None
        if not records:
            raise RecordError(f"{path.name}: the new record could not be read back")
        write_atomically(path, new)


def _current_text(path: Path) -> str:
    """The text of a record file about to be rewritten (under the folder's lock)."""
    if path.is_symlink():
        raise RecordError(f"{path.name} is a symlink; refusing to replace it")
    try:
        # Bytes, not read_text: newline translation would rewrite a CRLF file's old lines.
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path.name} is not UTF-8 text; refusing to rewrite it") from None
    except OSError as error:
        raise RecordError(f"cannot read {path.name}: {error.strerror}") from None


def rewrite_disposition(
    path: Path, index: int, *, root: Path, command: str | None = None, remove: bool = False
) -> None:
    """Edit the ``index``-th disposition of ``path`` in place, keeping every other byte.

    With ``command``, its ``command`` value is replaced (the record re-pointed at the example's
    current text); with ``remove``, its block goes, up to the next record (comment lines right
    above the next record stay with it). Atomic and under the folder's lock, like
    :func:`append_record`, and the result is parsed before it replaces the file: it must hold
    exactly the old records with that one changed, or nothing is written.
    """
    folder = path.parent
    try:
        refuse_escape(path, root, path.name)
    except SourceError as error:
        raise RecordError(error.diagnostic.message) from None
    with locked(folder):
        old = _current_text(path)
        new = _edited(old, index, command=command, remove=remove, name=path.name)
        try:
            before = tomllib.loads(old).get("disposition", [])
            after = tomllib.loads(new).get("disposition", [])
        except tomllib.TOMLDecodeError as error:
            raise RecordError(f"{path.name} would not be valid TOML: {error}") from None
        expected = [dict(record) for record in before]
        if remove:
            del expected[index]
        else:
            expected[index]["command"] = command
        if after != expected:
            raise RecordError(f"{path.name}: the edit could not be made without changing more")
        write_atomically(path, new)


def _edited(text: str, index: int, *, command: str | None, remove: bool, name: str) -> str:
    """``text`` with the ``index``-th disposition removed or its command replaced."""
    document = Document(Path(name), name, text, None, "toml")
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def offset(key: tuple[str | int, ...], *, at_key: bool = False) -> int | None:
        where = document.position(key, at_key=at_key)
        if where is None:
            return None
        return starts[where[0] - 1] + where[1] - 1

    block = offset(("disposition", index))
    if block is None or offset(("disposition", index), at_key=True) != block:
        raise RecordError(f"{name}: record {index} is not where the file says")
    following = offset(("disposition", index + 1))
    end = len(text) if following is None or following <= block else following
    if remove:
        return text[:block] + _kept_comments(text[block:end]) + text[end:]
    if command is None:
        raise RecordError(f"{name}: nothing to change in record {index}")
    value = offset(("disposition", index, "command"))
    if value is None or not block <= value < end:
        # No `command` yet (a record written by hand): it goes after the record's last line.
        body = text[block:end].rstrip("\r\n")
        newline = "\r\n" if "\r\n" in text else "\n"
        line = f"{newline}command = {toml_string(command)}"
        return text[: block + len(body)] + line + text[block + len(body) :]
    return text[:value] + toml_string(command) + text[_literal_end(text, value, name) :]


def _kept_comments(block: str) -> str:
    """What stays of a removed record's text: the comment lines that introduce the next one."""
    lines = block.splitlines(keepends=True)
    kept: list[str] = []
    for line in reversed(lines):
        if not line.lstrip().startswith("#"):
            break
        kept.insert(0, line)
    return "".join(kept)


def _literal_end(text: str, start: int, name: str) -> int:
    """Where the TOML string literal starting at ``start`` ends (just past its closing quote)."""
    for quote in ('"""', "'''", '"', "'"):
        if not text.startswith(quote, start):
            continue
        position = start + len(quote)
        while position < len(text):
            if quote[0] == '"' and text[position] == "\\":
                position += 2
                continue
            if text.startswith(quote, position):
                # A multi-line string may end in up to two more quotes of its own.
                end = position + len(quote)
                while len(quote) == 3 and text.startswith(quote[0], end) and end - position < 5:
                    end += 1
                return end
            if len(quote) == 1 and text[position] == "\n":
                break
            position += 1
        break
    raise RecordError(f"{name}: the record's command is not a string this edit can replace")
