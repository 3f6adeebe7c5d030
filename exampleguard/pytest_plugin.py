"""The pytest plugin: every example as a test item, ``catalog.json::TOOL[INDEX]``.

An example of the documentation is an item named where it is, ``README.md:42``.

Nothing runs unless asked for: ``pytest --exampleguard`` (or ``pytest = true`` in
``[tool.exampleguard]``, or ``exampleguard = true`` in pytest's own ini options) collects one item
per example, failing with its diagnostics, plus one item for the repository-wide checks (counts,
dispositions, coverage). ``--exampleguard-dryrun`` adds one item per dry run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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

_STATE_KEY = pytest.StashKey[dict[str, Any]]()


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


def _load(config: pytest.Config) -> tuple[Any, str | None]:
    """The exampleguard configuration, or ``None`` and why it cannot be used."""
    from exampleguard.config import ConfigError, load_config

    explicit = config.getoption("exampleguard_config")
    try:
        # An explicit path is relative to where pytest was started, like every argument; the
        # search starts at the root directory, where the project's configuration lives.
        if explicit:
            return load_config(Path(explicit), config.invocation_params.dir), None
        return load_config(None, config.rootpath), None
    except ConfigError as error:
        return None, error.diagnostic.message


def _state_for(config: pytest.Config) -> dict[str, Any] | None:
    """The plugin's state when it is enabled (set up on first use), else ``None``."""
    if _STATE_KEY in config.stash:
        state = config.stash[_STATE_KEY]
        return state if state.get("enabled") else None
    wanted, dry = _enabled(config)
    settings, problem = _load(config)
    enabled = wanted or (settings is not None and settings.settings.pytest)
    config.stash[_STATE_KEY] = {"enabled": enabled, "config": settings, "dry": dry}
    if not enabled:
        return None
    if settings is None:
        raise pytest.UsageError(f"exampleguard: {problem}")
    if not settings.catalog_path.is_file():
        raise pytest.UsageError(
            f"exampleguard: the catalog {settings.catalog_path} does not exist "
            f"(`catalog` in {settings.source})"
        )
    return config.stash[_STATE_KEY]


