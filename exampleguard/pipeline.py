"""The validation pipeline: files → typed models → bound examples → diagnostics.

:func:`load_inputs` reads and structurally validates every file a run needs — catalog, tree,
reviewer records, counts — and raises :class:`InputError` with *all* the structure errors it
found, so a run that cannot be evaluated says everything at once (exit 2) before anything is
checked. :func:`evaluate` then checks every example; it never prints and never writes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from exampleguard.bind import Binding, Memo, Problem, Role, bind
from exampleguard.catalog import LoadedCatalog, load_catalog
from exampleguard.codes import (
    ALIAS_COLLISION,
    CONFIG_INVALID,
    DUPLICATE_EXAMPLE,
    EXAMPLE_TOO_LONG,
    FILE_INVALID,
    MODEL_MISMATCH,
    SCHEMA_MISMATCH,
    TOO_MANY_EXAMPLES,
    TOOL_UNBOUND,
    TREE_UNAVAILABLE,
    WRONG_COMMAND,
    WRONG_PROGRAM,
    Code,
    lookup,
)
from exampleguard.config import Config
from exampleguard.contract import Contract, EffectiveTool, build_contract
from exampleguard.counts import Counts, compare_counts, load_counts
from exampleguard.diagnostics import Diagnostic, Related, Severity, Span
from exampleguard.dialects import spoken_names
from exampleguard.dispositions import (
    LoadedDispositions,
    Review,
    all_errors,
    check_dispositions,
    check_exclusions,
    load_dispositions,
)
from exampleguard.documents import Document, SourceError
from exampleguard.model import Parameter
from exampleguard.rules import (
    MAX_EXAMPLES,
    BannedSpellings,
    arguments_of,
    banned_spellings,
    check_bypass,
    check_constraints,
    check_required,
    duplicate_key,
    given_names,
    must_give,
)
from exampleguard.tokenize import Tokens, tokenize
from exampleguard.toolschema import SchemaCheck
from exampleguard.tree import Tree, Verdicts, load_judged_tree, parse_tree_spec
from exampleguard.verdicts import compare, real_arguments, real_problem

__all__ = ["Evaluation", "ExampleResult", "InputError", "Inputs", "evaluate", "load_inputs"]


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
    verdicts: Verdicts = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExampleResult:
    """The contract verdict on one example, with its binding and diagnostics."""

    tool: str
    tool_index: int
    index: int
    command: str
    argv: tuple[str, ...] | None
    path: tuple[str, ...] | None
    arguments: dict[str, Any] | None
    diagnostics: tuple[Diagnostic, ...]
    validated: bool
    """Whether the example went through contract validation (tokenized and bound)."""
    command_end: int | None = None
    """Index of the first word after the command path (where a dry-run flag goes)."""
    given_flags: frozenset[str] = frozenset()
    """Every option string of every option the example gives (to see a flag already given)."""

    @property
    def ok(self) -> bool:
        """The contract verdict: no error-severity diagnostic."""
        return not any(d.is_error for d in self.diagnostics)

    @property
    def address(self) -> str:
        """How people address the example: ``TOOL_ID[INDEX]``."""
        return f"{self.tool}[{self.index}]"


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


def load_inputs(config: Config, *, with_counts: bool = True) -> Inputs:
    """Read every file the run needs; raise :class:`InputError` listing every structure error."""
    errors: list[Diagnostic] = []
    catalog: LoadedCatalog | None = None
    tree: Tree | None = None
    verdicts: Verdicts = {}
    records = LoadedDispositions()
    counts: tuple[Counts, Document] | None = None
    settings = config.settings
    try:
        catalog = load_catalog(config.catalog_path, config.display(config.catalog_path))
    except SourceError as error:
        errors.append(error.diagnostic)
    if settings.tree is not None:
        try:
            spec = parse_tree_spec(settings.tree, config.root)
        except ValueError as error:
            errors.append(
                CONFIG_INVALID.diagnostic(
                    message=str(error),
                    location=config.location("tree"),
                )
            )
        else:
            display = config.display(spec.path) if spec.path is not None else str(spec)
            argvs, paths = _questions(catalog) if catalog is not None else ([], [])
            try:
                judged = load_judged_tree(
                    spec,
                    root=config.root,
                    display=display,
                    timeout=settings.tree_timeout,
                    program=catalog.catalog.program if catalog else None,
                    argvs=argvs,
                    paths=paths,
                )
                tree, verdicts = judged.tree, judged.verdicts
            except SourceError as error:
                diagnostic = error.diagnostic
                if diagnostic.code == TREE_UNAVAILABLE.name:
                    # Point at the setting people edit, not at the spec string.
                    diagnostic = replace(diagnostic, location=config.location("tree"))
                errors.append(diagnostic)
    elif catalog is not None and catalog.catalog.dialect is None:
        errors.append(
            FILE_INVALID.diagnostic(
                message=f"{catalog.document.display}: missing required key 'dialect' "
                f"({spoken_names()}): with no tree configured, the catalog must say whose parsing "
                "rules its examples follow",
                location=catalog.document.location(()),
            )
        )
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
    return Inputs(config, catalog, tree, records, counts, verdicts)


def _questions(loaded: LoadedCatalog) -> tuple[list[list[str]], list[list[str]]]:
    """What a live tree's child is asked: every example's words, every declared command path.

    The words are the tokens after the program word, for examples that start with it.
    """
    catalog = loaded.catalog
    argvs: list[list[str]] = []
    paths: list[list[str]] = []
    for tool in catalog.tools:
        paths.extend([list(tool.command), *(list(alias) for alias in tool.aliases)])
        for example in tool.examples:
            words = [word.text for word in tokenize(example.command).words]
            if words and words[0] == catalog.program:
                argvs.append(words[1:])
    return argvs, paths


def evaluate(
    inputs: Inputs,
    *,
    check_counts: bool = True,
    select: Callable[[EffectiveTool], bool] | None = None,
    repository_checks: bool = True,
) -> Evaluation:
    """Check every example (of the selected tools) and the repository-wide records."""
    config = inputs.config
    contract = build_contract(inputs.catalog, inputs.tree)
    checker = _ExampleChecker(inputs, contract)
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
    examples: list[ExampleResult] = []
    for tool in selected:
        results = checker.tool(tool)
        examples.extend(results)
        for result in results:
            diagnostics.extend(result.diagnostics)
    review = review_records(inputs, contract)
    if repository_checks:
        diagnostics.extend(review.diagnostics)
    counts = _count(inputs, examples, review, selected=select is None)
    if check_counts and repository_checks and select is None:
        diagnostics.extend(
            compare_counts(inputs.counts, counts, config.display(config.counts_path))
        )
    eligible = [
        result
        for result in examples
        if inputs.catalog.catalog.tools[result.tool_index].dry_run is not None
        and (result.tool, result.index) not in review.narrowed
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


def review_records(inputs: Inputs, contract: Contract) -> Review:
    """Check the reviewer records (dispositions and coverage exclusions) and nothing else."""
    review = check_dispositions(
        inputs.records, inputs.catalog.catalog, inputs.config.settings.reason_codes
    )
    # A command without a tool is a gap in the catalog's `tools`: that is where it is reported.
    exclusions = check_exclusions(
        inputs.records, contract, inputs.catalog.document.location(("tools",))
    )
    review.excluded = exclusions.excluded
    review.diagnostics.extend(exclusions.diagnostics)
    return review


def _count(
    inputs: Inputs,
    examples: list[ExampleResult],
    review: Review,
    *,
    selected: bool,
) -> Counts:
    catalog = inputs.catalog.catalog
    all_examples = sum(len(tool.examples) for tool in catalog.tools)
    eligible = sum(len(tool.examples) for tool in catalog.tools if tool.dry_run is not None)
    return Counts(
        tools=len(catalog.tools),
        examples=all_examples if selected else len(examples),
        contract_validated=sum(1 for result in examples if result.validated),
        dry_run_eligible=eligible,
        dry_run_narrowed=len(review.narrowed),
        excluded=len(review.excluded),
    )


class _ExampleChecker:
    """Checks examples tool by tool; holds what every example of a run shares."""

    def __init__(self, inputs: Inputs, contract: Contract) -> None:
        self.inputs = inputs
        self.contract = contract
        self.catalog = inputs.catalog
        self.document = inputs.catalog.document
        settings = inputs.config.settings
        self.max_chars = settings.max_example_chars
        self.banned = list(settings.bypass_flags)
        self.schemas = SchemaCheck()
        self._prepared: dict[int, tuple[BannedSpellings, list[Parameter]]] = {}
        self.memo = Memo()

    def tool(self, tool: EffectiveTool) -> list[ExampleResult]:
        results = [self.example(tool, index) for index in range(len(tool.tool.examples))]
        # What was prepared for this tool's examples is not needed again: let it go, so memory
        # does not grow with the number of tools.
        self._prepared.pop(id(tool), None)
        self.schemas.forget(tool)
        if tool.node is not None:
            self.memo.release(tool.node)
        return self._duplicates(tool, results)

    def example(self, tool: EffectiveTool, index: int) -> ExampleResult:
        command = tool.tool.examples[index].command
        key = self.catalog.example_key(tool.index, index)
        diagnostics: list[Diagnostic] = []

        def emit(
            code: Code,
            message: str,
            span: Span | None = None,
            hint: str | None = None,
            related: tuple[Related, ...] = (),
            *,
            suggestion: str | None = None,
        ) -> None:
            location = (
                self.document.string_location(key, span.start, span.end)
                if span is not None
                else self.document.location(key, at_key=False)
            )
            diagnostics.append(
                code.diagnostic(
                    message,
                    hint=hint,
                    suggestion=suggestion,
                    tool=tool.id,
                    example=index,
                    location=location,
                    span=span,
                    related=related,
                )
            )

        if index >= MAX_EXAMPLES:
            emit(
                TOO_MANY_EXAMPLES,
                f"{tool.id} has {len(tool.tool.examples)} examples; at most {MAX_EXAMPLES} are "
                "allowed",
                hint="Keep the two most useful examples.",
            )
        if len(command) > self.max_chars:
            emit(
                EXAMPLE_TOO_LONG,
                f"the example is {len(command)} characters long; the limit is {self.max_chars}",
                hint="Shorten it, or raise `max_example_chars`.",
            )
            return self._result(tool, index, command, diagnostics)
        tokens = tokenize(command)
        for shell in tokens.problems:
            emit(lookup(shell.code), shell.message, Span(shell.start, shell.end))
        if not tokens.words:
            if not tokens.problems:
                emit(
                    WRONG_PROGRAM,
                    f"the example is empty; it must start with '{self.contract.program}'",
                )
            return self._result(tool, index, command, diagnostics)
        words = [word.text for word in tokens.words]
        if words[0] != self.contract.program:
            emit(
                WRONG_PROGRAM,
                f"the example runs '{words[0]}', not '{self.contract.program}'",
                _word_span(tokens, 0),
                hint=f"Start the example with '{self.contract.program}'.",
            )
        if tool.node is None:
            # The tool itself is unbound; there is no command to bind its examples to. Nothing
            # passes unchecked: the example fails with a diagnostic of its own.
            emit(
                TOOL_UNBOUND,
                f"the example cannot be checked: {tool.id}'s command "
                f"'{' '.join([self.contract.program, *tool.tool.command])}' is not a runnable "
                "command of the tree",
                hint="Fix the tool's `command` (see the tool-unbound error on the tool).",
            )
            return self._result(tool, index, command, diagnostics, words=words)

        def located(problem: Problem) -> None:
            emit(
                lookup(problem.code),
                problem.message,
                _word_span(tokens, problem.word, problem.offset, problem.length),
                problem.hint,
                _related(tokens, problem.related),
                suggestion=problem.suggestion,
            )

        binding = bind(self.contract, words, self.memo)
        verdict = (
            self.inputs.verdicts.get(tuple(words[1:]))
            if words[0] == self.contract.program
            else None
        )
        if verdict is not None and verdict.error == "PromptRequired":
            # The framework would stop to prompt: its parse never finished. Prompts are
            # exampleguard's stricter rule, which the rules stage reports.
            verdict = None
        problems = list(binding.problems)
        real: dict[str, Any] | None = None
        if verdict is not None:
            # The framework's own parser has the last word; the model supplies the located
            # diagnostics, and a disagreement is a warning that carries both verdicts.
            model_errors = [p for p in problems if lookup(p.code).severity is Severity.ERROR]
            if verdict.accepted and not verdict.eager:
                real = real_arguments(tool, self.contract, verdict)
            model = arguments_of(tool, binding) if binding.node is tool.node else None
            comparison = compare(binding, model_errors, model, real, verdict)
            if not comparison.agree:
                emit(
                    MODEL_MISMATCH,
                    comparison.describe(model_errors, verdict),
                    hint="The framework's verdict stands; `exampleguard explain model-mismatch`.",
                )
                if verdict.accepted:
                    problems = [p for p in problems if p not in model_errors]
                elif not model_errors:
                    problems.append(real_problem(verdict, words))
        for problem in problems:
            located(problem)
        arguments: dict[str, Any] | None = None
        # The framework ran the tool's command even where the model did not get there.
        ran_tool = verdict is not None and verdict.accepted and verdict.path == tool.path
        if binding.node is not None and binding.node is not tool.node and not ran_tool:
            other = binding.node.tool.id if binding.node.tool is not None else None
            shown = " ".join([self.contract.program, *binding.node.path])
            emit(
                WRONG_COMMAND,
                f"the example runs '{shown}'"
                + (f", the command of {other}," if other else "")
                + f" not '{' '.join([self.contract.program, *tool.path])}'",
                hint="Move the example to the tool whose command it runs.",
            )
        elif binding.node is tool.node or ran_tool:
            if binding.node is tool.node:
                arguments = real if real is not None else arguments_of(tool, binding)
                for problem in self._rules(tool, binding, words, command):
                    located(problem)
            else:
                arguments = real
            eager = binding.eager or (verdict is not None and verdict.eager)
            if arguments is not None and not eager and not any(d.is_error for d in diagnostics):
                # The independent check: an example the parser accepts must also satisfy the
                # tool's strict argument schema; any disagreement is a defect of its own.
                for mismatch in self.schemas.errors(tool, arguments):
                    emit(
                        SCHEMA_MISMATCH,
                        f"the arguments do not match {tool.id}'s argument schema: {mismatch}",
                        hint=f"`exampleguard schema tool {tool.id}` prints the schema.",
                    )
        return self._result(
            tool,
            index,
            command,
            diagnostics,
            words=words,
            binding=binding,
            validated=True,
            arguments=arguments,
        )

    def _rules(
        self, tool: EffectiveTool, binding: Binding, words: list[str], command: str
    ) -> list[Problem]:
        prepared = self._prepared.get(id(tool))
        if prepared is None:
            # Resolved once per tool: every spelling of every banned parameter on its path, and
            # the parameters only the rules require.
            safety = tool.tool.safety
            spellings = [*self.banned, *(safety.bypass_flags if safety else [])]
            accepted = [p for node in _nodes_on_path(self.contract, tool) for p in node.accepted()]
            prepared = (banned_spellings(spellings, accepted), must_give(tool))
            self._prepared[id(tool)] = prepared
        banned, required = prepared
        findings = check_bypass(binding, words, banned, command)
        constraints = tool.constraints
        if required or (
            constraints.require_one_of
            or constraints.require_together
            or constraints.mutually_exclusive
        ):
            given = given_names(tool, binding)
            findings = [
                *check_required(tool, binding, given, required),
                *check_constraints(tool, binding, given),
                *findings,
            ]
        return findings

    def _result(
        self,
        tool: EffectiveTool,
        index: int,
        command: str,
        diagnostics: list[Diagnostic],
        *,
        words: list[str] | None = None,
        binding: Binding | None = None,
        validated: bool = False,
        arguments: dict[str, Any] | None = None,
    ) -> ExampleResult:
        path = binding.path if binding is not None and binding.path is not None else None
        command_end: int | None = None
        given_flags: frozenset[str] = frozenset()
        if binding is not None and tool.tool.dry_run is not None:
            # Only a dry run needs to know where the command path ends and what is given.
            commands = [i for i, role in enumerate(binding.roles) if role is Role.COMMAND]
            command_end = (commands[-1] if commands else 0) + 1
            given_flags = frozenset(
                flag for o in binding.occurrences for flag in o.parameter.all_flags
            )
        return ExampleResult(
            tool=tool.id,
            tool_index=tool.index,
            index=index,
            command=command,
            # The program name, flags and common values recur in every example of a catalog:
            # the results of a large one keep one string object for each, not one per word.
            argv=tuple(map(sys.intern, words)) if words is not None else None,
            path=tuple(path) if path is not None else None,
            arguments=arguments,
            diagnostics=tuple(diagnostics),
            validated=validated,
            command_end=command_end,
            given_flags=given_flags,
        )

    def _duplicates(self, tool: EffectiveTool, results: list[ExampleResult]) -> list[ExampleResult]:
        seen: dict[Hashable, ExampleResult] = {}
        updated: list[ExampleResult] = []
        for result in results:
            # Only examples that bound without errors are compared: a broken one is reported
            # for what is wrong with it, not as the copy of another.
            if result.arguments is None or result.path is None or not result.ok:
                updated.append(result)
                continue
            key = duplicate_key(result.path, result.arguments)
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = result
                updated.append(result)
                continue
            location = self.catalog.example_location(tool.index, result.index)
            duplicate = DUPLICATE_EXAMPLE.diagnostic(
                message=f"the example does the same as {earlier.address} ({earlier.command!r})",
                hint="Replace it with an example that shows something different.",
                tool=tool.id,
                example=result.index,
                location=location,
                related=(
                    Related(
                        f"{earlier.address} is the same",
                        location=self.catalog.example_location(tool.index, earlier.index),
                    ),
                ),
            )
            updated.append(_with(result, duplicate))
        return updated


def _with(result: ExampleResult, diagnostic: Diagnostic) -> ExampleResult:
    return replace(result, diagnostics=(*result.diagnostics, diagnostic))


def _nodes_on_path(contract: Contract, tool: EffectiveTool) -> list[Any]:
    nodes = [contract.root]
    node = contract.root
    for word in tool.path:
        child = node.children.get(word)
        if child is None:
            break
        node = child
        nodes.append(node)
    return nodes


def _word_span(
    tokens: Tokens, word: int | None, offset: int = 0, length: int | None = None
) -> Span | None:
    """The character span of a word (or of characters inside it) in the example text."""
    if word is None or word < 0 or word >= len(tokens.words):
        return None
    token = tokens.words[word]
    raw_length = token.end - token.start
    if (offset == 0 and length is None) or raw_length != len(token.text):
        # A quoted word's characters do not map one to one onto the raw text: use the word.
        return Span(token.start, token.end)
    start = token.start + offset
    end = start + (length if length is not None else len(token.text) - offset)
    return Span(start, min(end, token.end))


def _related(tokens: Tokens, related: tuple[tuple[str, int], ...]) -> tuple[Related, ...]:
    return tuple(Related(label, span=_word_span(tokens, word)) for label, word in related)
