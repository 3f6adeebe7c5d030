"""The executable command tree (``exampleguard.tree/v1``) and where it comes from.

A tree is either a snapshot file, the live application, named by ``click:MODULE:ATTR``,
``typer:MODULE:ATTR`` or ``argparse:MODULE:ATTR``, or a built program that speaks the
exampleguard tree protocol, named by ``exec:PROGRAM [ARGS...]`` (SPEC 3.3). Importing an
application runs its code, which may print, hang, change global state or exit; so does running
a program. Either happens in a child process with a timeout, under the one isolation decision
(:mod:`exampleguard._treechild`), and only the snapshot format and the verdicts cross the process
boundary, as data.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import signal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import exampleguard._treechild as treechild
from exampleguard._adapters._helptext import help_argvs
from exampleguard._adapters.verdict import GivenValue, ParseVerdict
from exampleguard._codes import ISOLATION_UNAVAILABLE, TREE_UNAVAILABLE
from exampleguard._diagnostics import Diagnostic, Location
from exampleguard._documents import (
    Document,
    SourceError,
    check_format,
    describe_size,
    load_document,
    parse_document,
    validate_model,
)
from exampleguard._model import Parameter
from exampleguard._snapshot import TREE_FORMAT, JudgeVerdict, Tree
from exampleguard._treecache import TreeCache, import_inputs, tree_identity
from exampleguard._treechild import ChildRun, Containment, ExecRun, run_child, run_exec

if TYPE_CHECKING:
    import sandbox
    from exampleguard._config import Settings

__all__ = [
    "Containment",
    "JudgedTree",
    "TreeIsolation",
    "TreeSpec",
    "Verdicts",
    "containment_of",
    "load_judged_tree",
    "load_tree",
    "parse_tree_spec",
]

_FRAMEWORKS = ("click", "typer", "argparse")
# The largest tree accepted, from a snapshot file or an import: large CLIs have thousands of
# commands, and the bound keeps a hostile import from exhausting memory.
MAX_TREE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """A parsed ``tree`` setting: a framework object to import, a program to run, or a snapshot.

    For ``exec``, ``command`` is the program (resolved) and its arguments, and ``text`` the
    setting as written, which names the tree in messages and in the cache's key.
    """

    framework: Literal["click", "typer", "argparse", "snapshot", "exec"]
    module: str = ""
    attribute: str = ""
    path: Path | None = None
    command: tuple[str, ...] = ()
    text: str = ""

    def __str__(self) -> str:
        if self.framework == "snapshot":
            return str(self.path)
        if self.framework == "exec":
            return self.text
        return f"{self.framework}:{self.module}:{self.attribute}"


EXEC_PREFIX = "exec:"


def parse_tree_spec(value: str, base: Path) -> TreeSpec:
    """Parse a ``tree`` setting; relative snapshot paths and programs resolve against ``base``.

    Raises ``ValueError`` with a message that says what the accepted forms are.
    """
    if value.startswith(EXEC_PREFIX):
        return _exec_spec(value, base)
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
        f"tree {value!r} is neither click:MODULE:ATTR, typer:MODULE:ATTR, argparse:MODULE:ATTR, "
        "exec:PROGRAM nor a path to a tree snapshot .json"
    )


def _exec_spec(value: str, base: Path) -> TreeSpec:
    """``exec:PROGRAM [ARGS...]``, split as a shell splits words.

    A relative PROGRAM is the project's (``base``), never looked up on PATH.
    """
    try:
        words = shlex.split(value.removeprefix(EXEC_PREFIX))
    except ValueError as error:
        raise ValueError(
            f"tree {value!r}: exec:PROGRAM [ARGS...] does not split: {error}"
        ) from None
    if not words or not words[0]:
        raise ValueError(
            f"tree {value!r} names no program: exec:PROGRAM [ARGS...] (for example "
            "'exec:./bin/app')"
        )
    program = Path(words[0])
    resolved = program if program.is_absolute() else base / program
    return TreeSpec("exec", command=(str(resolved), *words[1:]), text=value)


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


def containment_of(settings: Settings) -> Containment:
    """The containment of a live tree's import under ``settings``: the dry runs' decision."""
    dryrun = settings.dryrun
    return Containment(
        guard=settings.tree_isolation == "guard",
        require=tuple(dryrun.require),
        memory_mb=dryrun.memory_mb,
        max_processes=dryrun.max_processes,
        env=tuple(sorted(settings.tree_env.items())),
    )


def load_tree(
    spec: TreeSpec,
    *,
    root: Path,
    display: str,
    timeout: float = 60.0,
    program: str | None = None,
    containment: Containment | None = None,
) -> tuple[Tree, Document]:
    """Load the tree ``spec`` names: read a snapshot, or import the application in a child.

    ``root`` is the directory the application is imported from (the configuration's directory).
    Raises ``SourceError`` (code ``tree-unavailable``, ``isolation-unavailable`` or a file code)
    when it cannot be loaded.
    """
    judged = load_judged_tree(
        spec, root=root, display=display, timeout=timeout, program=program, containment=containment
    )
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
    containment: Containment | None = None,
    help_examples: bool = False,
    intermixed: bool = False,
) -> JudgedTree:
    """Load the tree, and have a live tree's own parser judge each of ``argvs``.

    ``intermixed``: an argparse program's parser judges with ``parse_intermixed_args``.

    With ``help_examples``, the child also judges the words of every example its tree's help
    texts show, which only it knows before the tree comes back.

    A live tree is imported in a child contained as ``containment`` says (default: the
    sandbox's ``auto`` decision; see :mod:`exampleguard._treechild`). ``paths`` are the command
    paths and aliases the catalog declares: a live Click group's own routing is probed for
    them, so aliases it resolves dynamically are in the tree. With a ``cache``, a live tree
    whose inputs are unchanged is not imported again (:mod:`exampleguard._treecache`); the key
    is computed here, from what the import can read, never from anything the child says.
    """
    if spec.framework == "snapshot":
        assert spec.path is not None
        document = load_document(spec.path, display, max_bytes=MAX_TREE_BYTES)
        check_format(document, TREE_FORMAT)
        return JudgedTree(validate_model(Tree, document, schema_key=True), document, {})
    contained = containment or Containment()
    unique = list(dict.fromkeys(tuple(argv) for argv in argvs))
    request: dict[str, Any] = {
        "argvs": [list(a) for a in unique],
        "paths": [list(p) for p in paths],
        "help_examples": help_examples,
    }
    if intermixed:
        # Only when asked: the questions of every other tree, and their cache keys, stay as
        # they were.
        request["intermixed"] = True

    def extract() -> tuple[str, list[Any]]:
        run = _extract_exec if spec.framework == "exec" else _extract
        return run(
            spec,
            root=root,
            timeout=timeout,
            program=program,
            request=request,
            containment=contained,
        )

    if cache is None:
        text, records = extract()
    else:
        identity = tree_identity(str(spec), root, contained.key(), program)
        if spec.framework == "exec":
            # The program run is named by its content, hashed here: never by what it says.
            identity["program_sha256"] = _program_digest(spec)
        text, records = cache.through(identity, request, import_inputs(root), extract)
    tree, document = _read_tree(spec, text)
    return JudgedTree(tree, document, _verdicts_of(spec, unique, records))


def _program_digest(spec: TreeSpec) -> str:
    """The SHA-256 of an ``exec`` tree's program file, read by exampleguard itself."""
    digest = hashlib.sha256()
    try:
        with Path(spec.command[0]).open("rb") as program:
            while chunk := program.read(1 << 20):
                digest.update(chunk)
    except OSError as error:
        raise SourceError(_missing_program(spec, error)) from None
    return digest.hexdigest()


def _missing_program(spec: TreeSpec, error: OSError) -> Diagnostic:
    return TREE_UNAVAILABLE.diagnostic(
        message=f"tree {spec}: the program {spec.command[0]} cannot be read: "
        f"{error.strerror or error}",
        hint="Build the program first (for a Go program: `go build -o bin/app .`); a relative "
        "PROGRAM is the project directory's.",
        location=Location(str(spec)),
    )


_PROTOCOL_WORD = "__exampleguard"


def _extract_exec(
    spec: TreeSpec,
    *,
    root: Path,
    timeout: float,
    program: str | None,
    request: dict[str, Any],
    containment: Containment,
) -> tuple[str, list[Any]]:
    """Ask a program that speaks the tree protocol for its tree, then for its verdicts.

    Two runs, each contained as a Python tree's import is: ``__exampleguard tree`` prints the
    snapshot; ``__exampleguard judge`` reads the argvs (the examples', then the help texts')
    one JSON array per line and answers one verdict per line. Both answers are data: read
    against the formats, never followed. The verdicts are kept in the records a Python tree's
    child sends, so that the cache and the rest of the run do not tell the two apart.
    """
    if not Path(spec.command[0]).is_file():
        raise SourceError(_missing_program(spec, FileNotFoundError(2, "No such file or directory")))
    run = _run_protocol(spec, root, "tree", None, timeout=timeout, containment=containment)
    text = run.stdout.decode("utf-8", errors="replace")
    tree, _ = _read_tree(spec, text)
    if program is not None and tree.program != program:
        # The catalog names the program as agents type it, as it names a Python tree's root.
        tree = tree.model_copy(update={"program": program})
        data = json.loads(text)
        data["program"] = program
        text = json.dumps(data, ensure_ascii=False)
    asked = [list(argv) for argv in request["argvs"]]
    helped: list[list[str]] = []
    if request["help_examples"]:
        seen = {tuple(argv) for argv in asked}
        helped = [a for a in help_argvs(tree.model_dump(mode="json")) if tuple(a) not in seen]
    records: list[Any] = []
    if asked or helped:
        lines = [json.dumps(a, ensure_ascii=True, separators=(",", ":")) for a in (*asked, *helped)]
        judged = _run_protocol(spec, root, "judge", lines, timeout=timeout, containment=containment)
        verdicts = _protocol_verdicts(spec, tree, judged.stdout, len(lines))
        records = [v.to_json() for v in verdicts[: len(asked)]]
        records += [
            {"help": {"argv": argv, "verdict": verdict.to_json()}}
            for argv, verdict in zip(helped, verdicts[len(asked) :], strict=True)
        ]
    return text, records


def _run_protocol(
    spec: TreeSpec,
    root: Path,
    request: str,
    lines: list[str] | None,
    *,
    timeout: float,
    containment: Containment,
) -> ExecRun:
    """One run of the program for ``request``; its failure as an error, its output as bytes."""
    with _start_errors(spec):
        run = run_exec(
            spec.command,
            request,
            root=root,
            lines=lines,
            timeout=timeout,
            containment=containment,
        )
    doing = f"`{_PROTOCOL_WORD} {request}`"
    _stopped_by_the_sandbox(
        spec,
        run.status,
        run.detail,
        timed_out=f"did not answer {doing} within {timeout:g} seconds",
        faster="make the program start faster",
        child="the program",
    )
    if run.too_large:
        limit = describe_size(treechild.MAX_FRAME_BYTES)
        raise SourceError(_unavailable(spec, f"answered {doing} with more than {limit}"))
    if run.exit_code != 0:
        ended = f"exited with status {run.exit_code}"
        if run.exit_code is None:
            ended = f"was killed ({run.detail})"
        raise SourceError(
            _unavailable(
                spec,
                f"{ended} answering {doing}{_stderr_tail(run.stderr)}",
                "The program must speak the exampleguard tree protocol: for a cobra program, "
                "`exampleguard init --cobra` writes the helper and says how to wire it.",
            )
        )
    return run


def _protocol_verdicts(
    spec: TreeSpec, tree: Tree, output: bytes, expected: int
) -> list[ParseVerdict]:
    """The verdict lines of a ``judge`` run, one per argv asked, as the pipeline's verdicts."""
    lines = output.decode("utf-8", errors="replace").splitlines()
    if len(lines) != expected:
        raise SourceError(
            _unavailable(
                spec, f"answered {len(lines)} verdict line(s) for {expected} command line(s)"
            )
        )
    verdicts = []
    for number, line in enumerate(lines, start=1):
        try:
            record = JudgeVerdict.model_validate(json.loads(line))
            verdicts.append(_as_parse_verdict(tree, record))
        except ValueError as error:
            # A pydantic ValidationError and a JSON error are both ValueErrors.
            reason = str(error).splitlines()[0]
            raise SourceError(
                _unavailable(spec, f"sent a verdict (line {number}) that does not read: {reason}")
            ) from None
    return verdicts


def _as_parse_verdict(tree: Tree, record: JudgeVerdict) -> ParseVerdict:
    """A protocol verdict as the pipeline's: each given name placed at the level declaring it.

    A name is the command's own parameter, else the nearest ancestor's persistent one, else an
    ancestor's own (a parent's flags parsed on the way down). An accepted verdict that gives a
    parameter the tree declares eager the value true (``--help``) ended at it, as a Python
    parser's would.
    """
    path = tuple(record.path) if record.path is not None else None
    given: list[GivenValue] = []
    eager = False
    if path is not None and record.given:
        if tree.command(path) is None:
            raise ValueError(f"its path {list(path)} is not a command of the tree")
        for name, value in record.given.items():
            level, parameter = _declared(tree, path, name)
            # Given ``--help=false``, help is given and does not end the parse.
            eager = eager or (parameter.eager and value is True)
            given.append(GivenValue(level, name, _shaped(parameter, value)))
    return ParseVerdict(
        accepted=record.accepted,
        path=path,
        error=None if record.accepted else "ProtocolError",
        message=record.error,
        eager=record.accepted and eager,
        given=tuple(given) if record.accepted else (),
    )


def _shaped(parameter: Parameter, value: Any) -> Any:
    """A positional's words as an argument object holds them: one value where it takes one."""
    single = parameter.positional and parameter.values_per_occurrence == 1
    if single and isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


def _declared(tree: Tree, path: tuple[str, ...], name: str) -> tuple[tuple[str, ...], Parameter]:
    """The level of ``path`` (itself or an ancestor) that declares the parameter ``name``."""
    ancestors = [path[:depth] for depth in range(len(path) - 1, -1, -1)]
    searches = [([path], False), (ancestors, True), (ancestors, False)]
    for levels, persistent_only in searches:
        for level in levels:
            command = tree.command(level)
            for parameter in command.parameters if command is not None else ():
                if parameter.name == name and (parameter.persistent or not persistent_only):
                    return level, parameter
    raise ValueError(f"it gives {name!r}, which no command on its path declares")


def _read_tree(spec: TreeSpec, text: str) -> tuple[Tree, Document]:
    """The tree a child sent, validated."""
    try:
        document = parse_document(text, Path(f"<{spec}>"), str(spec), "json")
        check_format(document, TREE_FORMAT)
        tree = validate_model(Tree, document)
    except SourceError as error:
        raise SourceError(_unavailable(spec, f"produced an invalid snapshot: {error}")) from None
    return tree, document


def _verdicts_of(
    spec: TreeSpec, unique: list[tuple[str, ...]], records: list[Any]
) -> dict[tuple[str, ...], ParseVerdict]:
    """Each asked argv's verdict, then each help example's, from a child's verdict records."""
    try:
        verdicts = [ParseVerdict.from_json(record) for record in records[: len(unique)]]
        if len(verdicts) != len(unique):
            raise SourceError(_unavailable(spec, "did not judge every example"))
        judged = dict(zip(unique, verdicts, strict=True))
        # After the asked argvs come the help examples' own, each with its words.
        for record in records[len(unique) :]:
            helped = record["help"]
            judged.setdefault(tuple(helped["argv"]), ParseVerdict.from_json(helped["verdict"]))
    except (KeyError, TypeError, ValueError) as error:
        raise SourceError(_unavailable(spec, f"sent verdicts that do not read: {error}")) from None
    return judged


def _extract(
    spec: TreeSpec,
    *,
    root: Path,
    timeout: float,
    program: str | None,
    request: dict[str, Any],
    containment: Containment,
) -> tuple[str, list[Any]]:
    """Run the child once; its tree text and verdict records, or its failure as an error."""
    with _start_errors(spec):
        run = run_child(
            spec.framework,
            spec.module,
            spec.attribute,
            root=root,
            program=program,
            request=request,
            timeout=timeout,
            containment=containment,
        )
    _stopped_by_the_sandbox(
        spec,
        run.status,
        run.detail,
        timed_out=f"did not finish importing within {timeout:g} seconds",
        faster="make the import do less",
        child="the import",
    )
    tree = run.frames.get(_TREE)
    if tree is None or run.too_large or _ERROR in run.frames:
        raise SourceError(_unavailable(spec, *_child_failure(run)))
    records: list[Any] = []
    if request["argvs"] or request["help_examples"]:
        judged = run.frames.get(_VERDICTS)
        if judged is None:
            raise SourceError(_unavailable(spec, *_child_failure(run)))
        try:
            data = json.loads(judged)
            records = [*data["verdicts"], *({"help": h} for h in data["help"])]
        except (ValueError, KeyError, TypeError) as error:
            raise SourceError(
                _unavailable(spec, f"sent verdicts that do not read: {error}")
            ) from None
    return tree.decode("ascii", errors="replace"), records


def _stopped_by_the_sandbox(
    spec: TreeSpec, status: str, detail: str | None, *, timed_out: str, faster: str, child: str
) -> None:
    """Raise the error of a run the sandbox timed out or could not start; else nothing."""
    if status == "timed-out":
        raise SourceError(_unavailable(spec, timed_out, f"Raise `tree_timeout`, or {faster}."))
    if status == "not-started":
        # Told by the sandbox's own side only: the child never ran. Nothing else is tried.
        raise SourceError(_unavailable(spec, f"the sandbox could not start {child}: {detail}"))


_TREE, _VERDICTS, _ERROR = b"T", b"V", b"E"
_STDERR_TAIL_LINES = 3


def _child_failure(run: ChildRun) -> tuple[str, str | None]:
    """Why a child sent no usable answer, and a hint when the cause is known."""
    if run.too_large:
        limit = describe_size(treechild.MAX_FRAME_BYTES)
        return (f"produced an answer larger than the {limit} limit", None)
    tail = _stderr_tail(run.stderr)
    error = run.frames.get(_ERROR)
    if error is not None:
        try:
            report = json.loads(error)
        except json.JSONDecodeError:
            report = None
        if isinstance(report, dict) and isinstance(message := report.get("error"), str):
            return message + tail, _hint_for(message)
    ended = f"exited with status {run.exit_code}"
    if run.exit_code is None:
        ended = f"was killed ({run.detail})"
        name = (run.detail or "").removeprefix("killed by ")
        if name in signal.Signals.__members__:
            ended = f"was killed by signal {signal.Signals[name].value}"
    if _TREE in run.frames:
        return f"{ended} while judging the examples{tail}", None
    return f"{ended} while importing, before producing a tree{tail}", None


def _stderr_tail(stderr: str) -> str:
    """The last lines the import wrote on its standard error, as data for a message."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return ": " + " / ".join(lines[-_STDERR_TAIL_LINES:])


def _hint_for(message: str) -> str | None:
    if "[tool.exampleguard.tree_env]" in message:
        return (
            "Add the variable to [tool.exampleguard.tree_env] with a placeholder value; the "
            "import never sees the caller's environment."
        )
    if "ModuleNotFoundError" in message or "was not found" in message:
        return (
            "The child imports with this interpreter from the configuration's directory and "
            "the import path listed; install the package into this environment (an editable "
            "install of a sibling package works), or set PYTHONPATH."
        )
    if "tree_isolation" in message:
        return 'Use tree_isolation = "auto": the sandbox lets the import do what it contains.'
    return None


@contextlib.contextmanager
def _start_errors(spec: TreeSpec) -> Iterator[None]:
    """A child that cannot be started here, as the error that says why (for every kind of tree)."""
    import sandbox  # noqa: PLC0415 - a snapshot or a cached tree needs none of it

    try:
        yield
    except sandbox.IsolationUnavailable as error:
        raise SourceError(_isolation_unavailable(spec, error)) from None
    except sandbox.PassEnvError as error:
        raise SourceError(
            _unavailable(spec, f"tree_env: {error}", "Set only plain placeholder variables.")
        ) from None
    except OSError as error:
        raise SourceError(_unavailable(spec, f"could not be started: {error}")) from None


def _isolation_unavailable(spec: TreeSpec, error: sandbox.IsolationUnavailable) -> Diagnostic:
    what, nothing = ("the import of a live tree", "nothing was imported")
    if spec.framework == "exec":
        what, nothing = ("a tree protocol program", "nothing was run")
    return ISOLATION_UNAVAILABLE.diagnostic(
        message=f"tree {spec}: {what} runs in the dry runs' sandbox, and "
        f"{str(error).removeprefix('isolation-unavailable: ')}; {nothing}",
        hint="Run where that sandbox works (`exampleguard sandbox` tells what this host "
        "refuses), commit a tree snapshot (`exampleguard tree --format json`), or set "
        'tree_isolation = "guard" knowingly: the import then runs unsandboxed, under a guard.',
        location=Location(str(spec)),
    )


def _unavailable(spec: TreeSpec, reason: str, hint: str | None = None) -> Diagnostic:
    return TREE_UNAVAILABLE.diagnostic(
        message=f"tree {spec}: {reason}",
        hint=hint
        or (
            "The program runs in the sandbox from the configuration's directory, as "
            "`PROGRAM __exampleguard tree` and `... judge`; the message says what it did."
            if spec.framework == "exec"
            else "The tree is imported in a child process from the configuration's directory; "
            "the message says what the import did."
        ),
        location=Location(str(spec)),
    )
