"""The validation pipeline: files → typed models → contract → checked examples → review.

:func:`load_inputs` (:mod:`exampleguard._inputs`) reads and structurally validates every file a
run needs, and raises :class:`InputError` with *all* the structure errors it found, so a run
that cannot be evaluated says everything at once (exit 2) before anything is checked.
:func:`run` then wires the stages: it builds the contract, hands the check stage
(:func:`exampleguard._check.evaluate`) the records and the verdicts loading collected, and has
the reviewer records and the counts computed from the results. It never prints and never writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from exampleguard._check import CheckSettings, ExampleResult, Preview, evaluate
from exampleguard._codes import ALIAS_COLLISION, TOOL_WITHOUT_EXAMPLES, TREE_UNSANDBOXED
from exampleguard._config import Config
from exampleguard._contract import Contract, EffectiveTool
from exampleguard._contractbuild import build_contract
from exampleguard._counts import Counts, compare_counts, count_results
from exampleguard._diagnostics import Diagnostic
from exampleguard._dispositions.check import Review, check_doc_exceptions, review_records
from exampleguard._inputs import InputError, Inputs, load_inputs
from exampleguard._safety import check_safety

__all__ = [
    "Evaluation",
    "ExampleResult",
    "InputError",
    "Inputs",
    "Preview",
    "load_inputs",
    "run",
]


@dataclass(slots=True)
class Evaluation:
    """Everything ``validate`` learned: per-example results, all diagnostics, the counts."""

    inputs: Inputs
    contract: Contract
    examples: list[ExampleResult]
    diagnostics: list[Diagnostic]
    counts: Counts
    review: Review
    eligible: list[ExampleResult] = field(default_factory=list)
    """Examples of tools with a reviewed dry-run capability, minus narrowed ones."""

    @property
    def ok(self) -> bool:
        """Whether the run found no defect."""
        return not any(d.is_error for d in self.diagnostics)


def run(
    inputs: Inputs,
    *,
    check_counts: bool = True,
    select: Callable[[EffectiveTool], bool] | None = None,
    repository_checks: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Evaluation:
    """Check every example (of the selected tools) and the repository-wide records.

    ``progress`` is told, after each tool, how many of the examples have been checked.
    """
    config = inputs.config
    contract = build_contract(
        inputs.catalog, inputs.tree, inputs.argument_files, config.settings.argv_rewrite
    )
    selected = [tool for tool in contract.tools if select is None or select(tool)]
    selected_ids = {tool.id for tool in selected}
    diagnostics: list[Diagnostic] = []
    for diagnostic in contract.diagnostics:
        # Alias collisions and catalog-wide problems are repository checks (shard 1 only); the
        # rest belong to the shard of the tool they are about.
        if diagnostic.tool is None or diagnostic.code == ALIAS_COLLISION.name:
            if repository_checks:
                diagnostics.append(diagnostic)
        elif diagnostic.tool in selected_ids:
            diagnostics.append(diagnostic)
    rewrite = config.settings.argv_rewrite
    settings = CheckSettings(
        max_example_chars=config.settings.max_example_chars,
        bypass_flags=tuple(config.settings.bypass_flags),
        reaches_parser=rewrite.parsed if rewrite is not None else None,
    )
    # Examples of no tool (documentation) belong to no shard of tools: the first has them. A
    # reviewed exception replaces the example's check by a visible report of it.
    named = inputs.examples.named if repository_checks else ()
    doc_review = check_doc_exceptions(
        inputs.records, named, lambda file: config.display(config.root / file)
    )
    excepted = [doc_review.excepting(record) for record in named]
    unexcepted = [record for record, report in zip(named, excepted, strict=True) if not report]
    examples = evaluate(
        contract,
        inputs.examples,
        inputs.verdicts,
        settings,
        tools=selected,
        named=unexcepted,
        progress=progress,
    )
    checked = iter(examples[len(examples) - len(unexcepted) :])
    del examples[len(examples) - len(unexcepted) :]
    for result in examples:
        diagnostics.extend(result.diagnostics)
    diagnostics.extend(_without_examples(inputs, selected))
    for record, report in zip(named, excepted, strict=True):
        # An excepted example keeps its place among the others of its file.
        result = (
            next(checked) if report is None else ExampleResult.of(record, diagnostics=(report,))
        )
        examples.append(result)
        diagnostics.extend(result.diagnostics)
    if repository_checks:
        diagnostics.extend(doc_review.diagnostics)
        # What the sources noticed while reading the docs (a block that yields no example).
        diagnostics.extend(inputs.examples.notes)
    review = review_records(
        inputs.records,
        contract,
        inputs.examples,
        config.settings.reason_codes,
        inputs.catalog.document.region(("tools",)),
    )
    if repository_checks:
        diagnostics.extend(review.diagnostics)
        diagnostics.extend(_unsandboxed(config))
        diagnostics.extend(
            check_safety(
                contract,
                inputs.catalog.document,
                inputs.records.gates,
                config.settings.bypass_flags,
            )
        )
    counts = count_results(
        examples,
        tools=len(contract.tools),
        examples=len(inputs.examples) if select is None else None,
        dry_run_eligible=sum(
            inputs.examples.count(tool.index) for tool in contract.tools if tool.dry_run is not None
        ),
        dry_run_narrowed=len(review.narrowed),
        excluded=len(review.excluded),
    )
    if check_counts and repository_checks and select is None:
        diagnostics.extend(
            compare_counts(inputs.counts, counts, config.display(config.counts_path))
        )
    eligible = [
        result
        for result in examples
        if result.preview is not None and (result.tool, result.index) not in review.narrowed
    ]
    return Evaluation(
        inputs=inputs,
        contract=contract,
        examples=examples,
        diagnostics=diagnostics,
        counts=counts,
        review=review,
        eligible=eligible,
    )


def _without_examples(inputs: Inputs, tools: list[EffectiveTool]) -> list[Diagnostic]:
    """A ``tool-without-examples`` warning for each of ``tools`` that has no example."""
    document = inputs.catalog.document
    found: list[Diagnostic] = []
    for tool in tools:
        if inputs.examples.count(tool.index):
            continue
        command = " ".join([inputs.catalog.catalog.program, *tool.path])
        found.append(
            TOOL_WITHOUT_EXAMPLES.diagnostic(
                f"no examples: agents get no worked example of '{command}'",
                hint="Add one or two examples, then run `exampleguard counts --write`.",
                tool=tool.id,
                region=document.region(
                    ("tools", tool.index, "examples"), otherwise=("tools", tool.index)
                ),
            )
        )
    return found


def _unsandboxed(config: Config) -> list[Diagnostic]:
    """The warning every output carries when a live tree was imported under the guard alone."""
    settings = config.settings
    if settings.tree is None or settings.tree_isolation != "guard":
        return []
    if not settings.tree.startswith(("click:", "typer:", "argparse:", "exec:")):
        return []
    return [
        TREE_UNSANDBOXED.diagnostic(
            f'tree {settings.tree}: imported without a sandbox (tree_isolation = "guard"): '
            "the import guard stops mistakes, not a hostile module",
            hint=TREE_UNSANDBOXED.fix,
            region=config.document.region((*config.table, "tree_isolation")),
        )
    ]
