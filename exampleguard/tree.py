"""The executable command tree (``exampleguard.tree/v1``) and where it comes from.

A tree is either a snapshot file or the live application, named by ``click:MODULE:ATTR``,
``typer:MODULE:ATTR`` or ``argparse:MODULE:ATTR``. Importing an application runs its code, which
may print, hang, change global state or exit; so it is imported in a child process with a
timeout, and only the snapshot format crosses the process boundary.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import selectors
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, Strict

from exampleguard.adapters._frames import FRAME_LENGTH_BYTES
from exampleguard.adapters.verdict import ParseVerdict
from exampleguard.codes import TREE_UNAVAILABLE
from exampleguard.diagnostics import Diagnostic, Location
from exampleguard.documents import (
    Document,
    SourceError,
    check_format,
    describe_size,
    load_document,
    parse_document,
    validate_model,
)
from exampleguard.fingerprint import note_scratch, note_unknown_inputs
from exampleguard.model import (
    NO_CONSTRAINTS,
    Alias,
    Constraints,
    Dialect,
    NonEmpty,
    Parameter,
    StrictModel,
)
from exampleguard.treecache import TreeCache, tree_identity
from exampleguard.treechild import (
    ASKED,
    CRASHED,
    NOT_STARTED,
    PART,
    TIMED_OUT,
    WAITING,
    ContainedChild,
    Listener,
    RunEnd,
    keep_frame,
    take_ahead,
)

__all__ = [
    "TREE_FORMAT",
    "HelpExample",
    "JudgedTree",
    "ParserSettings",
    "PendingVerdicts",
    "SourcePlace",
    "Tree",
    "TreeCommand",
    "TreeIsolation",
    "TreeSpec",
    "Verdicts",
    "load_judged_tree",
    "load_tree",
    "parse_tree_spec",
]

TREE_FORMAT = "exampleguard.tree/v1"
_FRAMEWORKS = ("click", "typer", "argparse")
# The largest tree accepted, from a snapshot file or an import: large CLIs have thousands of
# commands, and the bound keeps a hostile import from exhausting memory.
MAX_TREE_BYTES = 64 * 1024 * 1024


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


class SourcePlace(StrictModel):
    """Where a help text's line is written in the application's Python source (a live tree)."""

    file: NonEmpty
    line: Annotated[int, Strict(), Field(ge=1)]
    column: Annotated[int, Strict(), Field(ge=1)] = 1
    written: NonEmpty | None = None
    """The first line as the source spells it, where that differs from the help text (a
    docstring's doubled backslashes, argparse's ``%(prog)s``)."""


class HelpExample(StrictModel):
    """A command line the command's own help text shows (README, "Examples in help text").

    ``command`` is the line as the help shows it, a continued command's physical lines joined
    by newlines; ``field`` names the help text it is in (``help``, ``epilog``, ``description``,
    ``usage``, ``help of --format``); ``line`` and ``column`` place it in that text. ``source``
    is where a live tree's adapter found it written in the Python source, when it did.
    """

    command: NonEmpty
    field: NonEmpty = "help"
    line: Annotated[int, Strict(), Field(ge=1)] | None = None
    column: Annotated[int, Strict(), Field(ge=1)] | None = None
    source: SourcePlace | None = None


class TreeCommand(StrictModel):
    """One command or group of the executable tree.

    ``help_examples`` (an addition to the format; absent in older snapshots) are the command
    lines its help text shows, checked like documentation examples.
    """

    path: list[NonEmpty]
    aliases: list[Alias] = Field(default_factory=list)
    runnable: bool
    hidden: bool = False
    parameters: list[Parameter] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=lambda: NO_CONSTRAINTS)
    description: str | None = None
    default_command: NonEmpty | None = None
    default_if_no_args: bool = False
    settings: ParserSettings = Field(default_factory=ParserSettings)
    help_examples: list[HelpExample] = Field(default_factory=list)


class Tree(StrictModel):
    """A program's executable command tree: every command, its parameters and parsing rules.

    ``value_syntax`` says whose rules convert numbers: ``python`` (``int()``/``float()``, as Click
    and argparse do) or ``pydantic`` (Typer 0.26 and later, which validates through pydantic).
    ``framework`` and ``framework_version`` say which parser the tree was read from (``click``,
    ``typer`` or ``argparse``, and the version of Click, of Typer, or of CPython for argparse):
    the binder follows that version's rules. Both are optional; a snapshot without them is bound
    with the dialect's default rules (:meth:`~exampleguard.bind.dialect.Dialect.rules_for`).
    """

    format: Literal["exampleguard.tree/v1"]
    program: NonEmpty
    dialect: Dialect
    value_syntax: Literal["python", "pydantic"] = "python"
    framework: Literal["click", "typer", "argparse"] | None = None
    framework_version: NonEmpty | None = None
    option_values_drop_separator: bool | None = None
    """argparse: whether ``--`` given as an option's own value (``--opt=--``) is dropped, as
    measured on the parser the tree was read from (a patch release of 3.11 and of 3.12 changed
    it, so the version alone does not tell); absent, the version table decides."""
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


Verdicts = Mapping[tuple[str, ...], ParseVerdict]
"""The real parser's verdict on each argv (the words after the program), keyed by the argv."""


