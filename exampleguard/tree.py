"""The executable command tree (``exampleguard.tree/v1``) and where it comes from.

A tree is either a snapshot file or the live application, named by ``click:MODULE:ATTR``,
``typer:MODULE:ATTR`` or ``argparse:MODULE:ATTR``. Importing an application runs its code, which
may print, hang, change global state or exit; so it is imported in a child process with a
timeout, and only the snapshot format crosses the process boundary.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from pydantic import Field

from exampleguard.diagnostics import Diagnostic, Location, Severity
from exampleguard.model import (
    NO_CONSTRAINTS,
    Constraints,
    Dialect,
    NonEmpty,
    Parameter,
    StrictModel,
)
from exampleguard.sources import (
    Document,
    SourceError,
    check_format,
    load_document,
    parse_document,
    validate_model,
)

__all__ = [
    "TREE_FORMAT",
    "ParserSettings",
    "Tree",
    "TreeCommand",
    "TreeSpec",
    "load_tree",
    "parse_tree_spec",
]

TREE_FORMAT = "exampleguard.tree/v1"
_FRAMEWORKS = ("click", "typer", "argparse")


class ParserSettings(StrictModel):
    """How one command's parser treats words, where it departs from its dialect's defaults.

    Click reads these from the context settings (``allow_interspersed_args`` is false for every
    group); argparse from the parser (``allow_abbrev``, ``prefix_chars``).
    """

    allow_interspersed_args: bool = True
    ignore_unknown_options: bool = False
    allow_extra_args: bool = False
    no_args_is_help: bool = False
    allow_abbrev: bool = True
    prefix_chars: NonEmpty = "-"


class TreeCommand(StrictModel):
    """One command or group of the executable tree."""

    path: list[NonEmpty]
    aliases: list[list[NonEmpty]] = Field(default_factory=list)
    runnable: bool
    hidden: bool = False
    parameters: list[Parameter] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=lambda: NO_CONSTRAINTS)
    description: str | None = None
    default_command: NonEmpty | None = None
    default_if_no_args: bool = False
    settings: ParserSettings = Field(default_factory=ParserSettings)


class Tree(StrictModel):
    """A program's executable command tree: every command, its parameters and parsing rules.

    ``value_syntax`` says whose rules convert numbers: ``python`` (``int()``/``float()``, as Click
    and argparse do) or ``pydantic`` (Typer 0.26 and later, which validates through pydantic).
    """

    format: Literal["exampleguard.tree/v1"]
    program: NonEmpty
    dialect: Dialect
    value_syntax: Literal["python", "pydantic"] = "python"
    commands: list[TreeCommand]

    def command(self, path: list[str] | tuple[str, ...]) -> TreeCommand | None:
        """The command at exactly ``path``, if the tree has one."""
        wanted = list(path)
        return next((c for c in self.commands if c.path == wanted), None)


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """A parsed ``tree`` setting: a framework object to import, or a snapshot path."""

    framework: Literal["click", "typer", "argparse", "snapshot"]
    module: str = ""
    attribute: str = ""
    path: Path | None = None

    def __str__(self) -> str:
        if self.framework == "snapshot":
            return str(self.path)
        return f"{self.framework}:{self.module}:{self.attribute}"


def parse_tree_spec(value: str, base: Path) -> TreeSpec:
    """Parse a ``tree`` setting; relative snapshot paths resolve against ``base``.

    Raises ``ValueError`` with a message that says what the accepted forms are.
    """
    framework, sep, rest = value.partition(":")
    if sep and framework in _FRAMEWORKS:
        module, sep, attribute = rest.partition(":")
        if not (sep and module and attribute):
            raise ValueError(
                f"tree {value!r} must be {framework}:MODULE:ATTR (for example "
                f"'{framework}:notes.cli:main')"
            )
        return TreeSpec(framework, module, attribute)  # type: ignore[arg-type]
    if value.lower().endswith(".json"):
        return TreeSpec("snapshot", path=(base / value))
    raise ValueError(
        f"tree {value!r} is neither click:MODULE:ATTR, typer:MODULE:ATTR, argparse:MODULE:ATTR "
        "nor a path to a tree snapshot .json"
    )


def load_tree(
    spec: TreeSpec, *, root: Path, display: str, timeout: float = 60.0, program: str | None = None
) -> tuple[Tree, Document]:
    """Load the tree ``spec`` names: read a snapshot, or import the application in a child.

    ``root`` is the directory the application is imported from (the configuration's directory).
    Raises ``SourceError`` (code ``tree-unavailable`` or a file code) when it cannot be loaded.
    """
    if spec.framework == "snapshot":
        assert spec.path is not None
        document = load_document(spec.path, display)
        check_format(document, TREE_FORMAT)
        return validate_model(Tree, document), document
    text = _extract_in_child(spec, root=root, timeout=timeout, program=program)
    document = parse_document(text, Path(f"<{spec}>"), str(spec), "json")
    try:
        check_format(document, TREE_FORMAT)
        return validate_model(Tree, document), document
    except SourceError as error:
        raise SourceError(_unavailable(spec, f"produced an invalid snapshot: {error}")) from None


def _extract_in_child(spec: TreeSpec, *, root: Path, timeout: float, program: str | None) -> str:
    # The snapshot travels over a dedicated pipe, so whatever the application prints on stdout or
    # stderr cannot corrupt it.
    read_end, write_end = os.pipe()
    command = [
        sys.executable,
        "-c",
        "import sys; from exampleguard.adapters._child import main; sys.exit(main())",
        spec.framework,
        spec.module,
        spec.attribute,
        str(write_end),
        program or "",
    ]
    env = dict(os.environ)
    # `-c` puts the working directory (the project root) first on sys.path, as running the
    # application from there would; exampleguard's own location goes last so that a checkout
    # used without installing still finds the adapters, and never shadows the user's packages.
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [*filter(None, [os.environ.get("PYTHONPATH")]), package_root]
    )
    env["EXAMPLEGUARD_CHILD"] = "1"
    try:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_end,),
            start_new_session=True,
        )
    finally:
        os.close(write_end)
    chunks: list[bytes] = []
    with os.fdopen(read_end, "rb") as reader:
        try:
            _, err = _communicate(process, reader, chunks, timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise SourceError(
                _unavailable(spec, f"did not finish importing within {timeout:g} seconds")
            ) from None
    payload = b"".join(chunks).decode("utf-8", errors="replace")
    if process.returncode == 0 and payload:
        return payload
    reason = _child_failure(payload, err, process.returncode)
    raise SourceError(_unavailable(spec, reason))


def _communicate(
    process: subprocess.Popen[bytes], reader: BinaryIO, chunks: list[bytes], timeout: float
) -> tuple[bytes, bytes]:
    # The snapshot pipe is drained on its own thread so a large tree never blocks the child
    # while it is also writing to stdout or stderr.
    def drain() -> None:
        while block := reader.read(65536):
            chunks.append(block)

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    out, err = process.communicate(timeout=timeout)
    drainer.join(timeout=5)
    return out, err


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _child_failure(payload: str, err: bytes, returncode: int | None) -> str:
    try:
        report = json.loads(payload) if payload else None
    except json.JSONDecodeError:
        report = None
    if isinstance(report, dict) and isinstance(message := report.get("error"), str):
        return message
    tail = err.decode("utf-8", errors="replace").strip().splitlines()[-3:]
    detail = f": {' / '.join(tail)}" if tail else ""
    if returncode is not None and returncode < 0:
        return f"was killed by signal {-returncode} while importing{detail}"
    return f"exited with status {returncode} while importing, before producing a tree{detail}"


def _unavailable(spec: TreeSpec, reason: str) -> Diagnostic:
    return Diagnostic(
        code="tree-unavailable",
        severity=Severity.ERROR,
        message=f"tree {spec}: {reason}",
        hint="The tree is imported in a child process from the configuration's directory; "
        "check that `python -c 'import MODULE'` works there.",
        location=Location(str(spec)),
    )
