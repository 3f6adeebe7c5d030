"""The rules: stricter than any parser, on purpose.

The binder answers "would the framework accept this?". The rules answer "should an agent copy
this?": the limits on a tool's examples, the program and command an example runs, requirements
the catalog adds, options the command would prompt for, the require-one-of / require-together /
mutually-exclusive constraints, banned confirmation bypasses, a preview switched off, and no two
examples of a tool doing the same.

Every rule is a function ``rule(subject) -> findings`` (:data:`Rule`); a finding names its
:class:`~exampleguard._codes.Code`. The tuples below say when the pipeline applies each rule: a
rule belongs to the first stage at which everything it reads is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from exampleguard._rules._binding import arguments_of, effective_name
from exampleguard._rules._checks import (
    MAX_EXAMPLES,
    PREVIEW_FLAGS,
    always_prompts,
    bypass_flags,
    constraints,
    dryrun_disabled,
    duplicate_example,
    example_too_long,
    missing_required,
    too_many_examples,
    tool_unbound,
    wrong_command,
    wrong_program,
)
from exampleguard._rules._subject import Finding, Rule, RuleContext, Subject, ToolScope, word_span

__all__ = [
    "BINDING_RULES",
    "CATALOG_STAGES",
    "MAX_EXAMPLES",
    "NAMED_STAGES",
    "PREVIEW_FLAGS",
    "TEXT_RULES",
    "TOOL_RULES",
    "WORD_RULES",
    "Finding",
    "Rule",
    "RuleContext",
    "Stages",
    "Subject",
    "ToolScope",
    "arguments_of",
    "effective_name",
    "word_span",
]

TEXT_RULES: tuple[Rule, ...] = (too_many_examples, example_too_long)
"""On the example's text alone, before it is tokenized (a text that is too long never is)."""

WORD_RULES: tuple[Rule, ...] = (wrong_program, tool_unbound)
"""On its shell words (an example of a tool that did not bind to the tree stops there)."""

BINDING_RULES: tuple[Rule, ...] = (
    wrong_command,
    always_prompts,
    missing_required,
    constraints,
    bypass_flags,
    dryrun_disabled,
)
"""On its binding to the command tree."""

TOOL_RULES: tuple[Rule, ...] = (duplicate_example,)
"""Against the tool's earlier examples, last, for an example without an error: the earlier
ones are all checked by then."""


@dataclass(frozen=True, slots=True)
class Stages:
    """The rules applied at each stage to one kind of example."""

    text: tuple[Rule, ...]
    word: tuple[Rule, ...]
    binding: tuple[Rule, ...]
    tool: tuple[Rule, ...]


CATALOG_STAGES = Stages(TEXT_RULES, WORD_RULES, BINDING_RULES, TOOL_RULES)
"""A catalog tool's example: every rule."""

NAMED_STAGES = Stages(
    text=(example_too_long,),
    word=(wrong_program,),
    binding=(always_prompts, missing_required, constraints, bypass_flags),
    tool=(),
)
"""An example that belongs to no tool (documentation, help text): every rule about one example
on its own, against the command it names (its catalog tool's rules when one has that command).
The rules about a tool's set of examples (how many, duplicates, which tool) do not apply."""
