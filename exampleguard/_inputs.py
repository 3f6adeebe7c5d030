"""The first stage of a run: every file it needs, read and structurally valid.

:func:`load_inputs` reads the catalog, the documents, the tree (asking a live tree's own parser
about every example), the reviewer records and the counts, and raises :class:`InputError` with
*all* the structure errors it found, so that a run that cannot be evaluated says everything at
once (exit 2) before anything is checked. :mod:`exampleguard._pipeline` checks what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from exampleguard._argfiles import ArgumentFile, read_argument_files
from exampleguard._catalogfile import LoadedCatalog, load_catalog
from exampleguard._codes import CONFIG_INVALID, FILE_INVALID, TREE_UNAVAILABLE
from exampleguard._config import ArgvRewrite, Config
from exampleguard._diagnostics import Diagnostic
from exampleguard._documents import Document, SourceError
from exampleguard._model import spoken_dialects
from exampleguard._snapshot import Tree
from exampleguard._sources import Examples, LoadedTree, SourceContext, load_examples
from exampleguard._tokenize import Tokens, tokenize
from exampleguard._tree import (
    JudgedTree,
    TreeSpec,
    Verdicts,
    containment_of,
    load_judged_tree,
    parse_tree_spec,
)
from exampleguard._treecache import TreeCache

if TYPE_CHECKING:
    from exampleguard._counts import Counts
    from exampleguard._dispositions.records import LoadedDispositions

__all__ = ["InputError", "Inputs", "load_inputs", "tree_error"]


class InputError(Exception):
    """The run cannot be evaluated; ``diagnostics`` lists every reason found (exit 2)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass(slots=True)
class Inputs:
    """Every file a run needs, read and structurally valid.

    ``verdicts`` holds, for a live tree, the framework's own verdict on each example's argv.
    """

    config: Config
    catalog: LoadedCatalog
    tree: Tree | None
    records: LoadedDispositions
    counts: tuple[Counts, Document] | None
    examples: Examples = field(default_factory=Examples)
    """Every example of the run, from every source, as records that locate themselves."""
    verdicts: Verdicts = field(default_factory=dict)
    tokens: dict[str, Tokens] = field(default_factory=dict)
    """Example texts already tokenized (to ask a live tree about them), each taken once."""
    argument_files: dict[str, ArgumentFile] = field(default_factory=dict)
    """The ``@file`` arguments the examples name (argparse's ``fromfile_prefix_chars``), read
    from the project here so that checking opens no file."""


def load_inputs(config: Config, *, with_counts: bool = True) -> Inputs:
    """Read every file the run needs; raise :class:`InputError` listing every structure error."""
    errors: list[Diagnostic] = []
    catalog: LoadedCatalog | None = None
    examples = Examples()
    try:
        catalog = load_catalog(config.catalog_path, config.display(config.catalog_path))
        examples = load_examples(SourceContext(config, catalog))
    except SourceError as error:
        errors.append(error.diagnostic)
    judged = _load_tree(config, catalog, examples, errors)
    return _load_the_rest(config, catalog, examples, errors, judged, with_counts=with_counts)


def _load_the_rest(
    config: Config,
    catalog: LoadedCatalog | None,
    examples: Examples,
    errors: list[Diagnostic],
    judged: _Judged | None,
    *,
    with_counts: bool,
) -> Inputs:
    """What :func:`load_inputs` reads once the tree is loaded."""
    from exampleguard._counts import load_counts  # noqa: PLC0415
    from exampleguard._dispositions.load import all_errors, load_dispositions  # noqa: PLC0415
    from exampleguard._dispositions.records import LoadedDispositions  # noqa: PLC0415

    records = LoadedDispositions()
    counts: tuple[Counts, Document] | None = None
    tree, verdicts = (judged[0].tree, judged[0].verdicts) if judged is not None else (None, {})
    if judged is not None and catalog is not None:
        # The help text's examples come with the tree: read once it is loaded.
        loaded = LoadedTree(
            judged[0].tree, judged[0].document, judged[1].framework != "snapshot", judged[2]
        )
        try:
            examples = examples.merge(load_examples(SourceContext(config, catalog, loaded)))
        except SourceError as error:
            errors.append(error.diagnostic)
    try:
        records = load_dispositions(
            config.dispositions_path, config.root, config.display(config.dispositions_path)
        )
    except SourceError as error:
        errors.extend(all_errors(error))
    if with_counts:
        try:
            counts = load_counts(config.counts_path, config.display(config.counts_path))
        except SourceError as error:
            errors.append(error.diagnostic)
    if errors or catalog is None:
        raise InputError(errors)
    tokens = judged[3] if judged is not None else {}
    argument_files = _argument_files(config, tree, examples, tokens)
    return Inputs(
        config, catalog, tree, records, counts, examples, verdicts, tokens, argument_files
    )


def _argument_files(
    config: Config, tree: Tree | None, examples: Examples, tokens: dict[str, Tokens]
) -> dict[str, ArgumentFile]:
    """Every ``@file`` the examples name, for a tree whose parsers read them, by name.

    Read relative to the configuration's folder, where the program is run from (SPEC 4).
    """
    if tree is None:
        return {}
    chars = "".join(
        dict.fromkeys(
            char
            for command in tree.commands
            for char in command.settings.fromfile_prefix_chars or ""
        )
    )
    if not chars:
        return {}
    commands = []
    for record in (*examples, *examples.named):
        text = record.checked_text
        tokenized = tokens.get(text)
        if tokenized is None:
            tokenized = tokens[text] = tokenize(text)
        commands.append([word.text for word in tokenized.words[1:]])
    return read_argument_files(config.root, commands, chars)


