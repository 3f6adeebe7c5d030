"""Where a run's files are: its configuration file, its repository, and paths as outputs show them.

Kept apart from :mod:`exampleguard.config` (which validates the configuration with pydantic) so
that finding the configuration does not import the models.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "DEFAULT_TREE_TIMEOUT",
    "MAX_SECONDS",
    "PYPROJECT",
    "TOOL_FILE",
    "config_source",
    "display_path",
    "find_config",
    "repository_root",
    "settings_in_tool_table",
]

TOOL_FILE = "exampleguard.toml"
PYPROJECT = "pyproject.toml"

DEFAULT_TREE_TIMEOUT = 60.0
"""Seconds a live tree's import may take unless ``tree_timeout`` says otherwise."""
MAX_SECONDS = 86_400
"""The longest time limit a setting may give: a day."""


def settings_in_tool_table(source: Path, data: object) -> bool:
    """Whether the settings of ``source`` (read as ``data``) are its ``[tool.exampleguard]``.

    So in a ``pyproject.toml``, and in any other TOML file with a ``tool`` table but the
    ``exampleguard.toml`` that holds them at its top level.
    """
    if source.name == PYPROJECT:
        return True
    return (
        source.suffix == ".toml"
        and isinstance(data, dict)
        and "tool" in data
        and source.name != TOOL_FILE
    )


def find_config(start: Path) -> Path | None:
    """Find the configuration file by walking up from ``start`` (SPEC section 3.1)."""
    for directory in (start, *start.parents):
        candidate = directory / TOOL_FILE
        if candidate.is_file():
            return candidate
        pyproject = directory / PYPROJECT
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def config_source(explicit: Path | None, cwd: Path) -> Path | None:
    """The configuration file a run uses; ``None`` when there is none.

    ``explicit`` (``--config``, relative to ``cwd``) if it exists, else the one found from ``cwd``.
    """
    if explicit is None:
        return find_config(cwd)
    source = explicit if explicit.is_absolute() else cwd / explicit
    return source if source.exists() else None


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
