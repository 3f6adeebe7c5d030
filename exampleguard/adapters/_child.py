"""Entry point of the child process that imports an application and snapshots its tree.

Run as ``python -c "...main()" FRAMEWORK MODULE ATTR FD PROGRAM``. The result is written to file
descriptor ``FD`` as one frame: a kind byte (``T`` for a tree, ``E`` for an error), an 8-byte
big-endian length, then that many bytes of JSON: the snapshot, or an ``{"error": ...}`` record.
The application's own output is left alone. Anything the application does — raising, exiting,
printing — becomes an error record here, in the child, and never reaches exampleguard's process.

The child ends with ``os._exit`` as soon as the frame is written: threads, ``atexit`` hooks and
finalizers the application registered while imported must not hold up (or write over) a tree
that is already complete.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import traceback
from typing import Any, NoReturn

from exampleguard.adapters.argparser import extract_argparse, resolve_parser
from exampleguard.adapters.clickfamily import as_click_command, extract_click

FRAME_LENGTH_BYTES = 8


def main(argv: list[str] | None = None) -> NoReturn:
    """Import the application named on the command line, write its snapshot frame, and exit."""
    framework, module, attribute, fd_text, program = (argv or sys.argv[1:])[:5]
    fd = int(fd_text)
    # Programs the application starts with exec must not inherit the result pipe.
    os.set_inheritable(fd, False)
    try:
        snapshot = _snapshot(framework, module, attribute, program or None)
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
    _finish(fd, b"T", snapshot)


class _AdapterError(Exception):
    """The named object exists but is not something the adapter can read."""


def _snapshot(framework: str, module: str, attribute: str, program: str | None) -> dict[str, Any]:
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
    if framework == "argparse":
        try:
            parser = resolve_parser(target)
        except TypeError as error:
            raise _AdapterError(str(error)) from None
        return extract_argparse(parser, program)
    try:
        command = as_click_command(target)
    except TypeError as error:
        raise _AdapterError(str(error)) from None
    return extract_click(command, program or _default_program(module))


def _default_program(module: str) -> str:
    return module.split(".", maxsplit=1)[0].replace("_", "-")


def _fail(fd: int, message: str) -> NoReturn:
    _finish(fd, b"E", {"error": message})


def _finish(fd: int, kind: bytes, record: dict[str, Any]) -> NoReturn:
    try:
        payload = json.dumps(record, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    except (TypeError, ValueError, RecursionError) as error:
        kind = b"E"
        payload = json.dumps({"error": f"produced a tree that is not JSON: {error}"}).encode()
    frame = kind + len(payload).to_bytes(FRAME_LENGTH_BYTES, "big") + payload
    view = memoryview(frame)
    with contextlib.suppress(OSError):
        while view:
            view = view[os.write(fd, view) :]
    # The application's last words on stderr are what the parent reports if anything went wrong.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0 if kind == b"T" else 1)
