"""Configuration: ``[tool.exampleguard]`` in ``pyproject.toml`` or an ``exampleguard.toml``.

Discovery walks up from the working directory; in each directory an ``exampleguard.toml`` wins
over a ``pyproject.toml`` that has a ``[tool.exampleguard]`` table, and the first one found is
used. ``--config PATH`` names the file explicitly. Relative paths in the configuration resolve
against the directory of the file that holds them.
"""

# No ``from __future__ import annotations``: see exampleguard/_model.py.
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints

from exampleguard._codes import CONFIG_INVALID
from exampleguard._diagnostics import Diagnostic, Location
from exampleguard._docshell import DEFAULT_PROMPTS
from exampleguard._documents import Document, KeyRegion, SourceError, load_document, validate_model
from exampleguard._model import NonEmpty, StrictModel, empty_dict, empty_list
from exampleguard._textindex import KeyPath

__all__ = [
    "DEFAULT_BYPASS_FLAGS",
    "DEFAULT_DOCS",
    "DEFAULT_DOC_PROMPTS",
    "ArgvRewrite",
    "Config",
    "ConfigError",
    "DryRunSettings",
    "Settings",
    "display_path",
    "find_config",
    "load_config",
    "repository_root",
]

DEFAULT_BYPASS_FLAGS = ("--yes", "--assume-yes", "--no-confirm")
DEFAULT_DOCS = (
    "README.md",
    "README.rst",
    "AGENTS.md",
    "CLAUDE.md",
    "llms.txt",
    "docs/**/*.md",
    "docs/**/*.rst",
    "**/SKILL.md",
)
"""The Markdown files whose examples are checked unless ``docs`` says otherwise."""
DEFAULT_DOC_PROMPTS = DEFAULT_PROMPTS
"""The prompts a documented command line may start with unless ``doc_prompts`` says otherwise."""
_TOOL_FILE = "exampleguard.toml"
_PYPROJECT = "pyproject.toml"

DEFAULT_TREE_TIMEOUT = 60.0
"""Seconds a live tree's import may take unless ``tree_timeout`` says otherwise."""
MAX_SECONDS = 86_400
"""The longest time limit a setting may give: a day."""

ReasonCode = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")]
# Seconds: positive, finite, and at most a day (an infinite timeout is no timeout).
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
PositiveInt = Annotated[int, Field(gt=0)]
CodeKind = Literal["fenced", "indented", "inline"]


def _not_continuation(prompt: str) -> str:
    if prompt == ">":
        raise ValueError("'>' is the continuation prompt of a session; it starts no command")
    return prompt


# A prompt is what a terminal shows before the command (`$`, `%`, `>>>`, `PS>`): printable,
# without blanks (the reader takes it followed by one), and not `>`, the continuation prompt.
Prompt = Annotated[
    str, StringConstraints(pattern=r"^[^\s]{1,16}$"), AfterValidator(_not_continuation)
]


def _inside_project(pattern: str) -> str:
    # Every documentation file is shown and excepted by its path under the
    # configuration's folder: a glob that leaves it names files of some other project.
    parts = PurePosixPath(pattern).parts
    if pattern.startswith("/"):
        raise ValueError(
            f"{pattern!r} is an absolute path; docs globs are relative to the configuration file"
        )
    if ".." in parts:
        raise ValueError(
            f"{pattern!r} leaves the configuration's folder; docs globs name files inside it"
        )
    return pattern


DocGlob = Annotated[NonEmpty, AfterValidator(_inside_project)]


def _guarantee_names() -> list[str]:
    # Imported when a configuration names guarantees (or the schema is written): every command
    # reads the configuration, and most never start a sandbox.
    import sandbox  # noqa: PLC0415

    return [guarantee.value for guarantee in sandbox.Guarantee]


def _known_guarantee(name: str) -> str:
    known = _guarantee_names()
    if name not in known:
        raise ValueError(f"{name!r} is not a sandbox guarantee; one of: {', '.join(known)}")
    return name


def _guarantee_schema(schema: dict[str, Any]) -> None:
    schema["enum"] = _guarantee_names()


GuaranteeName = Annotated[
    str, AfterValidator(_known_guarantee), Field(json_schema_extra=_guarantee_schema)
]
"""The name of a :class:`sandbox.Guarantee` (``read-only-root``, ``landlock-fs``, ...)."""


EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""The name of an environment variable: letters, digits and underscores, not a digit first."""


class DryRunSettings(StrictModel):
    """``[tool.exampleguard.dryrun]``: how eligible examples are executed."""

    # An empty argv prefix would leave nothing to run.
    executable: Annotated[list[NonEmpty], Field(min_length=1)] | NonEmpty | None = None
    timeout: Seconds = 30.0
    jobs: PositiveInt | None = None
    isolation: Literal["auto", "namespace", "landlock", "unshare", "env"] = "auto"
    pass_env: list[NonEmpty] = Field(default_factory=empty_list)
    fixtures: NonEmpty | None = None
    memory_mb: PositiveInt | None = None
    max_processes: PositiveInt | None = None
    # The sandbox holds each stream's capture in memory: at most 64 MiB (sandbox.MAX_OUTPUT_BYTES).
    output_kb: Annotated[int, Field(gt=0, le=65536)] = 1024
    require: list[GuaranteeName] = Field(default_factory=empty_list)
    """Guarantees every run must get; a backend that cannot give them all is
    ``isolation-unavailable`` (exit 2, nothing run)."""


class ArgvRewrite(StrictModel):
    """``[tool.exampleguard.argv_rewrite]``: how the program changes its argv before parsing.

    ``note`` says in words what the program does (tox moves its command word to the front,
    ansible-galaxy inserts ``role``): a word in command position that the parser does not know
    is then ``argv-rewritten``, with the note, not a plain ``unknown-command``.
    ``unparsed_after`` is a word from which on the program keeps the command line for itself
    (tox gives the words after ``--`` to the test command): the parser, the model's and the
    live one, never sees that word or any after it.
    """

    note: NonEmpty
    unparsed_after: NonEmpty | None = None

    def parsed(self, words: Sequence[str]) -> list[str]:
        """The part of ``words`` (after the program) that reaches the program's parser."""
        cut = self.unparsed_after
        if cut is None or cut not in words:
            return list(words)
        return list(words[: list(words).index(cut)])


class Settings(StrictModel):
    """The keys of ``[tool.exampleguard]`` (SPEC section 3.1).

    ``tree_timeout`` (seconds allowed for importing the application's tree) and ``pytest``
    (collect examples as test items without ``--exampleguard``) are additions to the SPEC
    table, and so are ``docs`` (globs of the Markdown files whose command examples are
    checked; ``[]`` turns them off), ``docs_code`` (which kinds of Markdown code hold examples),
    ``doc_prompts`` (the prompts a command line of the docs may start with),
    ``help_examples`` (check the command lines of the tree's help texts; ``false`` turns
    them off), ``argparse_parse`` (``parse_intermixed_args`` for a program that parses that
    way) and ``argv_rewrite`` (how the program rewrites its argv before parsing).
    """

    catalog: NonEmpty
    tree: NonEmpty | None = None
    dispositions: NonEmpty = "dispositions"
    counts: NonEmpty = "exampleguard-counts.json"
    bypass_flags: list[NonEmpty] = Field(default_factory=lambda: list(DEFAULT_BYPASS_FLAGS))
    reason_codes: dict[ReasonCode, NonEmpty] = Field(default_factory=empty_dict)
    max_example_chars: PositiveInt = 4096
    tree_timeout: Seconds = DEFAULT_TREE_TIMEOUT
    tree_isolation: Literal["auto", "guard"] = "auto"
    tree_env: dict[EnvName, str] = Field(default_factory=empty_dict)
    """Variables set for the import of a live tree only: committed placeholder values that an
    application needs at import time, never secrets; nothing of the caller's environment
    reaches the import."""
    pytest: bool = False
    docs: list[DocGlob] = Field(default_factory=lambda: list(DEFAULT_DOCS))
    docs_code: list[CodeKind] = Field(default_factory=lambda: list[CodeKind](["fenced"]))
    doc_prompts: Annotated[list[Prompt], Field(min_length=1)] = Field(
        default_factory=lambda: list(DEFAULT_DOC_PROMPTS)
    )
    """The prompts a documented command line may start with, each followed by a blank."""
    help_examples: bool = True
    argparse_parse: Literal["parse_args", "parse_intermixed_args"] = "parse_args"
    """Which parse method of its ``ArgumentParser`` an argparse program calls: examples are
    judged, by the model and by the live parser, as that method parses them."""
    argv_rewrite: ArgvRewrite | None = None
    """``[tool.exampleguard.argv_rewrite]``: the program rewrites its argv before its parser
    reads it."""
    dryrun: DryRunSettings = Field(default_factory=DryRunSettings)


@dataclass(frozen=True, slots=True)
class Config:
    """Validated settings plus where they came from, with every path made absolute.

    ``cwd`` is where the run started: every path an output shows is relative to it.
    """

    settings: Settings
    source: Path
    root: Path
    document: Document
    table: KeyPath
    cwd: Path
    tree_cache: bool = True
    """Whether a live tree may come from the tree cache (``--no-cache`` turns it off)."""

    @property
    def catalog_path(self) -> Path:
        """The catalog file."""
        return self.root / self.settings.catalog

    @property
    def dispositions_path(self) -> Path:
        """The dispositions folder."""
        return self.root / self.settings.dispositions

    @property
    def counts_path(self) -> Path:
        """The committed counts file."""
        return self.root / self.settings.counts

    def display(self, path: Path) -> str:
        """``path`` as every output shows it: relative to the current directory (see below)."""
        return display_path(path, self.cwd)

    def region(self, *key: str | int) -> KeyRegion:
        """Where ``key`` of the exampleguard table is in the configuration file.

        Left for the report builder to place in lines and columns.
        """
        return self.document.region((*self.table, *key))


