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

A run's process has one thread when it starts a child ahead, and forks a helper process to
run the child in the sandbox (:class:`ContainedChild`): importing the sandbox, probing the host
and starting bubblewrap take the other core, and this process never imports the sandbox. The
helper reports the child's output and the run's end over a pipe, and stops the run when told
to or when this process ends. Where the process has other threads (forking it would not be
safe), the child runs from a thread of this process instead, as one started afresh does.

Nothing here imports the models (pydantic) or the sandbox before a child is started.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from exampleguard.adapters._frames import FRAME_LENGTH_BYTES, TEXT_FRAMES
from exampleguard.fingerprint import note_scratch, stop_recording
from exampleguard.locate import (
    DEFAULT_TREE_TIMEOUT,
    MAX_SECONDS,
    config_source,
    settings_in_tool_table,
)
from exampleguard.parallel import can_fork

if TYPE_CHECKING:
    import sandbox

__all__ = [
    "ASKED",
    "CRASHED",
    "NOT_STARTED",
    "PART",
    "TIMED_OUT",
    "WAITING",
    "ChildRun",
    "ContainedChild",
    "Listener",
    "RunEnd",
    "close_ahead",
    "keep_frame",
    "start_ahead",
    "take_ahead",
]

Listener = Callable[[bytes, bytes], None]
"""Told of each complete frame a child sends (its kind and payload), as it arrives."""

PART, WAITING = b"P", b"W"
ASKED = b"?"
"""Told to a listener (no frame of the child's) once the child's questions are sent."""
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


TIMED_OUT, NOT_STARTED, CRASHED = "timed-out", "not-started", "crashed"
"""The run statuses a tree's loader tells apart (values of :class:`sandbox.Status`)."""


@dataclass(frozen=True)
class RunEnd:
    """How a contained child's run ended: what the loader reads of :class:`sandbox.Outcome`.

    Plain values, so that a run in a helper process reaches this one without the sandbox's
    classes (this process then never imports the sandbox).
    """

    status: str
    """A :class:`sandbox.Status` value."""
    exit_code: int | None
    stderr: str
    stdout_truncated: bool
    detail: str | None = None

    @classmethod
    def of(cls, outcome: sandbox.Outcome) -> RunEnd:
        """The end of a run, from the sandbox's outcome."""
        return cls(
            str(outcome.status.value),
            outcome.exit_code,
            outcome.stderr,
            outcome.stdout_truncated,
            outcome.detail,
        )

    def to_bytes(self) -> bytes:
        """The end as ASCII JSON (what a helper process sends)."""
        return json.dumps(asdict(self), ensure_ascii=True).encode("ascii")

    @classmethod
    def from_bytes(cls, data: bytes) -> RunEnd:
        """The end :meth:`to_bytes` wrote."""
        fields = json.loads(data)
        return cls(
            str(fields["status"]),
            fields["exit_code"] if isinstance(fields["exit_code"], int) else None,
            str(fields["stderr"]),
            bool(fields["stdout_truncated"]),
            fields["detail"] if isinstance(fields["detail"], str) else None,
        )


@dataclass
class ChildRun:
    """How a contained child's run ended, and what it sent."""

    end: RunEnd
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


@dataclass(frozen=True)
class _RunSpec:
    """What the sandbox is asked to run, in plain values (the policy is built where it runs)."""

    argv: tuple[str, ...]
    root: Path
    readable: tuple[Path, ...]
    timeout_s: float

    def policy(self) -> sandbox.Policy:
        """The sandbox's policy for the child."""
        import sandbox  # noqa: PLC0415 - where the run is, the sandbox is imported already

        return sandbox.Policy(
            argv=self.argv,
            project_dir=self.root,
            # The interpreter and the import path the user runs it with, and the request
            # folder: their own settings and files, bound as they are (a PYTHONPATH entry in
            # /tmp or a home is not file content).
            trusted_readable=self.readable,
            # An import may map much more memory than it uses, and start threads; the guard
            # refuses new processes, and the time limit bounds the run. (A process limit counts
            # the sandbox uid's tasks across concurrent runs, so it is left to the dry runs.)
            limits=sandbox.Limits(
                timeout_s=self.timeout_s,
                output_bytes=sandbox.MAX_OUTPUT_BYTES,
                memory_mb=None,
                max_processes=None,
            ),
        )


