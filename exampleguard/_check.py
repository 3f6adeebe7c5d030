"""The check stage: every example checked against the contract, from data already loaded.

:func:`evaluate` takes the contract, the example records, the framework's verdicts (collected
by the caller from a live tree's child, before anything is checked) and the few settings the
checks read. It reads no file and imports nothing from the loading stage: what it returns is
data (one :class:`ExampleResult` per example), which the report builder later places in its
file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from exampleguard._adapters.verdict import ParseVerdict
from exampleguard._bind import Binding, Memo, Problem, Role, bind
from exampleguard._catalog import DryRun, Tool
from exampleguard._codes import BAD_CHOICE, BAD_TYPE, MODEL_MISMATCH, PARSER_RAISED, lookup
from exampleguard._contract import Contract, EffectiveTool
from exampleguard._diagnostics import Diagnostic, Related, Severity, Span
from exampleguard._examples import ExampleRecord, Examples
from exampleguard._rules import (
    CATALOG_STAGES,
    NAMED_STAGES,
    Finding,
    Rule,
    RuleContext,
    Stages,
    Subject,
    ToolScope,
    arguments_of,
    word_span,
)
from exampleguard._tokenize import Tokens, tokenize
from exampleguard._verdicts import compare, real_arguments, real_problem, undecided

__all__ = ["CheckSettings", "ExampleResult", "Preview", "Verdicts", "evaluate"]

Verdicts = Mapping[tuple[str, ...], ParseVerdict]
"""The framework's own verdict on each example's words after the program name (a live tree)."""


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """What the checks read of the configuration, and nothing else of it."""

    max_example_chars: int
    bypass_flags: tuple[str, ...] = ()
    reaches_parser: Callable[[Sequence[str]], list[str]] | None = None
    """What of an example's words (after the program) reaches the program's parser, for a
    program that rewrites its argv first (``argv_rewrite``): its verdicts are on those words."""


@dataclass(frozen=True, slots=True)
class Preview:
    """What a dry run of an example needs: its tool's capability, and what the example gives."""

    capability: DryRun
    command_end: int | None = None
    """Index of the first word after the command path (where a dry-run flag goes), once bound."""
    given_flags: frozenset[str] = frozenset()
    """Every option string of every option the example gives (to see a flag already given)."""


@dataclass(frozen=True, slots=True)
class ExampleResult(ExampleRecord):
    """An example record with its contract verdict: its binding and its diagnostics.

    It is the record itself, extended: a run keeps one object per example, whatever its source.
    """

    argv: tuple[str, ...] | None = None
    path: tuple[str, ...] | None = None
    arguments: dict[str, Any] | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    validated: bool = False
    """Whether the example went through contract validation (tokenized and bound)."""
    preview: Preview | None = None
    """For an example of a tool with a reviewed dry-run capability: what its dry run needs."""

    @classmethod
    def of(cls, record: ExampleRecord, **verdict: Any) -> ExampleResult:
        """``record`` itself, every field kept, with its ``verdict`` (the fields above)."""
        return cls(
            record.tool,
            record.index,
            record.text,
            record.origin,
            record.placeholders,
            record.blanks,
            **verdict,
        )

    @property
    def command(self) -> str:
        """The example's text."""
        return self.text

    @property
    def ok(self) -> bool:
        """The contract verdict: no error-severity diagnostic."""
        return not any(d.is_error for d in self.diagnostics)


