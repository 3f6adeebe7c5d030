"""The sandboxed child that imports a live tree, started as soon as the tree is named.

Importing the application is most of what a first run against a live tree waits for, and it
needs nothing but the ``tree`` setting; the questions the child answers (every example's
words, the declared command paths, the program name) are known only once the catalog and the
documents are read, which takes the models. So ``validate`` starts the child from the raw
setting (:func:`start_ahead`) before it imports the models: the child imports the application
on one core while this process reads the catalog on the other, then waits for its questions.

The questions travel in two parts, both files of a request folder that the sandbox shows
read-only at its own path: ``request.json`` before the start (whether to note the inputs, and
where the rest will be), then ``rest.json``, renamed into place once written, which the child
reads as soon as it appears (:meth:`ContainedChild.ask`). A child started ahead is used only
when the checked configuration names the same tree, root, time limit and caching
(:func:`take_ahead`); any other is stopped unused, as is one nobody claims (:func:`close_ahead`).

The time limit is the child's own time: from its start, less the time it waited for its
questions (it says when it begins to wait, with a ``W`` frame). A child started ahead gets
twice the limit from the sandbox, and is used only when its questions are ready within the
limit; one whose questions come later is stopped, and a child started afresh answers them.
Nothing of the child's verdict depends on when it was started.

Nothing here imports the models (pydantic) or the sandbox before a child is started.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exampleguard.adapters._frames import FRAME_LENGTH_BYTES, TEXT_FRAMES
from exampleguard.fingerprint import note_scratch
from exampleguard.locate import (
    DEFAULT_TREE_TIMEOUT,
    MAX_SECONDS,
    config_source,
    settings_in_tool_table,
)

if TYPE_CHECKING:
    import sandbox

__all__ = [
    "PART",
    "WAITING",
    "ChildRun",
    "ContainedChild",
    "Listener",
    "close_ahead",
    "keep_frame",
    "start_ahead",
    "take_ahead",
]

Listener = Callable[[bytes, bytes], None]
"""Told of each complete frame a child sends (its kind and payload), as it arrives."""

PART, WAITING = b"P", b"W"
_REQUEST_FILE, _REST_FILE = "request.json", "rest.json"
_FRAMEWORKS = ("click", "typer", "argparse")
_MAX_CONFIG_BYTES = 1 << 20
"""A larger configuration file is left to the checked load, which bounds what it reads."""


def keep_frame(
    frames: dict[bytes, bytes],
    parts: list[bytes],
    kind: bytes,
    payload: bytes,
    listener: Listener | None,
) -> None:
    """Keep one complete frame (the parts of the verdicts in order) and tell the listener."""
    if kind == PART:
        parts.append(payload)
    else:
        frames[kind] = payload
    if listener is not None:
        listener(kind, payload)


class _TextFrames:
    """The frames a child sends as text (kind, 16 hexadecimal digits of length, JSON).

    Read as the output arrives; each complete frame is told to the listener, which may be set
    after the child started (before it is asked anything, only a ``W`` frame comes).
    """

    def __init__(self) -> None:
        self.listener: Listener | None = None
        self._data = bytearray()
        self._broken = False
        self.frames: dict[bytes, bytes] = {}
        self.parts: list[bytes] = []
        self.waiting_since: float | None = None
        """When the child said it waits for its questions (``time.monotonic``)."""

    def feed(self, chunk: bytes) -> None:
        """Add a piece of the child's output; split off the frames it completes."""
        if self._broken:
            return
        self._data += chunk
        width = 2 * FRAME_LENGTH_BYTES
        while len(self._data) >= 1 + width:
            try:
                length = int(self._data[1 : 1 + width], 16)
            except ValueError:
                # Not a frame: nothing after it is read as one.
                self._broken = True
                return
            if len(self._data) < 1 + width + length:
                return
            kind = bytes(self._data[:1])
            payload = bytes(self._data[1 + width : 1 + width + length])
            del self._data[: 1 + width + length]
            if kind == WAITING and self.waiting_since is None:
                self.waiting_since = time.monotonic()
            keep_frame(self.frames, self.parts, kind, payload, self.listener)


@dataclass
class ChildRun:
    """How a contained child's run ended, and what it sent."""

    outcome: sandbox.Outcome
    frames: dict[bytes, bytes] = field(default_factory=dict)
    parts: list[bytes] = field(default_factory=list)
    """The ``P`` frames (runs of verdicts), in the order they came."""
    seconds: float = 0.0
    """The child's own time: from its start to its end, less its wait for its questions."""


@dataclass(frozen=True)
class _Key:
    """What a child is started for; a child is used only for exactly this."""

    framework: str
    module: str
    attribute: str
    root: str
    timeout: float
    inputs: bool


