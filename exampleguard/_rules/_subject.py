"""What a rule is given (the example checked so far) and what it returns (findings)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from exampleguard._bind import Binding, Occurrence
from exampleguard._codes import Code
from exampleguard._contract import CommandNode, Contract, EffectiveTool
from exampleguard._diagnostics import Related, Span
from exampleguard._examples import ExampleRecord
from exampleguard._model import Parameter
from exampleguard._rules._binding import (
    BannedSpellings,
    always_prompting,
    arguments_of,
    banned_spellings,
    given_names,
    must_give,
    named_occurrences,
)
from exampleguard._tokenize import Tokens

__all__ = ["Finding", "Rule", "RuleContext", "Subject", "ToolScope", "word_span"]


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule found: a registered code, a message, and where in the example's text.

    The pipeline turns it into a diagnostic located through the example's origin; the severity
    is the code's.
    """

    code: Code
    message: str
    hint: str | None = None
    span: Span | None = None
    related: tuple[Related, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What every rule of a run may consult: the contract and the run's settings."""

    contract: Contract
    max_example_chars: int
    bypass_flags: Sequence[str]
    resolved: dict[tuple[Any, ...], tuple[object, _Resolved]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """What recent tool scopes resolved, by the parameter records it came from (ToolScope)."""


_Resolved = tuple[BannedSpellings, Parameter | None, list[Parameter]]

_RECENT_SCOPES = 64
"""How many tools' resolved spellings and requirements a run keeps to find by their records."""


class ToolScope:
    """What the examples of one tool share while they are checked, in order.

    The tool's banned spellings and extra requirements are resolved once per tool (only tools
    with examples get a scope), and ``seen`` remembers what the earlier examples did (for
    ``duplicate-example``).
    """

    __slots__ = ("always_prompts", "banned", "context", "count", "required", "seen", "tool")

    def __init__(self, context: RuleContext, tool: EffectiveTool, count: int) -> None:
        self.context = context
        self.tool = tool
        self.count = count
        """How many examples the tool has."""
        self.seen: dict[Hashable, ExampleRecord] = {}
        banned, prompting, required = _resolve(context, tool)
        self.banned: BannedSpellings = banned
        """Every spelling of every banned bypass, resolved against the options on the path."""
        self.always_prompts: Parameter | None = prompting
        """The prompted option that makes every example of the tool invalid, if there is one:
        its examples get ``always-prompts`` instead of ``missing-required``/``bypass-flag``."""
        self.required: list[Parameter] = required
        """The parameters only the rules require: the catalog's requirements and prompts."""


def _resolve(context: RuleContext, tool: EffectiveTool) -> _Resolved:
    """A tool's banned spellings, always-prompting option and rules-only requirements.

    They depend on the banned words, the parameter records on the tool's path and its own, and
    the catalog's requirements: a tool with the same as a recent one (a catalog's tools that
    state their parameters alike share the records) gets what was resolved for it. The records
    are named by identity and held by the entry, so no id is reused while it lives.
    """
    safety = tool.tool.safety
    spellings = (*context.bypass_flags, *(safety.bypass_flags if safety else ()))
    accepted = [p for node in _nodes_on_path(context.contract, tool) for p in node.accepted()]
    key = (
        spellings,
        tuple(map(id, accepted)),
        tuple(map(id, tool.parameters)),
        tool.catalog_required,
    )
    recent = context.resolved
    entry = recent.get(key)
    if entry is not None:
        return entry[1]
    banned = banned_spellings(spellings, accepted)
    prompting = always_prompting(tool, banned)
    required = [p for p in must_give(tool) if p is not prompting]
    resolved = (banned, prompting, required)
    if len(recent) >= _RECENT_SCOPES:
        del recent[next(iter(recent))]
    recent[key] = ((accepted, list(tool.parameters)), resolved)
    return resolved


class Subject:
    """One example as far as it has been checked: its record, then its words, then its binding.

    Each rule reads what it needs and finds nothing when that is not there yet. The pipeline
    fills it in stage by stage (:meth:`tokenized`, :meth:`bound_to`).
    """

    __slots__ = (
        "arguments",
        "binding",
        "bound",
        "by_framework",
        "context",
        "given",
        "ran_tool",
        "record",
        "scope",
        "tokens",
        "too_long",
        "tool",
        "words",
    )

    def __init__(self, record: ExampleRecord, scope: ToolScope) -> None:
        self.record = record
        self.scope = scope
        self.tool: EffectiveTool = scope.tool
        """The tool the example belongs to."""
        self.context: RuleContext = scope.context
        self.too_long = len(record.text) > scope.context.max_example_chars
        """Whether the text is over ``max_example_chars`` (it is then not tokenized)."""
        self.tokens: Tokens | None = None
        self.words: list[str] = []
        """Its shell words, once tokenized."""
        self.binding: Binding | None = None
        self.bound: Binding | None = None
        """The binding, when the example runs its own tool's command; else ``None``."""
        self.ran_tool = False
        """Whether the real parser (of a live tree) ran the tool's command, wherever the model
        got to."""
        self.by_framework = False
        """Whether only the real parser got to the tool's command (the model could not follow
        the group's own routing): what the example gives is then the framework's alone, named,
        with no word of the example to point at."""
        self.arguments: dict[str, Any] | None = None
        """The typed argument object, once the example bound to its own tool's command."""
        self.given: dict[str, list[Occurrence]] = {}
        """Every parameter the example gives, by the tool's name for it, once bound (when a
        rule needs it: the tool has extra requirements or constraints); with its occurrences,
        none where only the framework got to the command."""

    @property
    def contract(self) -> Contract:
        """The run's contract."""
        return self.context.contract

    def rescope(self, scope: ToolScope) -> None:
        """Check the example as one of ``scope``'s tool from now on.

        An example that belongs to no tool (a README's) is checked against the command it
        names, which is known only once it is bound.
        """
        self.scope = scope
        self.tool = scope.tool

    def tokenized(self, tokens: Tokens) -> None:
        """Note the example's shell words."""
        self.tokens = tokens
        self.words = [word.text for word in tokens.words]

    def bound_to(
        self, binding: Binding, *, real: dict[str, Any] | None = None, ran_tool: bool = False
    ) -> None:
        """Note the example's binding, and its arguments when it runs its own tool's command.

        ``real`` is the argument object the real parser of a live tree produced, and
        ``ran_tool`` whether that parser ran the tool's command: its arguments are then the
        example's even where the model bound elsewhere.
        """
        self.binding = binding
        self.ran_tool = ran_tool
        tool = self.tool
        if binding.node is None or binding.node is not tool.node:
            self.arguments = real if ran_tool else None
            if ran_tool and real is not None:
                # The rules stricter than the parser judge what the framework saw given.
                self.by_framework = True
                self.given = {name: [] for name in real}
            return
        self.bound = binding
        rules = tool.constraints
        needs_given = bool(
            self.scope.required
            or rules.require_one_of
            or rules.require_together
            or rules.mutually_exclusive
        )
        # Both read the same named occurrences: worked out once.
        named = named_occurrences(tool, binding) if real is None or needs_given else None
        self.arguments = real if real is not None else arguments_of(tool, binding, named)
        if needs_given:
            self.given = given_names(tool, binding, named)

    def span(self, word: int | None, offset: int = 0, length: int | None = None) -> Span | None:
        """The span of word ``word`` of the example (or of characters inside it)."""
        return word_span(self.tokens, word, offset, length) if self.tokens is not None else None


Rule = Callable[[Subject], Iterable[Finding]]
"""A rule: everything it finds wrong with one example, from what the example shows so far."""


def word_span(
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


def _nodes_on_path(contract: Contract, tool: EffectiveTool) -> list[CommandNode]:
    nodes = [contract.root]
    node = contract.root
    for word in tool.path:
        child = node.children.get(word)
        if child is None:
            break
        node = child
        nodes.append(node)
    return nodes
