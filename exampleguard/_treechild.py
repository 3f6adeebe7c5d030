"""The one launcher of a live tree's child, under the one isolation decision.

Importing the application runs its code; so does running a program that speaks the tree
protocol (``tree = "exec:PROGRAM"``). The child that imports (:mod:`exampleguard._adapters.
_child`) and the program (:func:`run_exec`) always run through :func:`sandbox.run`, whatever
contains them:

- ``tree_isolation = "auto"`` (the default) is the sandbox's ``auto`` with the dry runs'
  ``require``: the sandbox's host probe picks the backend before any project code runs, and
  where no backend gives what is required, :class:`sandbox.IsolationUnavailable` is raised
  and nothing runs. Nothing the child prints, exits with or writes can choose another
  backend, and no run is ever retried with less.
- ``tree_isolation = "guard"``, only when named: the ``env`` backend (a fresh work dir, a
  scrubbed environment, dead proxies, the limits — not a security boundary) and the child's
  own import guard. Every output says that the import was not sandboxed.

Either way the import has the dry runs' memory and process limits, the tree timeout, an output
cap, a home of its own (``HOME``, ``USER`` and ``LOGNAME`` set) and the configuration's
``tree_env`` placeholders; nothing of the caller's environment but the sandbox's allowlist. Its
questions go in as a file of a request folder, shown read-only; its answers come back as text
frames on its standard output, each checked against the size limit as its header arrives.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exampleguard._adapters._frames import FRAME_LENGTH_BYTES

if TYPE_CHECKING:
    import sandbox

__all__ = [
    "MAX_FRAME_BYTES",
    "ChildRun",
    "Containment",
    "ExecRun",
    "import_path",
    "run_child",
    "run_exec",
]

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""The largest answer a child may send (its tree and its verdicts together: the output cap):
large CLIs have thousands of commands, and the bound keeps a hostile import from growing this
process."""

_HEADER_BYTES = 1 + 2 * FRAME_LENGTH_BYTES
_SANDBOX_USER = "exampleguard"
"""``USER`` and ``LOGNAME`` of the import: its uid has no entry in the password database, and
``getpass.getuser()`` at import time is common."""


@dataclass(frozen=True)
class Containment:
    """How a live tree's child is contained: the inputs of the one isolation decision.

    ``guard``: ``tree_isolation = "guard"`` was named. Otherwise the sandbox's ``auto`` decides,
    with the dry runs' ``require`` and limits (a weaker dry-run backend named in ``[dryrun]
    isolation`` is the dry runs' choice alone). ``env`` are the ``tree_env`` placeholders.
    """

    guard: bool = False
    require: tuple[str, ...] = ()
    memory_mb: int | None = None
    max_processes: int | None = None
    env: tuple[tuple[str, str], ...] = ()

    def key(self) -> dict[str, Any]:
        """What of it a cached tree depends on (part of the cache's key)."""
        return {
            "guard": self.guard,
            "require": sorted(self.require),
            "env": sorted(self.env),
        }


@dataclass
class ChildRun:
    """How a child's run ended, and the frames it sent."""

    status: str
    """A :class:`sandbox.Status` value."""
    exit_code: int | None
    stderr: str
    detail: str | None
    backend: str
    frames: dict[bytes, bytes] = field(default_factory=dict)
    too_large: bool = False
    """A frame announced more than :data:`MAX_FRAME_BYTES`: nothing after its header was kept."""
    broken: bool = False
    """The output stopped being frames: nothing after that was read."""


class _TextFrames:
    """The frames a child sends as text: a kind, 16 hexadecimal digits of length, ASCII JSON."""

    def __init__(self) -> None:
        self._data = bytearray()
        self.frames: dict[bytes, bytes] = {}
        self.too_large = False
        self.broken = False

    def feed(self, chunk: bytes) -> None:
        """Add a piece of the child's output; split off the frames it completes."""
        if self.too_large or self.broken:
            return
        self._data += chunk
        while len(self._data) >= _HEADER_BYTES:
            try:
                length = int(self._data[1:_HEADER_BYTES].decode("ascii"), 16)
            except ValueError:
                self.broken = True
            else:
                # Checked as the header arrives: an announced size is never waited for.
                self.too_large = length > MAX_FRAME_BYTES
            if self.broken or self.too_large:
                self._data.clear()
                return
            if len(self._data) < _HEADER_BYTES + length:
                return
            kind = bytes(self._data[:1])
            self.frames.setdefault(kind, bytes(self._data[_HEADER_BYTES : _HEADER_BYTES + length]))
            del self._data[: _HEADER_BYTES + length]