@dataclass(frozen=True, slots=True)
class JudgedTree:
    """A loaded tree, and for a live one the framework's own verdict on each argv asked about.

    ``verdicts`` is empty for a snapshot: there is no parser to ask.
    """

    tree: Tree
    document: Document
    verdicts: Verdicts


TreeIsolation = Literal["auto", "guard"]
"""How the child that imports a live tree is contained (the ``tree_isolation`` setting)."""


def load_tree(
    spec: TreeSpec, *, root: Path, display: str, timeout: float = 60.0, program: str | None = None
) -> tuple[Tree, Document]:
    """Load the tree ``spec`` names: read a snapshot, or import the application in a child.

    ``root`` is the directory the application is imported from (the configuration's directory).
    Raises ``SourceError`` (code ``tree-unavailable`` or a file code) when it cannot be loaded.
    """
    judged = load_judged_tree(spec, root=root, display=display, timeout=timeout, program=program)
    return judged.tree, judged.document


def load_judged_tree(
    spec: TreeSpec,
    *,
    root: Path,
    display: str,
    timeout: float = 60.0,
    program: str | None = None,
    argvs: Sequence[Sequence[str]] = (),
    paths: Sequence[Sequence[str]] = (),
    cache: TreeCache | None = None,
    isolation: TreeIsolation = "auto",
    help_examples: bool = False,
    stream: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> JudgedTree:
    """Load the tree, and have a live tree's own parser judge each of ``argvs``.

    With ``help_examples``, the child also judges the words of every example its tree's help
    texts show, which only it knows before the tree comes back.

    A live tree is imported in a child process that cannot change the project: under
    ``isolation`` ``auto`` in the sandbox (:mod:`sandbox`, bubblewrap) where this machine has
    it — project read-only, no network, a home of its own — and everywhere under the child's
    own guard (:mod:`exampleguard.adapters._guard`); ``guard`` uses the guard alone.

    ``paths`` are the command paths and aliases the catalog declares: a live Click group's own
    routing is probed for them, so aliases it resolves dynamically are in the tree. The argvs
    travel to the child in one batch, and each comes back with a
    :class:`~exampleguard.adapters.verdict.ParseVerdict`. With a ``cache``, a live tree whose
    inputs are unchanged is not imported again (:mod:`exampleguard.treecache`).

    With ``stream``, the tree is returned as soon as the child sends it, and the verdicts are a
    :class:`PendingVerdicts` that fills as the child judges; the caller must ``finish`` or
    ``close`` it. ``meanwhile`` (with ``stream``) is called once the child has its questions,
    while its tree is awaited: the caller's work that needs no tree takes that time.
    """
    if spec.framework == "snapshot":
        assert spec.path is not None
        document = load_document(spec.path, display, max_bytes=MAX_TREE_BYTES)
        check_format(document, TREE_FORMAT)
        return JudgedTree(validate_model(Tree, document), document, {})
    unique = list(dict.fromkeys(tuple(argv) for argv in argvs))
    request: dict[str, Any] = {
        "argvs": [list(a) for a in unique],
        "paths": [list(p) for p in paths],
    }
    if help_examples:
        request["help_examples"] = True

    def extract(
        asked: dict[str, Any], listener: Listener | None, cancel: threading.Event | None
    ) -> tuple[str, list[Any], dict[str, Any] | None]:
        contained = None
        if isolation == "auto":
            contained = _extract_contained(
                spec,
                root=root,
                timeout=timeout,
                program=program,
                request=asked,
                listener=listener,
                cancel=cancel,
            )
        return contained or _extract_in_child(
            spec,
            root=root,
            timeout=timeout,
            program=program,
            request=asked,
            listener=listener,
            cancel=cancel,
        )

    def obtain(
        listener: Listener | None = None, cancel: threading.Event | None = None
    ) -> tuple[str, list[Any]]:
        if cache is None:
            # What the import read is not asked for: a run that depends on it is not cached.
            note_unknown_inputs()
            text, records, _ = extract(request, listener, cancel)
            return text, records
        identity = tree_identity(str(spec), root, isolation, program)
        return cache.through(identity, request, lambda asked: extract(asked, listener, cancel))

    if not stream:
        text, records = obtain()
        tree, document = _read_tree(spec, text)
        return JudgedTree(tree, document, _verdicts_of(spec, unique, records))
    pending = PendingVerdicts(spec, unique, asked_help=help_examples)
    try:
        text = pending.start(obtain, meanwhile)
        tree, document = _read_tree(spec, text)
    except BaseException:
        pending.close()
        raise
    return JudgedTree(tree, document, pending)


def _read_tree(spec: TreeSpec, text: str) -> tuple[Tree, Document]:
    """The tree a child sent, validated."""
    document = parse_document(text, Path(f"<{spec}>"), str(spec), "json")
    try:
        check_format(document, TREE_FORMAT)
        tree = validate_model(Tree, document)
    except SourceError as error:
        raise SourceError(_unavailable(spec, f"produced an invalid snapshot: {error}")) from None
    return tree, document


def _verdicts_of(
    spec: TreeSpec, unique: list[tuple[str, ...]], records: list[Any]
) -> dict[tuple[str, ...], ParseVerdict]:
    """Each asked argv's verdict, then each help example's, from a child's verdict records."""
    verdicts = [ParseVerdict.from_json(record) for record in records[: len(unique)]]
    if len(verdicts) != len(unique):
        raise SourceError(_unavailable(spec, "did not judge every example"))
    judged = dict(zip(unique, verdicts, strict=True))
    # After the asked argvs come the help examples' own, each with its words.
    for record in records[len(unique) :]:
        helped = record["help"]
        judged.setdefault(tuple(helped["argv"]), ParseVerdict.from_json(helped["verdict"]))
    return judged


class PendingVerdicts(Mapping[tuple[str, ...], ParseVerdict]):
    """The verdicts of a live tree whose child is still judging: each one as soon as it is made.

    The child sends the tree first, then the verdicts a run at a time; the run goes on in a
    thread of its own while this process checks the examples against the tree, so the two
    share the machine's cores instead of taking turns. A lookup waits for the verdict it asks
    for (one not asked about — a help example's — waits for the end of the run); a child that
    fails after sending the tree makes the waiting lookup, or :meth:`finish`, raise the
    ``SourceError`` the run would have raised in one piece. :meth:`finish` waits for the end of
    the run (its cache entry written, its sandbox gone); :meth:`close` stops it first.

    The run's thread hands what happens to the thread that checks (the main one) as events on
    a queue, taken one at a time: a queue's ``get`` gives way to Ctrl-C in one step, where a
    condition's wait can be interrupted with its lock released and end in a ``RuntimeError``.
    """

    def __init__(self, spec: TreeSpec, unique: list[tuple[str, ...]], *, asked_help: bool) -> None:
        self._spec = spec
        self._unique = unique
        self._asked = bool(unique) or asked_help
        self._position = {argv: index for index, argv in enumerate(unique)}
        self._events: queue.SimpleQueue[tuple[bytes, Any]] = queue.SimpleQueue()
        self._sent = False
        self._tree: bytes | None = None
        self._parts: collections.deque[bytes] = collections.deque()
        self._known: dict[tuple[str, ...], ParseVerdict] = {}
        self._read = 0
        self._ended = False
        self._result: tuple[str, list[Any]] | None = None
        self._failure: BaseException | None = None
        self._complete: dict[tuple[str, ...], ParseVerdict] | None = None
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def start(
        self,
        obtain: Callable[[Listener, threading.Event], tuple[str, list[Any]]],
        meanwhile: Callable[[], object] | None = None,
    ) -> str:
        """Start the run in a thread; return the tree's text as soon as the child sends it.

        ``meanwhile`` is called once the child has its questions (or the run is over without
        one, the tree cached), before the tree is awaited.
        """

        def run() -> None:
            try:
                result = obtain(self._listen, self._cancel)
            except BaseException as error:
                self._events.put((_FAILED, error))
                return
            self._events.put((_ENDED, result))

        self._thread = threading.Thread(target=run, name="exampleguard-tree", daemon=True)
        self._thread.start()
        if meanwhile is not None:
            # Not before: this thread's work would hold up the run's thread sending them.
            self._take_until(lambda: self._sent or self._tree is not None or self._ended)
            meanwhile()
        self._take_until(lambda: self._tree is not None or self._ended)
        if self._tree is None:
            if self._failure is not None:
                raise self._failure
            # Over before a frame was seen (a cached tree): the whole result is here.
            assert self._result is not None
            return self._result[0]
        return self._tree.decode("utf-8", errors="replace")

    def _listen(self, kind: bytes, payload: bytes) -> None:
        # In the run's thread.
        if kind in (ASKED, _TREE, _PART):
            self._events.put((kind, payload))

    def _take_until(self, done: Callable[[], bool]) -> None:
        """Take the run's events, waiting for each, until ``done`` holds."""
        while not done():
            kind, payload = self._events.get()
            if kind == ASKED:
                self._sent = True
            elif kind == _TREE:
                self._tree = payload
            elif kind == _PART:
                self._parts.append(payload)
            elif kind == _ENDED:
                self._result, self._ended = payload, True
            else:
                self._failure, self._ended = payload, True

    def __getitem__(self, argv: tuple[str, ...]) -> ParseVerdict:
        position = self._position.get(argv)
        if position is None or self._complete is not None:
            return self._finished()[argv]
        while position >= self._read:
            if not self._next_part():
                return self._finished()[argv]
        return self._known[argv]

    def _next_part(self) -> bool:
        """Read the next run of verdicts, waiting for it; false once the run has ended."""
        self._take_until(lambda: bool(self._parts) or self._ended)
        if not self._parts:
            return False
        records = json.loads(self._parts.popleft()).get("verdicts", [])
        for record in records:
            if self._read < len(self._unique):
                self._known[self._unique[self._read]] = ParseVerdict.from_json(record)
                self._read += 1
        return True

    def __bool__(self) -> bool:
        return self._asked

    def __len__(self) -> int:
        return len(self._finished())

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(self._finished())

    def finish(self) -> dict[tuple[str, ...], ParseVerdict]:
        """Wait for the end of the run; every verdict, or the run's ``SourceError``."""
        return self._finished()

    def _finished(self) -> dict[tuple[str, ...], ParseVerdict]:
        if self._complete is not None:
            return self._complete
        self._take_until(lambda: self._ended)
        if self._thread is not None:
            self._thread.join()
        if self._failure is not None:
            raise self._failure
        assert self._result is not None
        self._complete = _verdicts_of(self._spec, self._unique, self._result[1])
        return self._complete

    def close(self) -> None:
        """Stop the run if it is still going, and wait for it to be gone."""
        if self._thread is not None and self._thread.is_alive():
            self._cancel.set()
            self._thread.join()


def _extract_in_child(
    spec: TreeSpec,
    *,
    root: Path,
    timeout: float,
    program: str | None,
    request: dict[str, Any],
    listener: Listener | None = None,
    cancel: threading.Event | None = None,
) -> tuple[str, list[Any], dict[str, Any] | None]:
    # The snapshot travels over a dedicated pipe, so whatever the application prints cannot
    # corrupt it; its stdout is discarded and only the tail of its stderr is kept, for the error
    # message, so a chatty import costs no memory. The request (argvs to judge, paths to probe)
    # goes in through an unlinked temporary file: read whole before the import, never a pipe
    # that a large batch could fill.
    with (
        tempfile.TemporaryFile() as request_file,
        tempfile.TemporaryDirectory(prefix="exampleguard-tree-") as scratch,
    ):
        note_scratch(scratch)
        request_file.write(json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        request_file.seek(0)
        return _run_child(
            spec,
            root=root,
            timeout=timeout,
            program=program,
            request_fd=request_file.fileno(),
            expect_verdicts=_asks_verdicts(request),
            expect_inputs=bool(request.get("inputs")),
            scratch=scratch,
            listener=listener,
            cancel=cancel,
        )


def _extract_contained(
    spec: TreeSpec,
    *,
    root: Path,
    timeout: float,
    program: str | None,
    request: dict[str, Any],
    listener: Listener | None = None,
    cancel: threading.Event | None = None,
) -> tuple[str, list[Any], dict[str, Any] | None] | None:
    """Import the tree in the sandbox, or return ``None`` where the sandbox cannot run here.

    The project is visible read-only; the child's home, cache and temporary directory are in
    the run's fresh work dir, the only writable place; it has no network. The questions travel
    as files of a request folder, and the frames come back as text on the child's standard
    output (the application's own output goes to /dev/null). The whole filesystem is seen
    read-only at its own paths, so the files the child reports having read are the host's.
    A child started ahead for this very tree (:mod:`exampleguard.treechild`) is asked instead
    of starting one.
    """
    inputs = bool(request.get("inputs"))
    key = (spec.framework, spec.module, spec.attribute)
    questions = {name: value for name, value in request.items() if name != "inputs"}
    try:
        child = take_ahead(*key, root=root, timeout=timeout, inputs=inputs)
        if child is None:
            child = ContainedChild(*key, root=root, timeout=timeout, inputs=inputs, ahead=False)
        run = child.ask(questions, program, listener, cancel)
    except OSError as error:
        raise SourceError(_unavailable(spec, f"could not be started: {error}")) from None
    if run is None:
        return None
    end = run.end
    if end.status == TIMED_OUT or (end.status != NOT_STARTED and run.seconds > timeout):
        raise SourceError(
            _unavailable(spec, f"did not finish importing within {timeout:g} seconds")
        )
    result = _ChildOutcome(bytearray(), bytearray(end.stderr.encode("utf-8", "replace")))
    result.too_large = end.stdout_truncated
    result.frames, result.parts = run.frames, run.parts
    if not result.frames.keys() - {WAITING} and _sandbox_failed(end):
        # The sandbox itself could not run here (a project directory its uid cannot read, the
        # sandbox's own process lost): like a machine without one, the guard alone remains.
        return None
    return _frames_result(spec, result, end.exit_code, expect_verdicts=_asks_verdicts(request))


def _sandbox_failed(end: RunEnd) -> bool:
    """Whether the sandbox failed on its own account, before or around the child (not the child)."""
    if end.status == NOT_STARTED:
        return True
    detail = end.detail or ""
    return end.status == CRASHED and (
        "reported no exit status" in detail or detail.startswith("bubblewrap failed")
    )


def _run_child(
    spec: TreeSpec,
    *,
    root: Path,
    timeout: float,
    program: str | None,
    request_fd: int,
    expect_verdicts: bool,
    expect_inputs: bool,
    scratch: str,
    listener: Listener | None = None,
    cancel: threading.Event | None = None,
) -> tuple[str, list[Any], dict[str, Any] | None]:
    result_fd, write_end = os.pipe()
    command = [
        sys.executable,
        "-c",
        "from exampleguard.adapters._child import main; main()",
        spec.framework,
        spec.module,
        spec.attribute,
        str(write_end),
        program or "",
        str(request_fd),
        scratch,
    ]
    try:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=_child_env(scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(write_end, request_fd),
            # Its own session: whatever the application starts can be stopped as one group, and
            # `os.killpg(0, ...)` in the application cannot reach exampleguard.
            start_new_session=True,
        )
    except OSError as error:
        os.close(result_fd)
        raise SourceError(_unavailable(spec, f"could not be started: {error}")) from None
    finally:
        os.close(write_end)
    if listener is not None:
        # Its questions are in the request it was started with.
        listener(ASKED, b"")
    assert process.stderr is not None
    try:
        outcome = _collect(
            process,
            result_fd,
            process.stderr.fileno(),
            timeout,
            (_VERDICTS,) * expect_verdicts + (_INPUTS,) * expect_inputs,
            listener=listener,
            cancel=cancel,
        )
    finally:
        _stop_group(process)
        os.close(result_fd)
        process.stderr.close()
    if outcome.timed_out:
        raise SourceError(
            _unavailable(spec, f"did not finish importing within {timeout:g} seconds")
        )
    if outcome.cancelled:
        raise SourceError(_unavailable(spec, "was stopped before it finished"))
    return _frames_result(spec, outcome, process.returncode, expect_verdicts=expect_verdicts)


def _asks_verdicts(request: dict[str, Any]) -> bool:
    """Whether the child is asked for verdicts (on argvs, or on its help examples)."""
    return bool(request["argvs"]) or bool(request.get("help_examples"))


def _frames_result(
    spec: TreeSpec, outcome: _ChildOutcome, returncode: int | None, *, expect_verdicts: bool
) -> tuple[str, list[Any], dict[str, Any] | None]:
    """The tree text, verdict records and inputs a child sent, or its failure as an error."""
    tree = outcome.frame(_TREE)
    if tree is None or outcome.too_large or outcome.frame(_ERROR) is not None:
        raise SourceError(_unavailable(spec, _child_failure(outcome, returncode)))
    records: list[Any] = []
    if expect_verdicts:
        judged = outcome.frame(_VERDICTS)
        if judged is None:
            raise SourceError(_unavailable(spec, _child_failure(outcome, returncode)))
        data = json.loads(judged)
        for part in outcome.parts:
            records.extend(json.loads(part).get("verdicts", []))
        records += [*data.get("verdicts", []), *({"help": h} for h in data.get("help", []))]
    read = outcome.frame(_INPUTS)
    inputs = json.loads(read) if read is not None else None
    return tree.decode("utf-8", errors="replace"), records, inputs


def _child_env(scratch: str) -> dict[str, str]:
    """The environment of the child that imports the tree: this one, pointed at ``scratch``."""
    env = dict(os.environ)
    # `-c` puts the working directory (the project root) first on sys.path, as running the
    # application from there would; exampleguard's own location goes last so that a checkout
    # used without installing still finds the adapters, and never shadows the user's packages.
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [*filter(None, [os.environ.get("PYTHONPATH")]), package_root]
    )
    env["EXAMPLEGUARD_CHILD"] = "1"
    # The application gets a home of its own, in the scratch directory, the only place it may
    # write to; packages installed for the user stay importable.
    env["PYTHONUSERBASE"] = os.environ.get("PYTHONUSERBASE") or site.getuserbase()
    for name in _SCRATCH_VARIABLES:
        env[name] = scratch
    return env


_TREE, _PART, _VERDICTS, _ERROR, _INPUTS = b"T", PART, b"V", b"E", b"I"
# The run's end, as an event of PendingVerdicts (not frames).
_ENDED, _FAILED = b"end", b"failed"
_SCRATCH_VARIABLES = (
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
)
_HEADER_BYTES = 1 + FRAME_LENGTH_BYTES
_STDERR_TAIL_BYTES = 16 * 1024
_READ_BYTES = 1 << 16


@dataclass
class _ChildOutcome:
    """What the child sent: its result frames (once complete) and the tail of its stderr."""

    buffer: bytearray
    stderr_tail: bytearray
    timed_out: bool = False
    too_large: bool = False
    cancelled: bool = False
    frames: dict[bytes, bytes] = field(default_factory=dict)
    parts: list[bytes] = field(default_factory=list)
    """The ``P`` frames (runs of verdicts), in the order they came."""
    listener: Listener | None = None

    def frame(self, kind: bytes) -> bytes | None:
        """The payload of the complete frame of ``kind``, if it arrived."""
        return self.frames.get(kind)

    def done(self, expected: tuple[bytes, ...]) -> bool:
        """Whether the tree and the ``expected`` frames have arrived (or the child failed)."""
        if _ERROR in self.frames or self.too_large:
            return True
        return _TREE in self.frames and all(kind in self.frames for kind in expected)

    def feed_result(self, data: bytes) -> None:
        """Add bytes of the result pipe; split off complete frames; note an oversized one."""
        self.buffer += data
        while len(self.buffer) >= _HEADER_BYTES:
            length = int.from_bytes(self.buffer[1:_HEADER_BYTES], "big")
            if length > MAX_TREE_BYTES:
                self.too_large = True
                return
            if len(self.buffer) < _HEADER_BYTES + length:
                return
            kind = bytes(self.buffer[:1])
            payload = bytes(self.buffer[_HEADER_BYTES : _HEADER_BYTES + length])
            del self.buffer[: _HEADER_BYTES + length]
            keep_frame(self.frames, self.parts, kind, payload, self.listener)

    def feed_stderr(self, data: bytes) -> None:
        """Add bytes of the child's stderr, keeping only the last few kilobytes."""
        self.stderr_tail += data
        del self.stderr_tail[:-_STDERR_TAIL_BYTES]


def _collect(
    process: subprocess.Popen[bytes],
    result_fd: int,
    stderr_fd: int,
    timeout: float,
    expected: tuple[bytes, ...] = (),
    *,
    listener: Listener | None = None,
    cancel: threading.Event | None = None,
) -> _ChildOutcome:
    """Read the result frame and stderr until the frame is complete or the child has exited.

    End of file is not waited for: a process the application forked may hold both pipes open
    long after the tree was written.
    """
    outcome = _ChildOutcome(bytearray(), bytearray(), listener=listener)
    deadline = time.monotonic() + timeout
    sinks = {result_fd: outcome.feed_result, stderr_fd: outcome.feed_stderr}
    with selectors.DefaultSelector() as selector, _exit_notifier(process.pid) as exit_fd:
        for fd in sinks:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        # Without a pidfd the exit is noticed by polling, a few times a second; so is a cancel.
        poll_interval = None if exit_fd is not None and cancel is None else 0.05
        while not outcome.done(expected):
            if cancel is not None and cancel.is_set():
                outcome.cancelled = True
                break
            if process.poll() is not None:
                # Everything the child wrote before exiting is in the pipes now.
                for fd, sink in sinks.items():
                    _read_available(fd, sink, until_blocked=True)
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                outcome.timed_out = True
                break
            wait = remaining if poll_interval is None else min(remaining, poll_interval)
            for key, _ in selector.select(wait):
                if key.fd in sinks and not _read_available(key.fd, sinks[key.fd]):
                    selector.unregister(key.fd)
    return outcome


def _read_available(fd: int, sink: Callable[[bytes], None], *, until_blocked: bool = False) -> bool:
    """Pass what can be read from ``fd`` without blocking to ``sink``; false at end of file."""
    while True:
        try:
            data = os.read(fd, _READ_BYTES)
        except BlockingIOError:
            return True
        if not data:
            return False
        sink(data)
        if not until_blocked:
            return True


@contextlib.contextmanager
def _exit_notifier(pid: int) -> Iterator[int | None]:
    """A descriptor that becomes readable when ``pid`` exits, where the kernel offers one."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    # The group is killed before the child is reaped, while its id cannot have been reused;
    # whatever the import left running in it goes too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _child_failure(outcome: _ChildOutcome, returncode: int | None) -> str:
    if outcome.too_large:
        return f"produced a tree larger than the {describe_size(MAX_TREE_BYTES)} limit"
    error = outcome.frame(_ERROR)
    if error is not None:
        try:
            report = json.loads(error)
        except json.JSONDecodeError:
            report = None
        if isinstance(report, dict) and isinstance(message := report.get("error"), str):
            return message
    text = outcome.stderr_tail.decode("utf-8", errors="replace")
    tail = text.strip().splitlines()[-3:]
    detail = f": {' / '.join(tail)}" if tail else ""
    if outcome.frame(_TREE) is not None:
        # The tree came; the examples' verdicts did not.
        if returncode is not None and returncode < 0:
            return f"was killed by signal {-returncode} while judging the examples{detail}"
        return f"exited with status {returncode} while judging the examples{detail}"
    if returncode is not None and returncode < 0:
        return f"was killed by signal {-returncode} while importing{detail}"
    return f"exited with status {returncode} while importing, before producing a tree{detail}"


def _unavailable(spec: TreeSpec, reason: str, hint: str | None = None) -> Diagnostic:
    return TREE_UNAVAILABLE.diagnostic(
        message=f"tree {spec}: {reason}",
        hint=hint
        or "The tree is imported in a child process from the configuration's directory; "
        "check that `python -c 'import MODULE'` works there.",
        location=Location(str(spec)),
    )