def evaluate(
    contract: Contract,
    examples: Examples,
    verdicts: Verdicts,
    settings: CheckSettings,
    *,
    tools: Sequence[EffectiveTool] | None = None,
    named: Iterable[ExampleRecord] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[ExampleResult]:
    """Check the examples of ``tools`` (every tool of the contract by default), then ``named``.

    ``named`` are examples of no tool (documentation, help text), each checked as one of the
    command it names; by default every one of ``examples``. The results are in that order: a
    tool's examples in theirs, tool by tool. ``progress`` is told, after each tool, how many of
    the tools' examples have been checked.
    """
    checker = _ExampleChecker(contract, verdicts, settings)
    chosen = contract.tools if tools is None else tools
    total = sum(examples.count(tool.index) for tool in chosen)
    results: list[ExampleResult] = []
    for tool in chosen:
        results.extend(checker.tool(tool, examples.of_tool(tool.index)))
        if progress is not None:
            progress(len(results), total)
    results.extend(checker.named(record) for record in (examples.named if named is None else named))
    return results


class _ExampleChecker:
    """Checks examples tool by tool; holds what every example of a run shares."""

    def __init__(self, contract: Contract, verdicts: Verdicts, settings: CheckSettings) -> None:
        self.contract = contract
        self.context = RuleContext(
            contract=contract,
            max_example_chars=settings.max_example_chars,
            bypass_flags=list(settings.bypass_flags),
        )
        self.memo = Memo()
        self.verdicts = verdicts
        self.reaches_parser = settings.reaches_parser
        # What an example of no tool is checked as until it is bound to the command it names.
        nothing = EffectiveTool(tool=Tool(id=contract.program, command=[]), index=-1, node=None)
        self.unbound = ToolScope(self.context, nothing, 1)
        self._named_scopes: dict[int, ToolScope] = {}

    def tool(self, tool: EffectiveTool, records: Iterable[ExampleRecord]) -> list[ExampleResult]:
        """Check every example of ``tool``, in order (later ones are compared with earlier)."""
        examples = list(records)
        if not examples:
            return []
        scope = ToolScope(self.context, tool, len(examples))
        results = [self.example(Subject(record, scope)) for record in examples]
        # What was prepared for this tool's examples is not needed again: let it go, so memory
        # does not grow with the number of tools.
        if tool.node is not None:
            self.memo.release(tool.node)
        return results

    def named(self, record: ExampleRecord) -> ExampleResult:
        """Check one example of no tool against the command it names."""
        return self.example(Subject(record, self.unbound), NAMED_STAGES)

    def example(self, subject: Subject, stages: Stages = CATALOG_STAGES) -> ExampleResult:
        """Check one example, stage by stage, as far as it gets."""
        diagnostics: list[Diagnostic] = []
        record = subject.record
        named = record.tool is None
        self._apply(subject, stages.text, diagnostics)
        if subject.too_long:
            return self._result(subject, diagnostics)
        text = record.checked_text
        tokens = tokenize(text)
        subject.tokenized(tokens)
        for shell in tokens.problems:
            span = Span(shell.start, shell.end)
            diagnostics.append(self._diagnostic(record, shell.code, shell.message, span=span))
        self._apply(subject, stages.word, diagnostics)
        if not subject.words or (subject.tool.node is None and not named):
            # Nothing to bind; or the tool itself is unbound and there is no command to bind
            # its examples to (each example carries tool-unbound: nothing passes unchecked).
            return self._result(subject, diagnostics)

        def located(problem: Problem) -> None:
            diagnostics.append(
                self._diagnostic(
                    record,
                    problem.code,
                    problem.message,
                    hint=problem.hint,
                    suggestion=problem.suggestion,
                    span=word_span(tokens, problem.word, problem.offset, problem.length),
                    related=_related(tokens, problem.related),
                )
            )

        binding = bind(self.contract, subject.words, self.memo)
        verdict = None if record.placeholders else self._verdict(subject.words)
        if verdict is not None and not verdict.decided:
            # Application code raised while the framework parsed: no verdict (SPEC 4). The
            # model judges alone, and the warning names the exception.
            diagnostics.append(_found(record, Finding(PARSER_RAISED, undecided(verdict))))
            verdict = None
        if named:
            self._name_command(subject, binding, verdict)
        problems, real = self._judge(subject, binding, verdict, diagnostics)
        if record.placeholders:
            problems = [p for p in problems if not _about_placeholder(p, tokens, record)]
        for problem in problems:
            located(problem)
        # The framework ran the tool's command even where the model did not get there.
        ran_tool = verdict is not None and verdict.accepted and verdict.path == subject.tool.path
        subject.bound_to(binding, real=real, ran_tool=ran_tool)
        self._apply(subject, stages.binding, diagnostics)
        if not _failed(diagnostics):
            # Only examples that bound without errors are compared: a broken one is reported
            # for what is wrong with it, not as the copy of another.
            self._apply(subject, stages.tool, diagnostics)
        return self._result(subject, diagnostics, validated=True)

    def _name_command(
        self, subject: Subject, binding: Binding, verdict: ParseVerdict | None
    ) -> None:
        """Check an example of no tool as one of the command it runs, once that is known.

        The framework's verdict says which command that is where it ran one; else the model's
        binding. An example that reaches no runnable command keeps no command: the binder's
        problems say why.
        """
        node = binding.node
        if verdict is not None and verdict.accepted and verdict.path is not None:
            node = self.contract.node_at(verdict.path) or node
        if node is None or not node.runnable:
            return
        tool = self.contract.command_tool(node)
        scope = self._named_scopes.get(id(tool))
        if scope is None:
            # One scope per command for all its examples of no tool: what it resolves (banned
            # spellings, requirements) is the command's, and no rule about a set of examples
            # runs on them (NAMED_STAGES).
            scope = self._named_scopes[id(tool)] = ToolScope(self.context, tool, 1)
        subject.rescope(scope)

    def _verdict(self, words: list[str]) -> ParseVerdict | None:
        """The framework's own verdict on the example's words, when a live tree gave one."""
        if not self.verdicts or words[0] != self.contract.program:
            return None
        parsed = self.reaches_parser
        verdict = self.verdicts.get(tuple(parsed(words[1:]) if parsed else words[1:]))
        if verdict is not None and verdict.error == "PromptRequired":
            # The framework would stop to prompt: its parse never finished. Prompts are
            # exampleguard's stricter rule, which the rules stage reports.
            return None
        return verdict

    def _judge(
        self,
        subject: Subject,
        binding: Binding,
        verdict: ParseVerdict | None,
        diagnostics: list[Diagnostic],
    ) -> tuple[list[Problem], dict[str, Any] | None]:
        """The binder's problems as the real parser's verdict leaves them, and its arguments.

        The framework's own parser has the last word; the model supplies the located
        diagnostics, and a disagreement is a ``model-mismatch`` warning that carries both
        verdicts.
        """
        problems = list(binding.problems)
        if verdict is None:
            return problems, None
        tool = subject.tool
        model_errors = [p for p in problems if lookup(p.code).severity is Severity.ERROR]
        real = None
        if verdict.accepted and not verdict.eager:
            real = real_arguments(tool, self.contract, verdict)
        model = arguments_of(tool, binding) if binding.node is tool.node else None
        comparison = compare(binding, model_errors, model, real, verdict)
        if not comparison.agree:
            mismatch = Finding(
                MODEL_MISMATCH,
                comparison.describe(model_errors, verdict),
                hint="The framework's verdict stands; `exampleguard explain model-mismatch`.",
            )
            diagnostics.append(_found(subject.record, mismatch))
            if verdict.accepted:
                problems = [p for p in problems if p not in model_errors]
            elif not model_errors:
                problems.append(real_problem(verdict, subject.words))
        return problems, real

    @staticmethod
    def _apply(subject: Subject, rules: Iterable[Rule], diagnostics: list[Diagnostic]) -> None:
        """Apply ``rules`` to the example, turning each finding into a located diagnostic."""
        for rule in rules:
            for finding in rule(subject):
                diagnostics.append(_found(subject.record, finding))

    @staticmethod
    def _diagnostic(
        record: ExampleRecord,
        code: str,
        message: str,
        *,
        hint: str | None = None,
        suggestion: str | None = None,
        span: Span | None = None,
        related: tuple[Related, ...] = (),
    ) -> Diagnostic:
        """A diagnostic of the tokenizer's or the binder's, which name their codes by name."""
        return lookup(code).diagnostic(
            record.shown(message),
            hint=None if hint is None else record.shown(hint),
            suggestion=suggestion,
            tool=record.tool,
            example=record.index,
            region=record.region(span),
            span=span,
            related=related,
        )

    def _result(
        self, subject: Subject, diagnostics: list[Diagnostic], *, validated: bool = False
    ) -> ExampleResult:
        binding = subject.binding
        words = subject.words or None
        record = subject.record
        path = binding.path if binding is not None else None
        if subject.by_framework:
            # Where the framework's own routing got to: the tool's command.
            path = subject.tool.path
        # Only a catalog tool's own examples are dry-run: one of no tool runs nothing.
        capability = subject.tool.dry_run if record.tool is not None else None
        arguments = subject.arguments
        if record.placeholders:
            # The words were checked with each placeholder masked: show them as written.
            words = [record.shown(word) for word in words] if words is not None else None
            arguments = _shown(record, arguments)
        return ExampleResult.of(
            record,
            # The program name, flags and common values recur in every example of a catalog:
            # the results of a large one keep one string object for each, not one per word.
            argv=tuple(map(sys.intern, words)) if words is not None else None,
            path=tuple(path) if path is not None else None,
            arguments=arguments,
            diagnostics=tuple(diagnostics),
            validated=validated,
            preview=_preview(subject, capability) if capability is not None else None,
        )


def _shown(record: ExampleRecord, value: Any) -> Any:
    """An argument value (a word, or lists and objects of them) with placeholders as written."""
    if isinstance(value, str):
        return record.shown(value)
    if isinstance(value, list):
        return [_shown(record, item) for item in value]
    if isinstance(value, dict):
        return {key: _shown(record, item) for key, item in value.items()}
    return value


def _preview(subject: Subject, capability: DryRun) -> Preview:
    """What a dry run of the example needs: its tool's ``capability``, and what it gives."""
    binding = subject.binding
    if binding is None:
        return Preview(capability)
    commands = [i for i, role in enumerate(binding.roles) if role is Role.COMMAND]
    return Preview(
        capability,
        command_end=(commands[-1] if commands else 0) + 1,
        given_flags=frozenset(flag for o in binding.occurrences for flag in o.parameter.all_flags),
    )


def _found(record: ExampleRecord, finding: Finding) -> Diagnostic:
    """A rule's finding as a diagnostic, located through the example's origin."""
    return finding.code.diagnostic(
        record.shown(finding.message),
        hint=None if finding.hint is None else record.shown(finding.hint),
        tool=record.tool,
        example=record.index,
        region=record.region(finding.span),
        span=finding.span,
        related=finding.related,
    )


def _about_placeholder(problem: Problem, tokens: Tokens, record: ExampleRecord) -> bool:
    """Whether ``problem`` judges a placeholder's value, which the reader supplies."""
    if problem.code not in (BAD_TYPE.name, BAD_CHOICE.name) or problem.word is None:
        return False
    if not 0 <= problem.word < len(tokens.words):
        return False
    word = tokens.words[problem.word]
    return any(span.start < word.end and word.start < span.end for span in record.placeholders)


def _failed(diagnostics: list[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def _related(tokens: Tokens, related: tuple[tuple[str, int], ...]) -> tuple[Related, ...]:
    return tuple(Related(label, span=word_span(tokens, word)) for label, word in related)