def run_child(
    framework: str,
    module: str,
    attribute: str,
    *,
    root: Path,
    program: str | None,
    request: Mapping[str, Any],
    timeout: float,
    containment: Containment,
) -> ChildRun:
    """Import ``module`` and answer ``request`` in a child contained as ``containment`` says.

    Raises :class:`sandbox.IsolationUnavailable` when the isolation decided for this host
    cannot be had (nothing is run), ``OSError`` when the request folder cannot be made.
    """
    import sandbox  # noqa: PLC0415 - a snapshot or a cached tree needs none of it

    with _request_folder() as folder:
        request_file = _request_file(folder / "request.json", json.dumps(dict(request)))
        named = (framework, module, attribute, program or "")
        policy = _policy(named, root, request_file, timeout, containment)
        frames = _TextFrames()
        outcome = sandbox.run(policy, on_stdout=frames.feed)
    return ChildRun(
        outcome.status.value,
        outcome.exit_code,
        outcome.stderr,
        outcome.detail,
        outcome.backend,
        frames.frames,
        frames.too_large or outcome.stdout_truncated,
        frames.broken,
    )


def _policy(
    named: tuple[str, str, str, str],
    root: Path,
    request_file: Path,
    timeout: float,
    containment: Containment,
) -> sandbox.Policy:
    framework, module, attribute, program = named
    entries = _pythonpath_entries()
    package_root = str(Path(__file__).resolve().parent.parent)
    # PYTHONPATH does not pass into a sandbox (it steers the interpreter): the child is told
    # where to import from instead, the project's directory first and exampleguard's own
    # location last, so that it never shadows the user's packages.
    code = (
        f"import sys; sys.path[:0] = {[str(root), *entries]!r}; "
        f"sys.path.append({package_root!r}); from exampleguard._adapters._child import main; main()"
    )
    mode = "guard" if containment.guard else "sandbox"
    argv = (
        sys.executable,
        "-c",
        code,
        framework,
        module,
        attribute,
        program,
        f"@{request_file}",
        mode,
        str(root),
    )
    # The interpreter and everything it imports from, and the request folder: the caller's
    # own settings and files, never paths a file's content named.
    readable = (*import_path(entries, package_root), request_file.parent)
    return _contained(argv, root, readable, timeout, containment)


@dataclass
class ExecRun:
    """How one run of a protocol-speaking program ended, and what it wrote on stdout."""

    status: str
    """A :class:`sandbox.Status` value."""
    exit_code: int | None
    stderr: str
    detail: str | None
    backend: str
    stdout: bytes = b""
    too_large: bool = False
    """It wrote more than :data:`MAX_FRAME_BYTES`: nothing of it was kept."""


