"""``exampleguard tree``: the executable command tree exampleguard sees."""

from __future__ import annotations

import json
from pathlib import Path

from exampleguard._catalogfile import load_catalog
from exampleguard._codes import CONFIG_INVALID
from exampleguard._commands._outcome import TextOutcome, refuse
from exampleguard._config import Config, ConfigError, load_config
from exampleguard._documents import SourceError
from exampleguard._report.tree import render_tree
from exampleguard._tree import Containment, containment_of, load_judged_tree, parse_tree_spec

__all__ = ["show_tree"]


def show_tree(
    config_path: Path | None,
    spec_text: str | None,
    *,
    as_json: bool,
    program: str | None,
    color: bool,
) -> TextOutcome:
    """``exampleguard tree``: the tree named by ``spec_text`` or by the configuration."""
    root = Path.cwd()
    timeout = 60.0
    paths: list[list[str]] = []
    containment = Containment()
    if spec_text is None:
        try:
            config = load_config(config_path, root)
        except ConfigError as error:
            return TextOutcome(unusable=[error.diagnostic])
        if config.settings.tree is None:
            return refuse(
                CONFIG_INVALID,
                f"{config.document.display} configures no `tree`; pass --tree SPEC",
                config.region(),
            )
        spec_text, root, timeout = (
            config.settings.tree,
            config.root,
            config.settings.tree_timeout,
        )
        containment = containment_of(config.settings)
        catalog_program, paths = _catalog_program(config)
        if program is None:
            program = catalog_program
    try:
        spec = parse_tree_spec(spec_text, root)
    except ValueError as error:
        return refuse(CONFIG_INVALID, str(error))
    try:
        # The catalog's declared paths are probed, so the snapshot carries the aliases a group
        # routes dynamically.
        loaded = load_judged_tree(
            spec,
            root=root,
            display=spec_text,
            timeout=timeout,
            program=program,
            paths=paths,
            containment=containment,
        ).tree
    except SourceError as error:
        return TextOutcome(unusable=[error.diagnostic])
    if as_json:
        data = loaded.model_dump(mode="json", exclude_defaults=True)
        data["format"] = loaded.format
        for command in data.get("commands", ()):
            for example in command.get("help_examples", ()):
                # A snapshot locates its help examples at its own entries; where the live run
                # found them in the Python source (an absolute path for an installed package)
                # would only make the committed snapshot change whenever a line moves.
                example.pop("source", None)
        return TextOutcome(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return TextOutcome(render_tree(loaded, color=color))


def _catalog_program(config: Config) -> tuple[str | None, list[list[str]]]:
    # The tree's own name for the program is a guess (a function or module name); the catalog
    # knows what agents type, and which command paths and aliases it declares.
    try:
        catalog = load_catalog(config.catalog_path, config.display(config.catalog_path)).catalog
    except SourceError:
        return None, []
    paths = [list(words) for tool in catalog.tools for words in (tool.command, *tool.aliases)]
    return catalog.program, paths
