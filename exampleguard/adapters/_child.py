"""Entry point of the child process that imports an application and snapshots its tree.

Run as ``python -c "...main()" FRAMEWORK MODULE ATTR FD PROGRAM [REQUEST [SCRATCH [ROOT]]]``.
The result is written to file descriptor ``FD`` as frames: a kind byte (``T`` for a tree, ``P``
for a part of the verdicts, ``V`` for the last of them, ``E`` for an error, ``I`` for inputs),
an 8-byte big-endian length, then that many bytes of JSON: the snapshot, the verdicts, or an
``{"error": ...}`` record. The application's
own output is left alone. ``FD`` ``stdout`` (inside a sandbox, where no descriptor passes in)
sends the frames as text on standard output instead — the length as 16 hexadecimal digits,
ASCII JSON — and sends the application's own output to /dev/null.
Anything the application does — raising, exiting, printing — becomes an error record here, in
the child, and never reaches exampleguard's process.

``REQUEST`` (a descriptor, or ``@PATH`` for a file), when given, is read to its end before
the application is imported: a JSON
object with ``argvs`` (each example's words after the program, to be parsed by the framework's
own parser, see :mod:`~exampleguard.adapters.verdict`) and ``paths`` (the command paths and
aliases a catalog declares, probed through the groups' own routing), and ``help_examples``
(true: the words of each help-text example of the tree are judged too). With ``rest`` (the
path of a file that does not exist yet), the application is imported first; then a ``W``
frame says the child waits, and the rest of the request (the fields above, and ``program``)
is read from that file once it appears (:mod:`exampleguard.treechild`). After the tree come
``P`` frames, each with the ``verdicts`` of the next argvs, in order, as they are judged, and
then a ``V`` frame with any verdicts left and, under ``help``, each help example's words with
their verdict; with ``inputs`` true, an ``I`` frame listing
the files and directories the import read comes last (:mod:`._inputs`). ``SCRATCH``, when
given, is the only directory the application may write to while it is imported and judged
(:mod:`._guard`). ``ROOT``, when given, is the directory the application is imported from
(the project's), entered once the guard is in place.

The child ends with ``os._exit`` as soon as the frame is written: threads, ``atexit`` hooks and
finalizers the application registered while imported must not hold up (or write over) a tree
that is already complete.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import os
import pathlib
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from exampleguard.adapters._frames import FRAME_LENGTH_BYTES, TEXT_FRAMES
from exampleguard.adapters._guard import install_guard
from exampleguard.adapters._helptext import help_argvs, help_tokenizer
from exampleguard.adapters._inputs import InputRecorder
from exampleguard.adapters.argparser import extract_argparse, resolve_parser
from exampleguard.adapters.clickfamily import (
    as_click_command,
    extract_click,
    is_click_command,
    is_typer_app,
)
from exampleguard.adapters.judge_argparse import ArgparseJudge
from exampleguard.adapters.judge_click import ClickJudge
from exampleguard.adapters.verdict import ParseVerdict

__all__ = ["FRAME_LENGTH_BYTES", "TEXT_FRAMES", "main"]

_TEXT_FRAMES = False


def main(argv: list[str] | None = None) -> NoReturn:
    """Import the application named on the command line, write its frames, and exit."""
    global _TEXT_FRAMES  # noqa: PLW0603 - one setting for the whole (short-lived) process
    arguments = argv or sys.argv[1:]
    framework, module, attribute, fd_text, program = arguments[:5]
    if fd_text == TEXT_FRAMES:
        # Inside a sandbox the frames go out on standard output, as text; the application's
        # own output goes to /dev/null so that it cannot be taken for a frame.
        fd = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
        _TEXT_FRAMES = True
    else:
        fd = int(fd_text)
    # Programs the application starts with exec must not inherit the result pipe.
    os.set_inheritable(fd, False)
    request = _read_request(arguments[5]) if len(arguments) > 5 else {}
    rest = request.get("rest")
    rest = rest if isinstance(rest, str) and rest else None
    # The request folder is exampleguard's, no input of the application's.
    recorder = InputRecorder([*arguments[6:7], *([str(pathlib.Path(rest).parent)] if rest else [])])
    if request.get("inputs"):
        # What the import reads, for the tree cache to see when the tree is stale.
        recorder.install()
    if len(arguments) > 6 and arguments[6]:
        # From here on the application's code runs: it may not change anything outside the
        # scratch directory, start programs or use the network (see _guard for the limits).
        install_guard([arguments[6]])
    if len(arguments) > 7 and arguments[7]:
        # Imported from the project's directory, as running the application from there would.
        os.chdir(arguments[7])
    try:
        imported = _import(framework, module, attribute)
        if rest is not None:
            # Started before its questions were known: what answering them takes that does
            # not depend on them is loaded while the parent still reads the catalog; then it
            # says it waits, and reads them.
            help_tokenizer()
            _write(fd, b"W", {})
            request = {**request, **_wait_for_rest(rest)}
            program = request.get("program") or program
        argvs = _decoded(request.get("argvs", ()))
        paths = [list(words) for words in request.get("paths", ())]
        snapshot, judge = _snapshot(imported, program or None, paths)
    except SystemExit as exit_:
        _fail(fd, f"called sys.exit({exit_.code!r}) while importing")
    except KeyboardInterrupt:
        _fail(fd, "was interrupted while importing")
    except _AdapterError as error:
        _fail(fd, str(error))
    except BaseException as error:
        where = traceback.extract_tb(error.__traceback__)[-1:] if error.__traceback__ else []
        at = f" (at {where[0].filename}:{where[0].lineno})" if where else ""
        _fail(fd, f"raised {type(error).__name__}: {error}{at}")
    _write(fd, b"T", snapshot)
    # The help text's examples are known only now: asked for, they are judged here too.
    helps = _decoded(help_argvs(snapshot)) if request.get("help_examples") else []
    if argvs or request.get("help_examples"):
        # The snapshot lives to the end: the collections the judging makes need not walk it.
        gc.freeze()
        try:
            # One batch: the tree is neutralised once for all of them. The asked argvs'
            # verdicts go out as they are made, a run at a time (``P`` frames), so the parent
            # checks the examples against the tree while the rest are still being judged.
            # Once sent, an asked argv's verdict is let go of: only the help examples' are kept.
            made = 0
            helped: list[ParseVerdict] = []
            for run in judge([*argvs, *helps], _VERDICTS_PER_FRAME):
                asked = run[: max(0, len(argvs) - made)]
                made += len(run)
                helped += run[len(asked) :]
                if asked:
                    _write(fd, b"P", {"verdicts": [verdict.to_json() for verdict in asked]})
            judged = [
                {"argv": words, "verdict": verdict.to_json()}
                for words, verdict in zip(helps, helped, strict=True)
            ]
        except BaseException as error:
            _fail(fd, f"could not be parsed with its own parser: {type(error).__name__}: {error}")
        _write(fd, b"V", {"verdicts": [], "help": judged})
    if request.get("inputs"):
        _write(fd, b"I", recorder.report())
    _exit(True)


def _decoded(argvs: Any) -> list[list[str]]:
    """Each word as the program's own sys.argv would hold it: decoded afresh from bytes.

    argparse tells a value from its default by identity, and which strings CPython shares (one
    character long, from 3.13 on) differs between JSON's decoder and the command line's.
    """
    return [[os.fsdecode(os.fsencode(word)) for word in words] for words in argvs]


def _read_request(source: str) -> dict[str, Any]:
    # Read before the application is imported, and closed, so its code never sees it: a
    # descriptor, or `@PATH` for a file (inside a sandbox, a file of the work dir).
    if source.startswith("@"):
        text = pathlib.Path(source[1:]).read_bytes()
    else:
        with os.fdopen(int(source), "rb") as stream:
            text = stream.read()
    data = json.loads(text or b"{}")
    return data if isinstance(data, dict) else {}


class _AdapterError(Exception):
    """The named object exists but is not something the adapter can read."""


Judge = Callable[[list[list[str]], int], Iterator[list[ParseVerdict]]]
"""A live tree's own parser: the verdicts on argvs, handed out a run of so many at a time."""