class _Capped:
    """A program's standard output, kept up to :data:`MAX_FRAME_BYTES` and no further."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.too_large = False

    def feed(self, chunk: bytes) -> None:
        """Keep ``chunk``, unless the output has grown past the limit (then keep nothing)."""
        if self.too_large:
            return
        if len(self.data) + len(chunk) > MAX_FRAME_BYTES:
            self.too_large = True
            self.data = bytearray()
            return
        self.data += chunk


PROTOCOL_WORD = "__exampleguard"
"""The word after which a protocol-speaking program reads its request (``tree``, ``judge``)."""

# Runs the program with the request file as its standard input (the sandbox gives a run none):
# the launcher is the interpreter exampleguard runs on, shown read-only like a Python tree's.
_STDIN_LAUNCHER = (
    "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.dup2(fd, 0); os.close(fd); "
    "os.execv(sys.argv[2], sys.argv[2:])"
)


def run_exec(
    command: Sequence[str],
    request: str,
    *,
    root: Path,
    lines: Sequence[str] | None,
    timeout: float,
    containment: Containment,
) -> ExecRun:
    """Run ``command`` with ``__exampleguard REQUEST`` contained as ``containment`` says.

    ``lines`` (for ``judge``) are written to a request file that the program reads as its
    standard input. The same decision, limits, output cap and environment as a Python tree's
    import (see the module docstring); the program gets no import guard, a binary has no
    interpreter to hook: ``tree_isolation = "guard"`` leaves it the ``env`` backend alone.
    Raises :class:`sandbox.IsolationUnavailable` when the isolation decided for this host
    cannot be had (nothing is run), ``OSError`` when the request folder cannot be made.
    """
    import sandbox  # noqa: PLC0415 - a snapshot or a cached tree needs none of it

    program, *args = command
    argv: tuple[str, ...] = (program, *args, PROTOCOL_WORD, request)
    with _request_folder() as folder:
        readable: list[Path] = [folder]
        resolved = Path(program).resolve()
        if not resolved.is_relative_to(root.resolve()):
            # A program outside the project, named by the caller's own setting.
            readable.append(resolved)
        if lines is not None:
            request_file = _request_file(
                folder / "request.jsonl", "".join(f"{line}\n" for line in lines)
            )
            argv = (sys.executable, "-I", "-S", "-c", _STDIN_LAUNCHER, str(request_file), *argv)
            readable.extend(import_path())
        policy = _contained(argv, root, tuple(readable), timeout, containment)
        output = _Capped()
        outcome = sandbox.run(policy, on_stdout=output.feed)
    return ExecRun(
        outcome.status.value,
        outcome.exit_code,
        outcome.stderr,
        outcome.detail,
        outcome.backend,
        bytes(output.data),
        output.too_large or outcome.stdout_truncated,
    )


@contextlib.contextmanager
def _request_folder() -> Iterator[Path]:
    """A folder for a child's request, readable by the sandbox's uid, removed afterwards.

    Read by the sandbox's own uid (a root caller's runs read only what every user may); what
    it holds is the catalog's examples, which the project shows anyway.
    """
    folder = Path(tempfile.mkdtemp(prefix="exampleguard-request-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _request_file(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o644)
    return path


def _contained(
    argv: tuple[str, ...],
    root: Path,
    trusted_readable: tuple[Path, ...],
    timeout: float,
    containment: Containment,
) -> sandbox.Policy:
    """The policy of a tree's child: the one isolation decision, its limits and environment."""
    import sandbox  # noqa: PLC0415 - see run_child

    limits = {"memory_mb": containment.memory_mb, "max_processes": containment.max_processes}
    return sandbox.Policy(
        argv=argv,
        project_dir=root,
        trusted_readable=trusted_readable,
        isolation=sandbox.Isolation.ENV if containment.guard else sandbox.Isolation.AUTO,
        require=frozenset()
        if containment.guard
        else frozenset(sandbox.Guarantee(name) for name in containment.require),
        limits=sandbox.Limits(
            timeout_s=timeout,
            output_bytes=MAX_FRAME_BYTES,
            **{key: value for key, value in limits.items() if value is not None},
        ),
        set_env=(("USER", _SANDBOX_USER), ("LOGNAME", _SANDBOX_USER), *containment.env),
    )


def _pythonpath_entries() -> list[str]:
    """``PYTHONPATH``'s entries, a relative one resolved against the working directory."""
    entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [str(Path(entry).resolve()) for entry in entries]


def import_path(entries: Iterable[str] = (), *extra: str) -> tuple[Path, ...]:
    """Every directory the interpreter imports from, for the sandbox to show read-only.

    Its installations, ``entries`` (``PYTHONPATH``), ``sys.path`` as site processing left it
    (``.pth`` additions included), and the directories that editable installs' import finders
    map packages to (a sibling package of a monorepo). A home directory itself, or anything
    above one, is never among them: that would show the whole home.
    """
    found = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        *entries,
        *extra,
        *(entry for entry in sys.path if entry and Path(entry).is_absolute()),
    }
    for entry in list(found):
        found.update(_editable_targets(entry))
    homes = {Path(home).resolve() for home in _homes()}
    kept = []
    for path in sorted(found):
        resolved = Path(path)
        if not resolved.exists() or resolved == Path("/"):
            continue
        if any(resolved == home or resolved in home.parents for home in homes):
            continue
        kept.append(resolved)
    return tuple(kept)


def _homes() -> list[str]:
    homes = [os.environ.get("HOME", ""), str(Path("~").expanduser())]
    return [home for home in homes if home and home != "/"]


def _editable_targets(directory: str) -> list[str]:
    """Where the editable-install finders in ``directory`` (setuptools' and others') point.

    They keep a ``MAPPING`` of top-level names to source directories, read here as data.
    """
    try:
        finders = [
            path
            for path in Path(directory).iterdir()
            if path.name.startswith("__editable__") and path.name.endswith("finder.py")
        ]
    except OSError:
        return []
    targets: list[str] = []
    for finder in finders:
        try:
            tree = ast.parse(finder.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else None
            if isinstance(node, ast.AnnAssign):
                target = node.target
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and target.id == "MAPPING" and value is not None:
                try:
                    mapping = ast.literal_eval(value)
                except ValueError:
                    continue
                if isinstance(mapping, dict):
                    targets += [path for path in mapping.values() if isinstance(path, str)]
    return targets