class ConfigError(Exception):
    """The configuration cannot be found or used; ``diagnostic`` says why and where."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _settings_in_tool_table(source: Path, data: object) -> bool:
    """Whether the settings of ``source`` (read as ``data``) are its ``[tool.exampleguard]``.

    So in a ``pyproject.toml``, and in any other TOML file with a ``tool`` table but the
    ``exampleguard.toml`` that holds them at its top level.
    """
    if source.name == _PYPROJECT:
        return True
    return (
        source.suffix == ".toml"
        and isinstance(data, dict)
        and "tool" in data
        and source.name != _TOOL_FILE
    )


def find_config(start: Path) -> Path | None:
    """Find the configuration file by walking up from ``start`` (SPEC section 3.1)."""
    for directory in (start, *start.parents):
        candidate = directory / _TOOL_FILE
        if candidate.is_file():
            return candidate
        pyproject = directory / _PYPROJECT
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _has_tool_table(pyproject: Path) -> bool:
    import tomllib  # noqa: PLC0415 - only needed while searching

    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        # A broken pyproject.toml is reported when it is the one in use, not while searching
        # (tomllib recurses once per nested array or inline table).
        return "[tool.exampleguard" in _safe_read(pyproject)
    tool = data.get("tool")
    return isinstance(tool, dict) and "exampleguard" in tool


def _safe_read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def display_path(path: Path, cwd: Path) -> str:
    """``path`` as outputs show it: relative to ``cwd`` when inside it, else absolute.

    Like ruff, every output names files from where the command was started, so that a run from a
    monorepo's root says ``packages/tool/agent-catalog.json``: what an editor, a terminal and a
    GitHub annotation (whose workflow runs from the repository root) can open.
    """
    absolute = path if path.is_absolute() else cwd / path
    for base in dict.fromkeys((cwd, cwd.resolve())):
        if absolute.is_relative_to(base):
            return absolute.relative_to(base).as_posix()
    return str(absolute)


def repository_root(start: Path) -> Path:
    """The repository ``start`` is in (the nearest folder with ``.git``), else ``start`` itself.

    ``.git`` may be a folder or, in a worktree or a submodule, a file: either marks the root.
    """
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def load_config(explicit: Path | None, cwd: Path) -> Config:
    """Load the configuration named by ``explicit``, or found from ``cwd``.

    Raises :class:`ConfigError` with a ``config-invalid`` (or file) diagnostic naming the file
    and the key that is wrong.
    """
    if explicit is not None:
        source = explicit if explicit.is_absolute() else cwd / explicit
        if not source.exists():
            raise ConfigError(_config_error(f"configuration file {explicit} does not exist", None))
    else:
        found = find_config(cwd)
        if found is None:
            raise ConfigError(
                _config_error(
                    f"no configuration found: looked for {_TOOL_FILE}, or a [tool.exampleguard] "
                    f"table in {_PYPROJECT}, in {cwd} and every directory above it",
                    None,
                    hint="Run `exampleguard init --tree SPEC` to create one, or pass --config.",
                )
            )
        source = found
    source = source.resolve()
    display = display_path(source, cwd)
    try:
        document = load_document(source, display)
    except SourceError as error:
        raise ConfigError(error.diagnostic) from None
    table: KeyPath
    if _settings_in_tool_table(source, document.data):
        table = ("tool", "exampleguard")
        tool = document.data.get("tool")
        data = tool.get("exampleguard") if isinstance(tool, dict) else None
        if not isinstance(data, dict):
            raise ConfigError(
                _config_error(
                    f"{display} has no [tool.exampleguard] table",
                    Location(display),
                    hint="Add a [tool.exampleguard] table with at least `catalog = ...`.",
                )
            )
    else:
        table = ()
        data = document.data
    try:
        settings = validate_model(Settings, document, key=table, data=data)
    except SourceError as error:
        raise ConfigError(_as_config_error(error.diagnostic)) from None
    return Config(settings, source, source.parent, document, table, cwd)


def _as_config_error(diagnostic: Diagnostic) -> Diagnostic:
    return CONFIG_INVALID.diagnostic(
        message=diagnostic.message,
        hint="docs/configuration.md lists every key with its type and default.",
        location=diagnostic.location,
        region=diagnostic.region,
    )


def _config_error(
    message: str, location: Location | None, *, hint: str | None = None
) -> Diagnostic:
    return CONFIG_INVALID.diagnostic(
        message=message,
        hint=hint,
        location=location,
    )