_Judged = tuple[JudgedTree, TreeSpec, str, dict[str, Tokens]]
"""A loaded tree with its verdicts, its spec, its name, and the example texts tokenized."""


def _load_tree(
    config: Config,
    catalog: LoadedCatalog | None,
    examples: Examples,
    errors: list[Diagnostic],
) -> _Judged | None:
    """The configured tree with, for a live one, the framework's verdicts; its spec and name.

    ``None`` without a tree; notes in ``errors`` why the tree cannot be loaded.
    """
    settings = config.settings
    if settings.tree is None:
        if catalog is not None and catalog.catalog.dialect is None:
            errors.append(
                FILE_INVALID.diagnostic(
                    message=f"{catalog.document.display}: missing required key 'dialect' "
                    f"({spoken_dialects()}): with no tree configured, the catalog must say whose "
                    "parsing rules its examples follow",
                    region=catalog.document.region(),
                )
            )
        return None
    try:
        spec = parse_tree_spec(settings.tree, config.root)
    except ValueError as error:
        errors.append(CONFIG_INVALID.diagnostic(str(error), region=config.region("tree")))
        return None
    display = config.display(spec.path) if spec.path is not None else str(spec)
    # Only a live tree's own parser is asked about the examples; a snapshot's model judges them.
    live = spec.framework != "snapshot"
    argvs: list[list[str]] = []
    paths: list[list[str]] = []
    tokens: dict[str, Tokens] = {}
    if catalog is not None and live:
        argvs, paths = _questions(catalog, examples, tokens, settings.argv_rewrite)
    try:
        judged = load_judged_tree(
            spec,
            root=config.root,
            display=display,
            timeout=settings.tree_timeout,
            program=catalog.catalog.program if catalog else None,
            argvs=argvs,
            paths=paths,
            cache=TreeCache() if config.tree_cache else None,
            containment=containment_of(settings),
            help_examples=settings.help_examples,
            intermixed=settings.argparse_parse == "parse_intermixed_args",
        )
    except SourceError as error:
        errors.append(tree_error(config, error))
        return None
    if settings.argparse_parse == "parse_intermixed_args":
        intermixed = _intermixed(config, judged.tree, errors)
        if intermixed is None:
            return None
        judged = replace(judged, tree=intermixed)
    return judged, spec, display, tokens


def _intermixed(config: Config, tree: Tree, errors: list[Diagnostic]) -> Tree | None:
    """``tree`` with its root parsed by ``parse_intermixed_args``, or ``None`` if it cannot be.

    argparse itself refuses (``TypeError``) a parser with subcommands or a ``REMAINDER``
    positional; the setting is wrong for such a tree, not every example.
    """
    refused = None
    if tree.dialect != "argparse":
        refused = f"the tree's dialect is {tree.dialect}, and only argparse has that method"
    root = next((command for command in tree.commands if not command.path), None)
    if root is not None and refused is None:
        if any(command.path for command in tree.commands):
            refused = "the parser has subcommands, which parse_intermixed_args refuses"
        elif any(p.positional and p.nargs == "..." for p in root.parameters):
            refused = "a positional takes the remainder (nargs=REMAINDER), which it refuses"
    if refused is not None or root is None:
        errors.append(
            CONFIG_INVALID.diagnostic(
                f'argparse_parse = "parse_intermixed_args": {refused or "the tree has no root"}',
                region=config.region("argparse_parse"),
            )
        )
        return None
    settings = root.settings.model_copy(update={"intermixed": True})
    commands = [
        command.model_copy(update={"settings": settings}) if command is root else command
        for command in tree.commands
    ]
    return tree.model_copy(update={"commands": commands})


def tree_error(config: Config, error: SourceError) -> Diagnostic:
    """The diagnostic of a tree that cannot be loaded, located at the configuration's setting."""
    diagnostic = error.diagnostic
    if diagnostic.code == TREE_UNAVAILABLE.name:
        # Point at the setting people edit, not at the spec string.
        diagnostic = replace(diagnostic, location=None, region=config.region("tree"))
    return diagnostic


def _questions(
    loaded: LoadedCatalog,
    examples: Examples,
    tokens: dict[str, Tokens],
    rewrite: ArgvRewrite | None = None,
) -> tuple[list[list[str]], list[list[str]]]:
    """What a live tree's child is asked: every example's words, every declared command path.

    The words are the tokens after the program word, for examples that start with it, as far
    as they reach the program's parser (``rewrite``). Each text tokenized is kept in
    ``tokens``, for the check to take instead of tokenizing it again.
    """
    program = loaded.catalog.program
    paths = [
        list(words) for tool in loaded.catalog.tools for words in (tool.command, *tool.aliases)
    ]
    argvs: list[list[str]] = []
    for record in (*examples, *examples.named):
        if record.placeholders:
            # Its values are not known: the model alone judges it.
            continue
        tokenized = tokens[record.text] = tokenize(record.text)
        words = [word.text for word in tokenized.words]
        if words and words[0] == program:
            argvs.append(rewrite.parsed(words[1:]) if rewrite is not None else words[1:])
    return argvs, paths