# What a helper process sends its parent: a kind, the payload's length, the payload.
_OUTPUT, _END, _UNAVAILABLE, _FAILED = b"O", b"E", b"U", b"X"
_HEADER_BYTES = 9
_HELPER_GRACE_S = 10.0
"""How long a helper told to stop may take (the sandbox stops a run within 0.05 s)."""


class ContainedChild:
    """A live tree's child in the sandbox: started now, told its questions by :meth:`ask`.

    ``ahead``: started before the questions can be known (see the module docstring).
    ``inputs``: the child notes what its import reads, for the tree cache.

    The sandbox runs the child from a thread of this process, which must stay alive while the
    run is (the sandbox ties the run's life to it). A child started ahead by a process with no
    other thread is run by a helper process forked for it instead (see ``can_fork``): the
    sandbox's setup (importing it, probing the host, starting bubblewrap) then takes the
    other core, not the one that goes on to read the catalog. The helper stops the run and
    ends when told to (SIGTERM) or when this process ends.
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
        self._spec = _RunSpec(
            tuple(argv),
            root,
            (*python_paths([*entries, package_root]), Path(self._folder)),
            timeout * 2 if ahead else timeout,
        )
        self._frames = _TextFrames()
        self._cancel = threading.Event()
        self._end: RunEnd | None = None
        self._failure: BaseException | None = None
        self._unavailable = False
        self._done = _Latch()
        self._started = time.monotonic()
        self._ended = self._started
        self._asked: float | None = None
        self._helper: int | None = None
        try:
            if not (ahead and can_fork() and self._start_helper()):
                self._start_thread()
        except BaseException:
            self.close()
            raise

    def _start_thread(self) -> None:
        import sandbox  # noqa: PLC0415 - a snapshot or a cached tree needs none of it

        policy = self._spec.policy()
        spawned = _Latch()

        def run() -> None:
            try:
                self._end = RunEnd.of(
                    sandbox.run(
                        policy,
                        cancel=self._cancel,
                        on_stdout=self._frames.feed,
                        on_start=spawned.set,
                    )
                )
            except sandbox.IsolationUnavailable:
                self._unavailable = True
            except BaseException as error:
                self._failure = error
            finally:
                self._ended = time.monotonic()
                self._done.set()
                spawned.set()

        self._thread = threading.Thread(target=run, name="exampleguard-tree", daemon=True)
        self._thread.start()
        # The setup before the start is this process's work, in the run's thread: waited
        # for here, or a busy main thread would hand it the interpreter only now and then.
        spawned.wait()

    def _start_helper(self) -> bool:
        """Fork the helper that runs the child (see the class); False if it cannot be forked."""
        reading, writing = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(reading)
            os.close(writing)
            return False
        if pid == 0:
            os.close(reading)
            _serve_as_helper(self._spec, writing, parent)
        os.close(writing)
        self._helper = pid
        self._thread = threading.Thread(
            target=self._relay, args=(reading, pid), name="exampleguard-tree", daemon=True
        )
        self._thread.start()
        return True

    def _relay(self, reading: int, pid: int) -> None:
        """Read what the helper sends until it ends; then reap it."""
        data = bytearray()
        try:
            while chunk := os.read(reading, 1 << 16):
                data += chunk
                while len(data) >= _HEADER_BYTES:
                    length = int.from_bytes(data[1:_HEADER_BYTES], "big")
                    if len(data) < _HEADER_BYTES + length:
                        break
                    kind = bytes(data[:1])
                    payload = bytes(data[_HEADER_BYTES : _HEADER_BYTES + length])
                    del data[: _HEADER_BYTES + length]
                    self._received(kind, payload)
        except BaseException as error:
            self._failure = error
        finally:
            os.close(reading)
            _, status = os.waitpid(pid, 0)
            if self._end is None and not self._unavailable and self._failure is None:
                self._failure = OSError(
                    f"the sandbox's helper process ended without a report ({_ending(status)})"
                )
            self._ended = time.monotonic()
            self._done.set()

    def _received(self, kind: bytes, payload: bytes) -> None:
        if kind == _OUTPUT:
            self._frames.feed(payload)
        elif kind == _END:
            self._end = RunEnd.from_bytes(payload)
        elif kind == _UNAVAILABLE:
            self._unavailable = True
        else:
            self._failure = OSError(payload.decode("utf-8", "replace"))

    def _stop(self) -> None:
        """Tell the run to stop: the sandbox's cancel, or the helper's SIGTERM."""
        self._cancel.set()
        if self._helper is not None and not self._done.is_set():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._helper, signal.SIGTERM)

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
        ``listener`` is told that they are sent (:data:`ASKED`), then of each frame as it
        arrives; setting ``cancel`` stops the run.
        """
        self._frames.listener = listener
        try:
            self._write(_REST_FILE, {**request, "program": program or ""})
        except BaseException:
            self.close()
            raise
        self._asked = time.monotonic()
        if listener is not None:
            listener(ASKED, b"")
        try:
            while not self._done.wait(0.05):
                if cancel is not None and cancel.is_set():
                    self._stop()
        finally:
            self.close()
        if self._failure is not None:
            raise self._failure
        if self._unavailable or self._end is None:
            return None
        waited = 0.0
        since = self._frames.waiting_since
        if since is not None and since < self._asked:
            waited = self._asked - since
        return ChildRun(
            self._end,
            self._frames.frames,
            self._frames.parts,
            self._ended - self._started - waited,
        )

    def close(self) -> None:
        """Stop the child if it is still running (unused), and remove its request folder."""
        self._stop()
        thread = getattr(self, "_thread", None)
        if thread is not None:
            thread.join(_HELPER_GRACE_S if self._helper is not None else None)
            if thread.is_alive() and self._helper is not None:
                # A helper that does not stop is killed; its run dies with it.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._helper, signal.SIGKILL)
                thread.join()
        self._remove_folder()

    def _remove_folder(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


def _serve_as_helper(spec: _RunSpec, writing: int, parent: int) -> NoReturn:
    """The forked helper's whole life: run the child in the sandbox, report, and exit.

    Nothing of the parent runs here after the fork: no exit handler, no buffered output (it
    ends with ``os._exit``). Ctrl-C is the parent's to act on; SIGTERM, from the parent or on
    its death, stops the run.
    """
    status = 1
    try:
        stop_recording()
        stop = threading.Event()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
        _quiet_standard_streams()
        _end_with_parent(parent, stop)
        status = _run_for_parent(spec, writing, stop)
    except BaseException as error:
        with contextlib.suppress(BaseException):
            _send(writing, _FAILED, f"{type(error).__name__}: {error}".encode())
    finally:
        os._exit(status)


def _run_for_parent(spec: _RunSpec, writing: int, stop: threading.Event) -> int:
    import sandbox  # noqa: PLC0415 - imported by the helper alone

    def output(chunk: bytes) -> None:
        try:
            _send(writing, _OUTPUT, chunk)
        except OSError:
            # The parent is gone: nobody reads the answers.
            stop.set()

    try:
        outcome = sandbox.run(spec.policy(), cancel=stop, on_stdout=output)
    except sandbox.IsolationUnavailable as error:
        _send(writing, _UNAVAILABLE, str(error).encode())
        return 0
    _send(writing, _END, RunEnd.of(outcome).to_bytes())
    return 0


def _send(writing: int, kind: bytes, payload: bytes) -> None:
    view = memoryview(kind + len(payload).to_bytes(_HEADER_BYTES - 1, "big") + payload)
    while view:
        view = view[os.write(writing, view) :]


def _quiet_standard_streams() -> None:
    """Standard input and output on /dev/null: the parent's report is the parent's alone."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        os.dup2(null, 1)
    finally:
        os.close(null)


_PR_SET_PDEATHSIG = 1


def _end_with_parent(parent: int, stop: threading.Event) -> None:
    """Have the kernel send SIGTERM when the parent ends (stopping the run), as it does then."""
    import ctypes  # noqa: PLC0415 - the helper's alone

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        # The parent ended before the request took effect.
        stop.set()


def _ending(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


class _Latch:
    """Set once, by one thread; waited for by another, which a signal may interrupt cleanly.

    A raw lock's ``acquire`` gives way to an exception from a signal handler (Ctrl-C, SIGTERM
    raising ``Interrupted``) and leaves nothing held; ``threading.Event.wait`` can be left with
    its condition's lock released twice, and fail with ``RuntimeError`` instead.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self._set = False

    def set(self) -> None:
        """Set it; once set, setting it again changes nothing."""
        if not self._set:
            self._set = True
            self._lock.release()

    def is_set(self) -> bool:
        """Whether it is set."""
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until it is set, or ``timeout`` seconds; whether it is set."""
        if self._set:
            return True
        if self._lock.acquire(timeout=-1 if timeout is None else timeout):
            self._lock.release()
            return True
        return False


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