class ContainedChild:
    """A live tree's child in the sandbox: started now, told its questions by :meth:`ask`.

    ``ahead``: started before the questions can be known (see the module docstring).
    ``inputs``: the child notes what its import reads, for the tree cache. The child runs in a
    thread of this process, which must stay alive while the run is (the sandbox ties the run's
    life to it).
    """

    def __init__(
        self,
        framework: str,
        module: str,
        attribute: str,
        *,
        root: Path,
        timeout: float,
        inputs: bool,
        ahead: bool,
    ) -> None:
        import sandbox  # noqa: PLC0415 - a snapshot or a cached tree needs none of it

        self.key = _Key(framework, module, attribute, str(root), timeout, inputs)
        self._ahead = ahead
        self._folder = tempfile.mkdtemp(prefix="exampleguard-request-")
        note_scratch(self._folder)
        # Read by the sandbox's own uid (a root caller's runs read only what every user may);
        # the examples it will hold are the catalog's, which the project shows anyway.
        self._rest = str(Path(self._folder, _REST_FILE))
        try:
            Path(self._folder).chmod(0o755)
            self._write(_REQUEST_FILE, {"inputs": inputs, "rest": self._rest})
        except BaseException:
            self._remove_folder()
            raise
        entries = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        package_root = str(Path(__file__).resolve().parent.parent)
        # PYTHONPATH does not pass into a sandbox (it steers the interpreter): the child is
        # told where to import from instead, the project's directory first.
        search = [str(root), *entries, package_root]
        code = (
            f"import sys; sys.path[:0] = {search!r}; "
            "from exampleguard.adapters._child import main; main()"
        )
        request = f"@{Path(self._folder, _REQUEST_FILE)}"
        argv = [sys.executable, "-c", code, framework, module, attribute]
        argv += [TEXT_FRAMES, "", request, ".", str(root)]
        self._policy = sandbox.Policy(
            argv=tuple(argv),
            project_dir=root,
            # The interpreter and the import path the user runs it with, and the request
            # folder: their own settings and files, bound as they are (a PYTHONPATH entry in
            # /tmp or a home is not file content).
            trusted_readable=(
                *python_paths([*entries, package_root]),
                Path(self._folder),
            ),
            # An import may map much more memory than it uses, and start threads; the guard
            # refuses new processes, and the time limit bounds the run. (A process limit counts
            # the sandbox uid's tasks across concurrent runs, so it is left to the dry runs.)
            limits=sandbox.Limits(
                timeout_s=timeout * 2 if ahead else timeout,
                output_bytes=sandbox.MAX_OUTPUT_BYTES,
                memory_mb=None,
                max_processes=None,
            ),
        )
        self._frames = _TextFrames()
        self._cancel = threading.Event()
        self._outcome: sandbox.Outcome | None = None
        self._failure: BaseException | None = None
        self._unavailable = False
        self._done = threading.Event()
        self._started = time.monotonic()
        self._ended = self._started
        self._asked: float | None = None
        self._spawned = threading.Event()
        self._thread = threading.Thread(target=self._run, name="exampleguard-tree", daemon=True)
        self._thread.start()
        try:
            # The setup before the start is this process's work, in the run's thread: waited
            # for here, or a busy main thread would hand it the interpreter only now and then.
            self._spawned.wait()
        except BaseException:
            self.close()
            raise

    def _run(self) -> None:
        import sandbox  # noqa: PLC0415 - imported by __init__ already

        try:
            self._outcome = sandbox.run(
                self._policy,
                cancel=self._cancel,
                on_stdout=self._frames.feed,
                on_start=self._spawned.set,
            )
        except sandbox.IsolationUnavailable:
            self._unavailable = True
        except BaseException as error:
            self._failure = error
        finally:
            self._ended = time.monotonic()
            self._done.set()
            self._spawned.set()

    def _write(self, name: str, record: dict[str, Any]) -> None:
        # Written whole under another name, then renamed: the child never reads half of it.
        target = Path(self._folder, name)
        partial = target.with_name(f".{name}.partial")
        partial.write_text(json.dumps(record, ensure_ascii=True), encoding="ascii")
        partial.chmod(0o644)
        partial.replace(target)

    def in_time(self) -> bool:
        """Whether questions sent now leave the child its whole time limit (see the module)."""
        return not self._ahead or time.monotonic() - self._started <= self.key.timeout

    def ask(
        self,
        request: dict[str, Any],
        program: str | None,
        listener: Listener | None = None,
        cancel: threading.Event | None = None,
    ) -> ChildRun | None:
        """Send the questions and wait for the run's end; ``None`` where no sandbox can run.

        ``request`` holds the ``argvs``, ``paths`` and ``help_examples`` the child answers;
        ``listener`` is told of each frame as it arrives; setting ``cancel`` stops the run.
        """
        self._frames.listener = listener
        try:
            self._write(_REST_FILE, {**request, "program": program or ""})
        except BaseException:
            self.close()
            raise
        self._asked = time.monotonic()
        while not self._done.wait(0.05):
            if cancel is not None and cancel.is_set():
                self._cancel.set()
        self._thread.join()
        self._remove_folder()
        if self._failure is not None:
            raise self._failure
        if self._unavailable or self._outcome is None:
            return None
        waited = 0.0
        since = self._frames.waiting_since
        if since is not None and since < self._asked:
            waited = self._asked - since
        return ChildRun(
            self._outcome,
            self._frames.frames,
            self._frames.parts,
            self._ended - self._started - waited,
        )

    def close(self) -> None:
        """Stop the child if it is still running (unused), and remove its request folder."""
        self._cancel.set()
        self._thread.join()
        self._remove_folder()

    def _remove_folder(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


def python_paths(entries: Sequence[str]) -> tuple[Path, ...]:
    """What the interpreter needs to see: its installations, and where it imports from."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *entries}
    return tuple(Path(p) for p in sorted(found) if p and Path(p).exists())


_ahead: ContainedChild | None = None
_ahead_lock = threading.Lock()


def start_ahead(
    explicit: Path | None,
    cwd: Path,
    *,
    cached: bool,
    current: Callable[[str, Path], bool] | None = None,
) -> None:
    """Start the child of the configured live tree now, if one will certainly be needed.

    The configuration is read raw (``explicit`` is ``--config``); a setting that is not plainly
    a live tree imported in the sandbox starts nothing, and a wrong one is reported by the
    checked load as always. With ``cached`` (the tree cache in use), ``current`` is asked
    whether the cache's entry for the tree setting and project directory has its inputs
    unchanged: if so, the tree will likely come from the cache, and nothing is started.
    """
    global _ahead  # noqa: PLW0603 - one child ahead per process, claimed once
    settings = _raw_settings(explicit, cwd)
    if settings is None:
        return
    source, table = settings
    tree, isolation = table.get("tree"), table.get("tree_isolation", "auto")
    timeout = table.get("tree_timeout", DEFAULT_TREE_TIMEOUT)
    if not isinstance(tree, str) or isolation != "auto" or not _seconds(timeout):
        return
    framework, _, rest = tree.partition(":")
    module, _, attribute = rest.partition(":")
    if framework not in _FRAMEWORKS or not module or not attribute:
        return
    root = source.parent
    if cached and current is not None and current(tree, root):
        return
    key = (framework, module, attribute)
    with _ahead_lock:
        if _ahead is not None:
            return
        try:
            _ahead = ContainedChild(
                *key, root=root, timeout=float(timeout), inputs=cached, ahead=True
            )
        except (OSError, ValueError):
            # The checked run starts its child as always.
            return


def take_ahead(
    framework: str, module: str, attribute: str, *, root: Path, timeout: float, inputs: bool
) -> ContainedChild | None:
    """The child started ahead, if it was started for exactly this and is still in time.

    A child started for anything else is stopped; either way, no child is ahead any more.
    """
    global _ahead
    with _ahead_lock:
        child, _ahead = _ahead, None
    if child is None:
        return None
    wanted = _Key(framework, module, attribute, str(root), timeout, inputs)
    if child.key == wanted and child.in_time():
        return child
    child.close()
    return None


def close_ahead() -> None:
    """Stop a child started ahead that nobody claimed (the run ended before it needed one)."""
    global _ahead
    with _ahead_lock:
        child, _ahead = _ahead, None
    if child is not None:
        child.close()


def _raw_settings(explicit: Path | None, cwd: Path) -> tuple[Path, dict[str, Any]] | None:
    """The configuration file and its exampleguard table, read without checking, if any."""
    source = config_source(explicit, cwd)
    if source is None or source.suffix != ".toml":
        return None
    try:
        if source.stat().st_size > _MAX_CONFIG_BYTES:
            return None
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError, MemoryError):
        # Whatever is wrong with it, the checked load reports it (a hostile file's integers
        # and nesting raise ValueError and RecursionError); nothing is started ahead.
        return None
    # Which table holds the settings, as the checked load decides it.
    table: Any = data
    if settings_in_tool_table(source, data):
        tool = data.get("tool")
        table = tool.get("exampleguard") if isinstance(tool, dict) else None
    return (source.resolve(), table) if isinstance(table, dict) else None


def _seconds(value: Any) -> bool:
    # The checked setting's bounds.
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= MAX_SECONDS
    )
