"""The pytest plugin: every example as a test item, ``catalog.json::TOOL[INDEX]``.

An example of the documentation is an item named where it is, ``README.md:42``.

Nothing runs unless asked for: ``pytest --exampleguard`` (or ``pytest = true`` in
``[tool.exampleguard]``, or ``exampleguard = true`` in pytest's own ini options) collects one item
per example, failing with its diagnostics, plus one item for the repository-wide checks (counts,
dispositions, coverage). ``--exampleguard-dryrun`` adds one item per dry run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    # Only for annotations: the plugin imports exampleguard when it is enabled, so that a
    # pytest run without it pays nothing.
    from exampleguard._catalogfile import LoadedCatalog
    from exampleguard._config import Config
    from exampleguard._diagnostics import Diagnostic
    from exampleguard._pipeline import Evaluation, ExampleResult
    from exampleguard._report.data import DryRunEntry
    from exampleguard._sources import ExampleRecord

__all__ = [
    "CatalogFile",
    "DocExampleItem",
    "DryRunItem",
    "ExampleItem",
    "RepositoryItem",
    "pytest_addoption",
    "pytest_collect_file",
    "pytest_collection_modifyitems",
    "pytest_configure",
]


@dataclass(frozen=True)
class _Evaluated:
    """``validate``'s evaluation, once per session, with its results by item name."""

    evaluation: Evaluation | None
    unusable: list[Diagnostic]
    by_example: dict[tuple[str, int], ExampleResult]
    by_address: dict[str, ExampleResult]

    def usable(self) -> Evaluation:
        """The evaluation; fail the item with why there is none."""
        if self.evaluation is None:
            raise ExampleFailure(_lines(self.unusable))
        return self.evaluation


@dataclass
class _Session:
    """What the plugin knows in one pytest session; ``config`` is set whenever it is enabled."""

    enabled: bool
    config: Config | None
    dry: bool
    collected: bool = False
    """Whether the catalog was collected as a file, so its items are not appended again."""
    _evaluated: _Evaluated | None = field(default=None, repr=False)
    _dry_runs: dict[tuple[str, int], DryRunEntry] | str | None = field(default=None, repr=False)

    @property
    def settings(self) -> Config:
        """The configuration of an enabled session."""
        assert self.config is not None, "an enabled session has a configuration"
        return self.config

    def evaluated(self) -> _Evaluated:
        """Run ``validate``'s evaluation on first use; every item reads the same one."""
        if self._evaluated is None:
            from exampleguard._commands.validate import run_evaluation

            evaluation, unusable = run_evaluation(self.settings)
            by_example: dict[tuple[str, int], ExampleResult] = {}
            by_address: dict[str, ExampleResult] = {}
            for result in evaluation.examples if evaluation is not None else ():
                if result.tool is None:
                    by_address.setdefault(result.address, result)
                else:
                    by_example.setdefault((result.tool, result.index), result)
            self._evaluated = _Evaluated(evaluation, unusable, by_example, by_address)
        return self._evaluated

    def dry_runs(self) -> dict[tuple[str, int], DryRunEntry]:
        """Every dry run, run once on first use; fail the item with why they cannot run."""
        if self._dry_runs is None:
            evaluated = self.evaluated()
            if evaluated.evaluation is None:
                self._dry_runs = _lines(evaluated.unusable)
            else:
                from exampleguard._commands.dryrun import dry_run

                # The contract verdicts the example items used: validated once per session.
                outcome = dry_run(
                    self.settings,
                    jobs=None,
                    tools=[],
                    examples=[],
                    shard=None,
                    evaluation=evaluated.evaluation,
                )
                if outcome.unusable or outcome.report is None:
                    self._dry_runs = _lines(outcome.unusable)
                else:
                    self._dry_runs = {(r.tool, r.index): r for r in outcome.report.dry_runs}
        if isinstance(self._dry_runs, str):
            raise ExampleFailure(self._dry_runs)
        return self._dry_runs


