"""Every rule, one function each, all with the signature ``rule(subject) -> findings``.

A rule reads what it needs from the :class:`Subject` and returns what it finds, or nothing when
the example has not got that far (no words, no binding to its own command). Rules never print
and never locate anything in a file: the pipeline does that through the example's origin.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from exampleguard._bind import Occurrence, Role
from exampleguard._codes import (
    ALWAYS_PROMPTS,
    BYPASS_FLAG,
    DRYRUN_DISABLED,
    DUPLICATE_EXAMPLE,
    DYNAMIC_COMMAND,
    EXAMPLE_TOO_LONG,
    MISSING_REQUIRED,
    MUTUALLY_EXCLUSIVE,
    REQUIRE_ONE_OF,
    REQUIRE_TOGETHER,
    TOO_MANY_EXAMPLES,
    TOOL_UNBOUND,
    WRONG_COMMAND,
    WRONG_PROGRAM,
)
from exampleguard._contract import EffectiveTool
from exampleguard._diagnostics import Related, Span
from exampleguard._rules._binding import duplicate_key
from exampleguard._rules._subject import Finding, Subject

if TYPE_CHECKING:
    from exampleguard._model import Parameter

__all__ = [
    "MAX_EXAMPLES",
    "PREVIEW_FLAGS",
    "always_prompts",
    "bypass_flags",
    "constraints",
    "dryrun_disabled",
    "duplicate_example",
    "example_too_long",
    "missing_required",
    "too_many_examples",
    "tool_unbound",
    "wrong_command",
    "wrong_program",
]

MAX_EXAMPLES = 2
"""Examples per tool beyond which every further one is ``too-many-examples``."""

_NOTHING: tuple[Finding, ...] = ()

_OFF_WORDS = frozenset({"0", "no", "n", "false", "f", "off", ""})
"""Values that turn a boolean option off, for Click's ``BOOL`` and the usual ``str2bool``
converters alike (compared stripped and lower-cased)."""


# -- the text ------------------------------------------------------------------------------------


def too_many_examples(subject: Subject) -> Sequence[Finding]:
    """``too-many-examples``: every example of a tool beyond the second."""
    if subject.record.index < MAX_EXAMPLES:
        return _NOTHING
    return (
        Finding(
            TOO_MANY_EXAMPLES,
            f"{subject.tool.id} has {subject.scope.count} examples; at most {MAX_EXAMPLES} are "
            "allowed",
            hint="Keep the two most useful examples.",
        ),
    )


def example_too_long(subject: Subject) -> Sequence[Finding]:
    """``example-too-long``: a text over ``max_example_chars`` (it is not tokenized then)."""
    if not subject.too_long:
        return _NOTHING
    limit = subject.context.max_example_chars
    return (
        Finding(
            EXAMPLE_TOO_LONG,
            f"the example is {len(subject.record.text)} characters long; the limit is {limit}",
            hint="Shorten it, or raise `max_example_chars`.",
        ),
    )


# -- the words -----------------------------------------------------------------------------------


def wrong_program(subject: Subject) -> Sequence[Finding]:
    """``wrong-program``: the first word is not the program (or there is no word at all)."""
    program = subject.context.contract.program
    if not subject.words:
        if subject.tokens is None or subject.tokens.problems:
            # A shell problem already says why there is no word.
            return _NOTHING
        return (Finding(WRONG_PROGRAM, f"the example is empty; it must start with '{program}'"),)
    if subject.words[0] == program:
        return _NOTHING
    return (
        Finding(
            WRONG_PROGRAM,
            f"the example runs '{subject.words[0]}', not '{program}'",
            hint=f"Start the example with '{program}'.",
            span=subject.span(0),
        ),
    )


def tool_unbound(subject: Subject) -> Sequence[Finding]:
    """``tool-unbound`` on each example of a tool whose command the tree does not have.

    Nothing passes unchecked: an example that cannot be checked fails with a diagnostic of its
    own (the tool's command is reported once on the tool too).
    """
    tool = subject.tool
    if tool.node is not None or not subject.words:
        return _NOTHING
    command = " ".join([subject.context.contract.program, *tool.tool.command])
    if tool.created_by is not None:
        return (
            Finding(
                DYNAMIC_COMMAND,
                f"the example cannot be checked: '{command}' is not in the tree, and "
                f"{tool.created_by} may create it only at run time",
                hint="See the dynamic-command error on the tool.",
            ),
        )
    return (
        Finding(
            TOOL_UNBOUND,
            f"the example cannot be checked: {tool.id}'s command '{command}' is not a runnable "
            "command of the tree",
            hint="Fix the tool's `command` (see the tool-unbound error on the tool).",
        ),
    )


# -- the binding ---------------------------------------------------------------------------------


def wrong_command(subject: Subject) -> Sequence[Finding]:
    """``wrong-command``: the example binds to another command than its tool's."""
    binding = subject.binding
    if binding is None or binding.node is None or subject.bound is not None or subject.ran_tool:
        return _NOTHING
    program = subject.context.contract.program
    node = binding.node
    other = node.tool.id if node.tool is not None else None
    shown = " ".join([program, *node.path])
    return (
        Finding(
            WRONG_COMMAND,
            f"the example runs '{shown}'"
            + (f", the command of {other}," if other else "")
            + f" not '{' '.join([program, *subject.tool.path])}'",
            hint="Move the example to the tool whose command it runs.",
        ),
    )


def missing_required(subject: Subject) -> Sequence[Finding]:
    """``missing-required`` beyond the framework's: the catalog's, and options that prompt."""
    required = subject.scope.required
    if not required or not _runs_tool(subject):
        return _NOTHING
    findings: list[Finding] = []
    given = subject.given
    for parameter in required:
        if parameter.name in given:
            continue
        if parameter.prompt:
            message = (
                f"{parameter.display()} is missing, so the command would prompt for it; an "
                "agent cannot answer a prompt"
            )
        elif parameter.name in subject.tool.catalog_required:
            message = f"the catalog requires {parameter.display()}"
        else:
            continue
        findings.append(
            Finding(MISSING_REQUIRED, message, hint=f"Give {parameter.display()} in the example.")
        )
    return findings


def always_prompts(subject: Subject) -> Sequence[Finding]:
    """``always-prompts``: the command asks for confirmation unless a bypass is given.

    One finding per example that runs the tool's command, instead of ``missing-required``
    (without the flag) or ``bypass-flag`` (with it): the example cannot be fixed, the command
    must change.
    """
    binding = subject.bound
    parameter = subject.scope.always_prompts
    if binding is None or binding.eager or parameter is None:
        return _NOTHING
    flag = parameter.display()
    command = " ".join([subject.context.contract.program, *subject.tool.path])
    way_past = (
        f"{flag} only answers the prompt"
        if parameter.confirmation
        else f"{flag} is a banned confirmation bypass"
    )
    given = next(
        (
            o
            for o in binding.occurrences
            if not o.negated and set(parameter.flags).intersection(o.parameter.flags)
        ),
        None,
    )
    preview = _preview_flag(subject.tool)
    change = (
        f"skip the prompt when {preview} is given, and show {preview} in the example"
        if preview is not None
        else "give it a preview flag that skips the prompt, and show that in the example"
    )
    return (
        Finding(
            ALWAYS_PROMPTS,
            f"'{command}' always asks for confirmation: without {flag} it stops at a prompt an "
            f"agent cannot answer, and {way_past}; no example of it can be valid",
            hint=f"Change the command: {change} (`exampleguard explain always-prompts`).",
            span=subject.span(given.word, given.offset, given.length) if given else None,
        ),
    )


def _preview_flag(tool: EffectiveTool) -> str | None:
    capability = tool.dry_run
    if capability is not None and capability.flag is not None:
        return capability.flag
    for parameter in tool.parameters:
        for flag in parameter.flags:
            if flag in PREVIEW_FLAGS:
                return flag
    return None


PREVIEW_FLAGS = ("--dry-run", "--dryrun", "--preview", "--check", "--plan", "--what-if")
"""Option strings that, by wide convention, ask a command for a preview of what it would do."""


def constraints(subject: Subject) -> Sequence[Finding]:
    """``require-one-of``, ``require-together`` and ``mutually-exclusive`` (SPEC semantics)."""
    rules = subject.tool.constraints
    if not _runs_tool(subject):
        return _NOTHING
    if not (rules.require_one_of or rules.require_together or rules.mutually_exclusive):
        return _NOTHING
    display = _Display(subject.tool)
    given = subject.given
    findings: list[Finding] = []
    for group in rules.require_one_of:
        if not any(name in given for name in group):
            findings.append(
                Finding(
                    REQUIRE_ONE_OF,
                    f"one of {display.all(group)} is required",
                    hint=f"Give one of {display.all(group)}.",
                )
            )
    for group in rules.require_together:
        present = [name for name in group if name in given]
        if present and len(present) < len(group):
            missing = [name for name in group if name not in given]
            findings.append(
                Finding(
                    REQUIRE_TOGETHER,
                    f"{display.all(present)} must be given together with {display.all(missing)}",
                    hint=f"Add {display.all(missing)}, or remove {display.all(present)}.",
                    span=_span_of(subject, given[present[0]]),
                )
            )
    for group in rules.mutually_exclusive:
        findings.extend(_exclusive(subject, given, group, display))
    return findings


def _exclusive(
    subject: Subject,
    given: dict[str, list[Occurrence]],
    group: Sequence[str],
    display: _Display,
) -> list[Finding]:
    present = [name for name in group if name in given]
    if len(present) < 2:
        return []
    ordered = sorted(present, key=lambda name: _first_word(given[name]))
    first = given[ordered[0]][0] if given[ordered[0]] else None
    related = (
        (Related(f"{display.one(ordered[0])} given here", span=subject.span(first.word)),)
        if first is not None and first.word >= 0
        else ()
    )
    findings: list[Finding] = []
    for name in ordered[1:]:
        findings.append(
            Finding(
                MUTUALLY_EXCLUSIVE,
                f"{display.one(name)} cannot be combined with {display.one(ordered[0])}",
                hint=f"Keep one of {display.all(present)}.",
                span=_span_of(subject, given[name]),
                related=related,
            )
        )
    return findings


def _runs_tool(subject: Subject) -> bool:
    """Whether the example runs its tool's command, past any eager option (model or framework)."""
    binding = subject.bound
    if binding is not None:
        return not binding.eager
    return subject.by_framework


def _span_of(subject: Subject, occurrences: list[Occurrence]) -> Span | None:
    """The span of the first of ``occurrences`` in the example, where the model located one."""
    if not occurrences or occurrences[0].word < 0:
        return None
    first = occurrences[0]
    return subject.span(first.word, first.offset, first.length)


class _Display:
    """Parameter names as people read them, computed only when a message needs one."""

    def __init__(self, tool: EffectiveTool) -> None:
        self._tool = tool

    def one(self, name: str) -> str:
        parameter = self._tool.parameter(name)
        return parameter.display() if parameter is not None else name

    def all(self, names: Iterable[str]) -> str:
        return ", ".join(self.one(name) for name in names)


def _first_word(occurrences: list[Occurrence]) -> int:
    return min((o.word for o in occurrences if o.word >= 0), default=1 << 30)


def bypass_flags(subject: Subject) -> Sequence[Finding]:
    """``bypass-flag``: confirmation bypasses, in every spelling with the same effect.

    A banned spelling bans its parameter's other option strings too (``-y`` for ``--yes``, in a
    bundle, abbreviated), but not the parameter's negation. A banned word that is another
    option's value, or that comes after ``--``, is data (SPEC 4 step 5).
    """
    binding = subject.bound
    banned = subject.scope.banned
    if not banned.words:
        return _NOTHING
    if binding is None:
        return _bypass_flags_given(subject) if subject.by_framework else _NOTHING
    findings: list[Finding] = []
    flagged_words: set[int] = set()
    prompting = subject.scope.always_prompts
    # The flag of a command that always prompts is reported once, as always-prompts.
    answers = frozenset(prompting.flags) if prompting is not None else frozenset()
    words_banned = banned.words
    for occurrence in binding.occurrences:
        parameter = occurrence.parameter
        if parameter.positional:
            continue
        negated = occurrence.negated
        if answers and not negated and not answers.isdisjoint(parameter.flags):
            flagged_words.add(occurrence.word)
            continue
        spelling = banned.pairs.get((id(parameter), negated))
        if spelling is None:
            # A catalog-only group option is a different object from the tool's own parameter;
            # compare by option strings (most options have none banned: one set operation).
            strings = parameter.negation_flags if negated else parameter.flags
            if words_banned.isdisjoint(strings):
                continue
            spelling = next(spelling for spelling in strings if spelling in words_banned)
        flagged_words.add(occurrence.word)
        same = (
            "" if occurrence.spelling == spelling else f" ({occurrence.spelling} means {spelling})"
        )
        findings.append(
            Finding(
                BYPASS_FLAG,
                f"{occurrence.spelling} skips the command's confirmation{same}",
                hint=_REMOVE_BYPASS,
                span=subject.span(occurrence.word, occurrence.offset, occurrence.length),
            )
        )
    text = subject.record.text
    for word in words_banned:
        if word in text:
            break
    else:
        # No banned word appears anywhere in the example: no word can be one.
        return findings
    words = subject.words
    separator = next(
        (i for i, role in enumerate(binding.roles) if role is Role.SEPARATOR), len(words)
    )
    for index, word in enumerate(words):
        if index == 0 or index in flagged_words or index > separator:
            continue
        if binding.roles[index] in (Role.VALUE, Role.SEPARATOR, Role.COMMAND):
            continue
        head = word.split("=", 1)[0]
        if head in banned.words and head not in answers:
            findings.append(_undeclared_ban(subject, index, head))
    return findings


def _undeclared_ban(subject: Subject, index: int, head: str) -> Finding:
    """``bypass-flag`` on a banned word the command does not declare (also ``unknown-flag``).

    It skips no confirmation of this command: the message says why it is reported all the same.
    """
    safety = subject.tool.tool.safety
    if safety is not None and head in safety.bypass_flags:
        source = "the tool's safety.bypass_flags"
    else:
        source = "the configuration's bypass_flags"
    command = " ".join([subject.scope.context.contract.program, *subject.tool.path])
    return Finding(
        BYPASS_FLAG,
        f"{head} is a confirmation bypass, banned in every example by {source}; "
        f"'{command}' does not declare it",
        hint="Remove it.",
        span=subject.span(index, 0, len(head)),
    )


def _banned_word(subject: Subject, index: int, head: str, *, hint: str) -> Finding:
    """``bypass-flag`` on word ``index`` of the example, spelled ``head``."""
    return Finding(
        BYPASS_FLAG,
        f"{head} skips the command's confirmation",
        hint=hint,
        span=subject.span(index, 0, len(head)),
    )


_REMOVE_BYPASS = "Remove it; show the command's preview (dry-run) flag instead if it has one."


def _bypass_flags_given(subject: Subject) -> list[Finding]:
    """``bypass-flag`` where only the framework got to the command, from what it saw given.

    A banned word counts where the framework received the option it spells (else the word was
    a value); a banned option received through another spelling (a bundle, an abbreviation)
    is reported by its banned name. A negation counts only where it was what took effect.
    """
    banned = subject.scope.banned.words
    received = subject.arguments or {}
    findings: list[Finding] = []
    reported: set[str] = set()
    for index, word in enumerate(subject.words):
        if word == "--":
            break
        head = word.split("=", 1)[0]
        if index == 0 or head not in banned:
            continue
        owner = _owner(subject.tool, head)
        if owner is None or owner.name in reported or not _took_effect(owner, head, received):
            continue
        reported.add(owner.name)
        findings.append(_banned_word(subject, index, head, hint=_REMOVE_BYPASS))
    for parameter in subject.tool.parameters:
        if parameter.name in reported:
            continue
        spelling = next(
            (
                flag
                for flag in (*parameter.flags, *parameter.negation_flags)
                if flag in banned and _took_effect(parameter, flag, received)
            ),
            None,
        )
        if spelling is not None:
            findings.append(
                Finding(
                    BYPASS_FLAG,
                    f"{spelling} is given (as the command's own parser read the example) and "
                    "skips the command's confirmation",
                    hint="Remove it.",
                )
            )
    return findings


def _took_effect(parameter: Parameter, spelling: str, received: dict[str, object]) -> bool:
    """Whether the framework received ``parameter`` as ``spelling`` sets it (not its opposite)."""
    if parameter.name not in received:
        return False
    value = received[parameter.name]
    if spelling in parameter.negation_flags:
        return value is False
    return value is not False


def _owner(tool: EffectiveTool, flag: str) -> Parameter | None:
    """The tool's parameter that ``flag`` is an option string (or a negation) of."""
    for parameter in tool.parameters:
        if flag in parameter.flags or flag in parameter.negation_flags:
            return parameter
    return None


def dryrun_disabled(subject: Subject) -> Sequence[Finding]:
    """``dryrun-disabled``: an example of a previewable tool that turns its preview off.

    Any occurrence counts, even one a later ``--dry-run`` overrides: the negation of the
    dry-run flag (``--no-dry-run``), that flag's parameter given a value that means off
    (``--dry-run=false``), or another switch storing into the same destination (``--apply``
    next to ``--dry-run``, both setting ``mode``). The dry run would otherwise run the real
    command.
    """
    capability = subject.tool.dry_run
    binding = subject.bound
    if capability is None or capability.flag is None:
        return _NOTHING
    if binding is None:
        return _dryrun_disabled_given(subject, capability.flag) if subject.by_framework else ()
    flag = capability.flag.partition("=")[0]
    node = binding.node
    # A switch sharing the preview's destination (Click's feature switches, argparse's shared
    # dest) overwrites the value the preview flag sets, whichever of them comes last.
    destinations = {
        p.destination
        for p in (node.accepted() if node is not None else ())
        if p.destination is not None and flag in p.flags
    }
    findings: list[Finding] = []
    for occurrence in binding.occurrences:
        parameter = occurrence.parameter
        if parameter.positional:
            continue
        if flag not in parameter.flags:
            if parameter.destination not in destinations:
                continue
            what = (
                f"{occurrence.spelling} stores into {parameter.destination!r}, where the preview "
                f"flag {flag} keeps its setting: the dry run could run the real command"
            )
        elif occurrence.negated:
            what = (
                f"{occurrence.spelling} is the negation of the preview flag {flag}: the dry run "
                "would run the real command"
            )
        elif any(piece.text.strip().lower() in _OFF_WORDS for piece in occurrence.values):
            value = occurrence.values[0].text
            what = (
                f"{occurrence.spelling} {value!r} turns the preview flag {flag} off: the dry run "
                "would run the real command"
            )
        else:
            continue
        findings.append(
            Finding(
                DRYRUN_DISABLED,
                what,
                hint=f"Remove it; the dry run adds {capability.flag} itself.",
                span=subject.span(occurrence.word, occurrence.offset, occurrence.length),
            )
        )
    return findings


def _dryrun_disabled_given(subject: Subject, preview: str) -> Sequence[Finding]:
    """``dryrun-disabled`` where only the framework got to the command, from what it received.

    The preview flag's parameter received as off (its negation, a value that means off), or
    another switch sharing its destination given at all.
    """
    flag = preview.partition("=")[0]
    received = subject.arguments or {}
    owner = _owner(subject.tool, flag)
    if owner is None:
        return _NOTHING
    findings: list[Finding] = []
    value = received.get(owner.name)
    if owner.name in received and (
        value is False or (isinstance(value, str) and value.strip().lower() in _OFF_WORDS)
    ):
        findings.append(
            Finding(
                DRYRUN_DISABLED,
                f"the preview flag {flag} is received as off (as the command's own parser read "
                "the example): the dry run would run the real command",
                hint=f"Remove what turns it off; the dry run adds {preview} itself.",
            )
        )
    for parameter in subject.tool.parameters:
        if (
            parameter is not owner
            and owner.destination is not None
            and parameter.destination == owner.destination
            and parameter.name in received
        ):
            findings.append(
                Finding(
                    DRYRUN_DISABLED,
                    f"{parameter.display()} stores into {owner.destination!r}, where the preview "
                    f"flag {flag} keeps its setting: the dry run could run the real command",
                    hint=f"Remove it; the dry run adds {preview} itself.",
                )
            )
    return findings


# -- the arguments -------------------------------------------------------------------------------


def duplicate_example(subject: Subject) -> Sequence[Finding]:
    """``duplicate-example``: the example does what an earlier example of its tool does.

    Two examples are the same when they bind to the same path and the same argument object,
    however spelled; the later one is reported, pointing at the earlier. The pipeline compares
    only examples that bound without errors.
    """
    binding = subject.binding
    # Where only the framework got to the command, the command is the tool's own.
    path = subject.tool.path if subject.by_framework else binding.path if binding else None
    if path is None or subject.arguments is None:
        return _NOTHING
    key = duplicate_key(path, subject.arguments)
    earlier = subject.scope.seen.setdefault(key, subject.record)
    if earlier is subject.record:
        return _NOTHING
    return (
        Finding(
            DUPLICATE_EXAMPLE,
            f"the example does the same as {earlier.address} ({earlier.text!r})",
            hint="Replace it with an example that shows something different.",
            related=(Related(f"{earlier.address} is the same", region=earlier.region()),),
        ),
    )