def pytest_configure(config: pytest.Config) -> None:
    """Stop the session before collection when the plugin is enabled but cannot work."""
    _state_for(config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect the catalog when pytest is pointed at it (``pytest catalog.json::TOOL[0]``)."""
    state = _state_for(parent.config)
    if state is None or file_path != state["config"].catalog_path:
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
    state = _state_for(config)
    if state is None or state.get("collected"):
        return
    catalog = CatalogFile.from_parent(session, path=state["config"].catalog_path)
    items.extend(catalog.collect())


def _state(node: pytest.Item | pytest.File) -> dict[str, Any]:
    state = node.config.stash[_STATE_KEY]
    if "evaluation" not in state:
        from exampleguard.commands.validate import run_evaluation

        evaluation, unusable = run_evaluation(state["config"])
        state["evaluation"], state["unusable"] = evaluation, unusable
        results: dict[tuple[str | None, int], Any] = {}
        named: dict[str, Any] = {}
        for result in evaluation.examples if evaluation is not None else ():
            if result.tool is None:
                named.setdefault(result.address, result)
            else:
                results.setdefault((result.tool, result.index), result)
        state["results"], state["named"] = results, named
    return state


class CatalogFile(pytest.File):
    """The catalog, collected into one item per example."""

    def collect(self) -> Iterator[pytest.Item]:
        """Yield an item per example, the repository checks, and (optionally) the dry runs."""
        self.config.stash[_STATE_KEY]["collected"] = True
        from exampleguard.catalog import load_catalog
        from exampleguard.documents import SourceError
        from exampleguard.sources.catalog import catalog_examples

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
        if self.config.stash[_STATE_KEY]["dry"]:
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

    def _documentation(self, loaded: Any) -> Iterator[pytest.Item]:
        """An item per example of the documentation, named where it is (``README.md:42``)."""
        from exampleguard.documents import SourceError
        from exampleguard.sources import SOURCES, SourceContext

        config = self.config.stash[_STATE_KEY]["config"]
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
            evaluation = _state(self)["evaluation"]
            named = [r for r in evaluation.examples if r.tool is None] if evaluation else []
            yield from self._located(config, [r for r in named if r.address not in seen], seen)

    def _located(self, config: Any, records: Any, seen: set[str]) -> Iterator[pytest.Item]:
        """An item per example of one source, named by its address."""
        for record in records:
            seen.add(record.address)
            place = record.location()
            yield DocExampleItem.from_parent(
                self,
                name=record.address,
                address=record.address,
                file=config.root / place.file,
                line=place.line,
            )


class ExampleFailure(Exception):
    """An example (or a repository check) has defects; the message lists them."""


def _lines(diagnostics: list[Any]) -> str:
    from exampleguard.report import diagnostic_entry
    from exampleguard.report.text import diagnostic_lines

    return "\n".join(line for d in diagnostics for line in diagnostic_lines(diagnostic_entry(d)))


class ExampleItem(pytest.Item):
    """One example's contract verdict."""

    def __init__(self, *, tool: str, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool, self.index = tool, index

    def runtest(self) -> None:
        """Fail with the example's diagnostics if it has any error."""
        state = _state(self)
        if state["evaluation"] is None:
            raise ExampleFailure(_lines(state["unusable"]))
        result = state["results"].get((self.tool, self.index))
        if result is None:
            raise ExampleFailure(f"{self.tool}[{self.index}] was not evaluated")
        if not result.ok:
            raise ExampleFailure(f"$ {result.command}\n{_lines(list(result.diagnostics))}")

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

    def runtest(self) -> None:
        """Fail with the example's diagnostics if it has any error."""
        state = _state(self)
        if state["evaluation"] is None:
            raise ExampleFailure(_lines(state["unusable"]))
        result = state["named"].get(self.address)
        if result is None:
            raise ExampleFailure(f"{self.address} was not evaluated")
        if not result.ok:
            raise ExampleFailure(f"$ {result.command}\n{_lines(list(result.diagnostics))}")

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
        state = _state(self)
        if state["evaluation"] is None:
            raise ExampleFailure(_lines(state["unusable"]))
        evaluation = state["evaluation"]
        owned = {id(d) for result in evaluation.examples for d in result.diagnostics}
        failing = [d for d in evaluation.diagnostics if d.is_error and id(d) not in owned]
        if failing:
            raise ExampleFailure(_lines(failing))


class DryRunItem(ExampleItem):
    """One example's dry run in the sandbox."""

    def runtest(self) -> None:
        """Run the example through the sandbox (all dry runs run once, on the first item)."""
        state = _state(self)
        if "dry_runs" not in state and state["evaluation"] is None:
            state["dry_runs"] = _lines(state["unusable"])
        elif "dry_runs" not in state:
            from exampleguard.commands.dryrun import dry_run

            # The contract verdicts the example items used: validated once per session.
            outcome = dry_run(
                state["config"],
                jobs=None,
                tools=[],
                examples=[],
                shard=None,
                evaluation=state["evaluation"],
            )
            if outcome.unusable or outcome.report is None:
                state["dry_runs"] = _lines(outcome.unusable)
            else:
                state["dry_runs"] = {(r.tool, r.index): r for r in outcome.report.dry_runs}
        runs = state["dry_runs"]
        if isinstance(runs, str):
            raise ExampleFailure(runs)
        run = runs.get((self.tool, self.index))
        if run is None:
            evaluation = state["evaluation"]
            if evaluation is not None and (self.tool, self.index) in evaluation.review.narrowed:
                pytest.skip("narrowed by a reviewed disposition; contract validation still ran")
            # A contract failure is never executed, and never counts as a pass.
            raise ExampleFailure("not executed: the example fails contract validation")
        if not run.passed:
            raise ExampleFailure(
                f"$ {' '.join(run.argv)}\n{run.status} (exit code {run.exit_code})\n"
                f"{run.stderr or run.stdout}"
            )