_SESSION_KEY = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--exampleguard``, ``--exampleguard-dryrun`` and ``--exampleguard-config``."""
    group = parser.getgroup("exampleguard", "checking a CLI's agent examples")
    group.addoption(
        "--exampleguard",
        action="store_true",
        help="Collect every catalog example as a test item.",
    )
    group.addoption(
        "--exampleguard-dryrun",
        action="store_true",
        help="Also collect each eligible example's dry run (implies --exampleguard).",
    )
    group.addoption(
        "--exampleguard-config",
        metavar="PATH",
        help="The exampleguard configuration (default: found from the root directory up).",
    )
    parser.addini(
        "exampleguard", "Collect catalog examples as test items.", type="bool", default=False
    )


def _enabled(config: pytest.Config) -> tuple[bool, bool]:
    dry = bool(config.getoption("exampleguard_dryrun"))
    wanted = dry or bool(config.getoption("exampleguard")) or bool(config.getini("exampleguard"))
    return wanted, dry


def _load(config: pytest.Config) -> tuple[Config | None, str | None]:
    """The exampleguard configuration, or ``None`` and why it cannot be used."""
    from exampleguard._config import ConfigError, load_config

    explicit = config.getoption("exampleguard_config")
    try:
        # An explicit path is relative to where pytest was started, like every argument; the
        # search starts at the root directory, where the project's configuration lives.
        if explicit:
            return load_config(Path(explicit), config.invocation_params.dir), None
        return load_config(None, config.rootpath), None
    except ConfigError as error:
        return None, error.diagnostic.message


def _session_for(config: pytest.Config) -> _Session | None:
    """The plugin's session when it is enabled (set up on first use), else ``None``."""
    if _SESSION_KEY in config.stash:
        session = config.stash[_SESSION_KEY]
        return session if session.enabled else None
    wanted, dry = _enabled(config)
    settings, problem = _load(config)
    enabled = wanted or (settings is not None and settings.settings.pytest)
    session = config.stash[_SESSION_KEY] = _Session(enabled, settings, dry)
    if not enabled:
        return None
    if settings is None:
        raise pytest.UsageError(f"exampleguard: {problem}")
    if not settings.catalog_path.is_file():
        raise pytest.UsageError(
            f"exampleguard: the catalog {settings.catalog_path} does not exist "
            f"(`catalog` in {settings.source})"
        )
    return session


def _session(node: pytest.Item | pytest.File) -> _Session:
    """The session of a collected node: the plugin was enabled to collect it."""
    return node.config.stash[_SESSION_KEY]