_VERDICTS_PER_FRAME = 250
"""Verdicts per ``P`` frame: small enough that the parent soon has the first, large enough
that framing costs nothing beside judging."""


def _wait_for_rest(path: str) -> dict[str, Any]:
    """The rest of the request, once it is there (written whole, then renamed into place).

    Waited for as long as it takes: the sandbox's time limit ends a wait that never ends.
    """
    while True:
        try:
            text = pathlib.Path(path).read_bytes()
        except FileNotFoundError:
            time.sleep(_REST_POLL_SECONDS)
            continue
        data = json.loads(text or b"{}")
        return data if isinstance(data, dict) else {}


_REST_POLL_SECONDS = 0.002


@dataclass(frozen=True)
class _Imported:
    """The application's object, resolved to what its framework parses with."""

    framework: str
    module: str
    target: Any
    """The Click command (a Typer app made one), or the argparse parser."""
    sources: tuple[Any, ...] = ()
    """Where an argparse parser's help texts may be found (the factory, the module)."""


def _import(framework: str, module: str, attribute: str) -> _Imported:
    """Import ``module``, and resolve ``attribute`` to what ``framework`` parses with."""
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and (module == error.name or module.startswith(f"{error.name}.")):
            raise _AdapterError(f"module {module!r} was not found") from None
        raise
    target: Any = imported
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise _AdapterError(f"module {module!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    # What the import built (the application's whole tree) lives as long as this process:
    # frozen, it is left out of every later collection, which would otherwise walk it again
    # and again as the snapshot and the verdicts grow (for a large tree, about as long as
    # the extraction itself).
    gc.freeze()
    spelled = _right_spelling(framework, target)
    if spelled is not None:
        # Checked before anything is called: a Click command "called" as a parser factory
        # would run the application.
        raise _AdapterError(
            f"{module}:{attribute} is a {spelled[1]}, not what {framework}: names; "
            f"use tree = '{spelled[0]}:{module}:{attribute}'"
        )
    if framework == "argparse":
        try:
            parser = resolve_parser(target)
        except TypeError as error:
            raise _AdapterError(str(error)) from None
        sources = (target, imported) if target is not parser else (imported,)
        return _Imported(framework, module, parser, sources)
    try:
        return _Imported(framework, module, as_click_command(target))
    except TypeError as error:
        raise _AdapterError(str(error)) from None


def _snapshot(
    imported: _Imported, program: str | None, paths: list[list[str]]
) -> tuple[dict[str, Any], Judge]:
    """The snapshot of an imported tree, and its own parser as the judge."""
    if imported.framework == "argparse":
        with _collector_paused():
            snapshot = extract_argparse(imported.target, program, imported.sources)
        return snapshot, ArgparseJudge(imported.target).judge_runs
    name = program or _default_program(imported.module)
    with _collector_paused():
        snapshot = extract_click(imported.target, name, paths)
    return snapshot, ClickJudge(imported.target, name).judge_runs


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while the snapshot is built (plain records, no cycles)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _right_spelling(framework: str, target: Any) -> tuple[str, str] | None:
    """The framework ``target`` belongs to, and what it is, when ``framework`` is not it."""
    if is_typer_app(target):
        found = ("typer", "Typer app")
    elif is_click_command(target):
        found = ("click", "Click command")
    elif isinstance(target, argparse.ArgumentParser):
        found = ("argparse", "argparse.ArgumentParser")
    else:
        return None
    if found[0] == framework or (framework in ("click", "typer") and found[0] != "argparse"):
        return None
    return found


def _default_program(module: str) -> str:
    return module.split(".", maxsplit=1)[0].replace("_", "-")


def _fail(fd: int, message: str) -> NoReturn:
    _write(fd, b"E", {"error": message})
    _exit(False)


def _write(fd: int, kind: bytes, record: dict[str, Any]) -> None:
    try:
        # As text frames, ASCII throughout: the JSON with its escapes.
        text = json.dumps(record, ensure_ascii=_TEXT_FRAMES)
        payload = text.encode("utf-8", errors="surrogatepass")
    except (TypeError, ValueError, RecursionError) as error:
        kind = b"E"
        payload = json.dumps({"error": f"produced a tree that is not JSON: {error}"}).encode()
    if _TEXT_FRAMES:
        frame = kind + b"%0*x" % (2 * FRAME_LENGTH_BYTES, len(payload)) + payload
    else:
        frame = kind + len(payload).to_bytes(FRAME_LENGTH_BYTES, "big") + payload
    view = memoryview(frame)
    with contextlib.suppress(OSError):
        while view:
            view = view[os.write(fd, view) :]


def _exit(success: bool) -> NoReturn:
    # The application's last words on stderr are what the parent reports if anything went wrong.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0 if success else 1)
