"""Where the two verdicts meet: the real parser's, and exampleguard's model of it.

For a live tree the framework's own parser has judged every example in the child that imported
the tree (:mod:`exampleguard._adapters.verdict`). Its verdict is the verdict; the binder's model
supplies the located, explained diagnostics. This module turns a real verdict into the terms
of the pipeline — the argument object the CLI really received, named as the tool names its
parameters, and a located problem for a rejection — and says where the model disagrees, so
that a disagreement is never silent (``model-mismatch``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from exampleguard._adapters.verdict import ParseVerdict
from exampleguard._bind import Binding, Problem
from exampleguard._contract import CommandNode, Contract, EffectiveTool

__all__ = ["Comparison", "compare", "real_arguments", "real_problem", "undecided"]


def undecided(verdict: ParseVerdict) -> str:
    """The ``parser-raised`` warning's message for a verdict that is none (SPEC 4).

    Application code raised while the framework parsed; the message names the exception, as
    the child sent it (neutralised where the diagnostic is made).
    """
    where = " ".join(verdict.path or ())
    at = f" at '{where}'" if where else ""
    return (
        f"the framework's parser could not judge this example: application code raised "
        f"{verdict.message or 'an exception'} while it parsed{at}; exampleguard's model "
        "judged it alone"
    )


def real_arguments(
    tool: EffectiveTool, contract: Contract, verdict: ParseVerdict
) -> dict[str, Any]:
    """The argument object the real parser produced, named and shaped as the binder's.

    A switch is its boolean (``True`` for a constant the snapshot does not record), an option
    given bare without its value is ``None`` (``True`` for a boolean), and everything else is
    the framework's value as JSON.
    """
    arguments: dict[str, Any] = {}
    for given in verdict.given:
        node = _node(contract, given.level)
        if node is None:
            continue
        parameter = next((p for p in node.parameters if p.name == given.name), None)
        if parameter is None:
            continue
        name = tool.origin.get(id(parameter), parameter.name if not tool.origin else None)
        if name is None:
            continue
        value = given.value
        if given.bare:
            value = True if parameter.type == "boolean" else None
        elif parameter.is_flag and not parameter.count:
            value = value if isinstance(value, bool) else True
        arguments[name] = value
    return arguments


def _node(contract: Contract, path: Sequence[str]) -> CommandNode | None:
    node = contract.root
    for word in path:
        child = node.children.get(word)
        if child is None:
            return None
        node = child
    return node


@dataclass(frozen=True, slots=True)
class Comparison:
    """How the model's verdict on one example compares with the real parser's."""

    model_accepts: bool
    real_accepts: bool
    differences: tuple[str, ...]
    """What differs where both accept: the command path, or argument values."""

    @property
    def agree(self) -> bool:
        """Whether the two verdicts, and what they bound, are the same."""
        return self.model_accepts == self.real_accepts and not self.differences

    def describe(self, problems: Sequence[Problem], verdict: ParseVerdict) -> str:
        """Both verdicts in a sentence, for the ``model-mismatch`` warning."""
        real = "accepts" if verdict.accepted else f"rejects ({verdict.message or verdict.error})"
        if self.model_accepts:
            model = "accepts"
        else:
            model = "rejects (" + "; ".join(p.message for p in problems[:3]) + ")"
        text = f"the framework's parser {real}; exampleguard's model {model}"
        if self.differences:
            text += ": " + "; ".join(self.differences)
        return text


def compare(
    binding: Binding,
    problems: Sequence[Problem],
    model_arguments: dict[str, Any] | None,
    real: dict[str, Any] | None,
    verdict: ParseVerdict,
) -> Comparison:
    """Compare the binder's result on one example with the real parser's verdict."""
    model_accepts = not problems
    differences: list[str] = []
    if model_accepts and verdict.accepted:
        model_path = tuple(binding.path) if binding.path is not None else None
        if verdict.path is not None and model_path != verdict.path:
            differences.append(
                f"the parser runs '{' '.join(verdict.path)}', the model "
                f"'{' '.join(model_path or ())}'"
            )
        elif not verdict.eager and not binding.eager and real is not None:
            ours = model_arguments or {}
            for name in sorted(set(ours) | set(real)):
                mine, theirs = ours.get(name, _ABSENT), real.get(name, _ABSENT)
                if not _same(mine, theirs):
                    differences.append(
                        f"{name}: the parser has {_show(theirs)}, the model {_show(mine)}"
                    )
        elif verdict.eager != binding.eager:
            differences.append(
                "the parser stops at an eager option"
                if verdict.eager
                else "the model stops at an eager option"
            )
    return Comparison(model_accepts, verdict.accepted, tuple(differences))


_ABSENT = object()


def _show(value: Any) -> str:
    return "nothing" if value is _ABSENT else repr(value)


def _same(left: Any, right: Any) -> bool:
    # Element by element: a NaN equals no NaN, not even itself inside a list or tuple.
    if isinstance(left, list | tuple) and type(left) is type(right):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    return type(left) is type(right) and left == right


# -- a rejection, as a located problem ------------------------------------------------------------

_ARGPARSE_CODES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ambiguous option"), "unknown-flag"),
    (re.compile(r"invalid choice"), "bad-choice"),
    (re.compile(r"invalid \S+ value"), "bad-type"),
    (re.compile(r"expected (one|\d+|at least one|at most one) argument"), "missing-value"),
    (re.compile(r"ignored explicit argument"), "unexpected-value"),
    (re.compile(r"not allowed with argument"), "mutually-exclusive"),
    (re.compile(r"one of the arguments .* is required"), "require-one-of"),
    (re.compile(r"the following arguments are required"), "missing-required"),
)

_CONSTRAINT_CODES = frozenset(
    {"require-one-of", "require-together", "mutually-exclusive", "missing-required"}
)

_CLICK_CODES: dict[str, str] = {
    "NoSuchOption": "unknown-flag",
    "NoSuchCommand": "unknown-command",
    "MissingParameter": "missing-required",
    "PromptRequired": "missing-required",
    "NoArgsIsHelpError": "not-runnable",
    "BadArgumentUsage": "extra-positional",
}


# The messages of a program that speaks the tree protocol; cobra's and pflag's words.
_PROTOCOL_CODES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(unknown (shorthand )?flag|bad flag syntax)"), "unknown-flag"),
    (re.compile(r"^unknown command"), "unknown-command"),
    (re.compile(r"^flag needs an argument"), "missing-value"),
    (re.compile(r"^invalid argument .* flag"), "bad-type"),
    (re.compile(r"^invalid argument"), "bad-choice"),
    (re.compile(r"^required flag"), "missing-required"),
    (re.compile(r"are set they must all be set"), "require-together"),
    (re.compile(r"are set none of the others can be"), "mutually-exclusive"),
    (re.compile(r"at least one of the flags in the group"), "require-one-of"),
    (re.compile(r"^requires at least"), "missing-required"),
    (re.compile(r"^accepts at most"), "extra-positional"),
)
_COUNTED = re.compile(r"^accepts (?:between )?(\d+)(?: and \d+)? arg\(s\), received (\d+)")


def _protocol_code(message: str) -> str:
    counted = _COUNTED.match(message)
    if counted is not None:
        low, received = map(int, counted.groups())
        return "missing-required" if received < low else "extra-positional"
    for pattern, code in _PROTOCOL_CODES:
        if pattern.search(message):
            return code
    return "not-runnable"


def real_problem(verdict: ParseVerdict, words: Sequence[str]) -> Problem:
    """The real parser's rejection as a problem: the closest registered code, at its word.

    ``words`` are the example's words, the program first. Used where the framework rejects an
    example the model accepted: the example fails, with the framework's own message.
    """
    code = _code(verdict)
    at = _word_index(verdict.word, words)
    message = verdict.message or verdict.error or "rejected"
    if code == "not-runnable" and verdict.error == "NoArgsIsHelpError":
        level = " ".join([*words[:1], *(verdict.path or ())])
        message = (
            f"'{level}' prints its help and exits: an example that ends in the help text "
            "teaches an agent nothing"
        )
    return Problem(
        code,
        f"{message} (the framework's own parser)",
        word=at,
        hint="exampleguard's model of this parser disagreed; the framework's verdict stands.",
    )


def _code(verdict: ParseVerdict) -> str:
    error = verdict.error or ""
    message = verdict.message or ""
    if error == "ProtocolError":
        return _protocol_code(message)
    if error == "ConstraintViolated":
        # The child named the rule broken; only the constraint codes are taken from it.
        return verdict.constraint if verdict.constraint in _CONSTRAINT_CODES else "require-one-of"
    if error in _CLICK_CODES:
        return _CLICK_CODES[error]
    if error == "BadOptionUsage":
        return "missing-value" if "requires" in message else "unexpected-value"
    if error == "BadParameter":
        return (
            "bad-choice" if "is not one of" in message or "choose from" in message else "bad-type"
        )
    if error == "UsageError":
        if message.startswith("Missing command"):
            return "not-runnable"
        if "extra argument" in message:
            return "extra-positional"
        if "No such command" in message:
            return "unknown-command"
        return "bad-type"
    if error == "ArgumentError":
        if message.startswith("unrecognized arguments:"):
            rest = message.split(":", 1)[1].strip()
            return "unknown-flag" if rest.startswith("-") else "extra-positional"
        for pattern, code in _ARGPARSE_CODES:
            if pattern.search(message):
                if code == "bad-choice" and verdict.parameter is None:
                    return "unknown-command"
                if code == "missing-required" and verdict.level is None and "command" in message:
                    return "not-runnable"
                return code
    return "not-runnable"


def _word_index(word: str | None, words: Sequence[str]) -> int | None:
    if not word:
        return None
    for index, text in enumerate(words):
        if index and (text == word or text.split("=", 1)[0] == word):
            return index
    return None