def pytest_configure(config: pytest.Config) -> None:
    """Stop the session before collection when the plugin is enabled but cannot work."""
    _session_for(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect the catalog when pytest is pointed at it (``pytest catalog.json::TOOL[0]``)."""
    session = _session_for(parent.config)
    if session is None or file_path != session.settings.catalog_path:
        return None
    # pytest makes a collector for every file of each folder it walks through, also on the way
    # to `testpaths` or a named test: only collecting the catalog's items counts as collecting
    # it (CatalogFile.collect says so).
    return CatalogFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Append the catalog's items when enabled and the catalog was not collected as a file.

    Whatever ``testpaths`` and the arguments select, an enabled plugin checks the catalog: its
    items are added first (``tryfirst``), so ``-k``, ``-m`` and ``--deselect`` still apply to them.
    """
    plugin = _session_for(config)
    if plugin is None or plugin.collected:
        return
    catalog = CatalogFile.from_parent(session, path=plugin.settings.catalog_path)
    items.extend(catalog.collect())


class CatalogFile(pytest.File):
    """The catalog, collected into one item per example."""

    def collect(self) -> Iterator[pytest.Item]:
        """Yield an item per example, the repository checks, and (optionally) the dry runs."""
        _session(self).collected = True
        from exampleguard._catalogfile import load_catalog
        from exampleguard._documents import SourceError
        from exampleguard._sources.catalog import catalog_examples

        try:
            loaded = load_catalog(self.path, self.path.name)
        except SourceError as error:
            yield RepositoryItem.from_parent(self, name="catalog", problem=error.diagnostic.message)
            return
        examples = catalog_examples(loaded)
        for record in examples:
            yield ExampleItem.from_parent(
                self, name=record.address, tool=record.tool or "", index=record.index
            )
        yield from self._documentation(loaded)
        yield RepositoryItem.from_parent(self, name="repository")
        if _session(self).dry:
            for position, tool in enumerate(loaded.catalog.tools):
                if tool.capability is None:
                    continue
                for record in examples.of_tool(position):
                    yield DryRunItem.from_parent(
                        self,
                        name=f"{record.address}::dryrun",
                        tool=record.tool or "",
                        index=record.index,
                    )

    def _documentation(self, loaded: LoadedCatalog) -> Iterator[pytest.Item]:
        """An item per example of the documentation, named where it is (``README.md:42``)."""
        from exampleguard._documents import SourceError
        from exampleguard._sources import SOURCES, SourceContext

        config = _session(self).settings
        seen: set[str] = set()
        # Every source but the catalog, whose examples are the TOOL[INDEX] items above.
        for source in SOURCES:
            if source.name == "catalog" or source.reads_tree:
                continue
            try:
                examples = source.read(SourceContext(config, loaded))
            except SourceError as error:
                yield RepositoryItem.from_parent(
                    self, name=source.name, problem=error.diagnostic.message
                )
                continue
            yield from self._located(config, examples.named, seen)
        if any(source.reads_tree for source in SOURCES):
            # The examples that come with the tree (help text): only the evaluation loads it,
            # importing a live tree once for the whole session.
            evaluation = _session(self).evaluated().evaluation
            named = [r for r in evaluation.examples if r.tool is None] if evaluation else []
            yield from self._located(config, [r for r in named if r.address not in seen], seen)

    def _located(
        self, config: Config, records: Iterable[ExampleRecord], seen: set[str]
    ) -> Iterator[pytest.Item]:
        """An item per example of one source, named by its address."""
        for record in records:
            seen.add(record.address)
            place = record.location()
            yield DocExampleItem.from_parent(
                self,
                name=record.address,
                address=record.address,
                # Outputs name files from where the run started (config.cwd), not the root.
                file=config.cwd / place.file,
                line=place.line,
            )


class ExampleFailure(Exception):
    """An example (or a repository check) has defects; the message lists them."""


def _lines(diagnostics: Iterable[Diagnostic]) -> str:
    from exampleguard._report import diagnostic_entry
    from exampleguard._report.text import diagnostic_lines

    return "\n".join(line for d in diagnostics for line in diagnostic_lines(diagnostic_entry(d)))


class ExampleItem(pytest.Item):
    """One example's contract verdict."""

    def __init__(self, *, tool: str, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool, self.index = tool, index

    def runtest(self) -> None:
        """Fail with the example's diagnostics if it has any error."""
        evaluated = _session(self).evaluated()
        evaluated.usable()
        result = self._result(evaluated)
        if result is None:
            raise ExampleFailure(f"{self.name} was not evaluated")
        if not result.ok:
            raise ExampleFailure(f"$ {result.command}\n{_lines(result.diagnostics)}")

    def _result(self, evaluated: _Evaluated) -> ExampleResult | None:
        return evaluated.by_example.get((self.tool, self.index))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,  # noqa: ARG002 - pytest passes it; diagnostics have one style
    ) -> str:
        """Show the diagnostics, not a traceback."""
        if isinstance(excinfo.value, ExampleFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from, and the name failure headers show."""
        # pytest rewrites a domain that ends the node id as Python dotted names, turning a tool
        # id's dots into `::`; the trailing space keeps the name out of that rewriting.
        return self.path, None, f"{self.name} "


class DocExampleItem(ExampleItem):
    """One example of the documentation, named and reported where it is (``README.md:42``)."""

    def __init__(self, *, address: str, file: Path, line: int | None, **kwargs: Any) -> None:
        super().__init__(tool="", index=-1, **kwargs)
        self.address, self.file, self.line = address, file, line

    def _result(self, evaluated: _Evaluated) -> ExampleResult | None:
        return evaluated.by_address.get(self.address)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The Markdown file and line of the example."""
        return self.file, (self.line - 1 if self.line is not None else None), f"{self.name} "


class RepositoryItem(ExampleItem):
    """The repository-wide checks: catalog, tree, counts, dispositions, exclusions, coverage."""

    def __init__(self, *, problem: str | None = None, **kwargs: Any) -> None:
        super().__init__(tool="", index=-1, **kwargs)
        self.problem = problem

    def runtest(self) -> None:
        """Fail with every diagnostic that is not about one example."""
        if self.problem is not None:
            raise ExampleFailure(self.problem)
        evaluation = _session(self).evaluated().usable()
        owned = {id(d) for result in evaluation.examples for d in result.diagnostics}
        failing = [d for d in evaluation.diagnostics if d.is_error and id(d) not in owned]
        if failing:
            raise ExampleFailure(_lines(failing))


class DryRunItem(ExampleItem):
    """One example's dry run in the sandbox."""

    def runtest(self) -> None:
        """Run the example through the sandbox (all dry runs run once, on the first item)."""
        session = _session(self)
        runs = session.dry_runs()
        run = runs.get((self.tool, self.index))
        if run is None:
            evaluation = session.evaluated().evaluation
            if evaluation is not None and (self.tool, self.index) in evaluation.review.narrowed:
                pytest.skip("narrowed by a reviewed disposition; contract validation still ran")
            # A contract failure is never executed, and never counts as a pass.
            raise ExampleFailure("not executed: the example fails contract validation")
        if not run.passed:
            raise ExampleFailure(
                f"$ {' '.join(run.argv)}\n{run.status} (exit code {run.exit_code})\n"
                f"{run.stderr or run.stdout}"
            )
