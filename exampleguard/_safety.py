"""Safety metadata against the real command: confirmation gates and bypass flags.

Agents read a tool's ``safety`` to decide whether to ask their user first, so with a tree
configured it must say what the command does (``safety-drift`` otherwise):

- a command with a confirmation gate the tree can see — a Click ``confirmation_option`` (a
  prompted flag whose value the command never sees) or a prompted yes/no flag — must say
  ``"confirmation": "required"``;
- a command said to require confirmation must show a gate, or a banned bypass flag it accepts
  (the gate then lives in application code, and the flag is its evidence), or a reviewed record
  in ``dispositions/gates.toml`` that says where the gate is;
- every flag of a tool's own ``bypass_flags`` must be one the command accepts;
- the flag that answers a visible gate must be banned (the tool's ``bypass_flags`` or the
  configuration's), under any of its spellings.

What the tree cannot see: a ``click.confirm``/``input()`` in a command's body, and any prompt of
an argparse program (argparse has none). Those are what gate records are for.
"""

from __future__ import annotations

from collections.abc import Sequence

from exampleguard._codes import GATE_DUPLICATE, GATE_INVALID, GATE_STALE, SAFETY_DRIFT
from exampleguard._contract import Contract, EffectiveTool
from exampleguard._diagnostics import Diagnostic
from exampleguard._dispositions.records import Gate, Record, is_concrete_reason
from exampleguard._documents import Document
from exampleguard._model import Parameter

__all__ = ["check_safety", "gate_parameters"]


def gate_parameters(parameters: Sequence[Parameter]) -> list[Parameter]:
    """The parameters that are a confirmation gate: giving one answers a yes/no prompt."""
    return [p for p in parameters if p.confirmation or (p.prompt and p.is_flag)]


def check_safety(
    contract: Contract,
    document: Document,
    gates: Sequence[Record[Gate]],
    banned: Sequence[str],
) -> list[Diagnostic]:
    """Every ``safety-drift`` of the catalog's tools, and the defects of the gate records.

    ``banned`` is the configuration's ``bypass_flags``; ``document`` the catalog's, for the
    locations. Without a tree nothing is checked but the records (which then mean nothing).
    """
    found: list[Diagnostic] = []
    reviewed = _reviewed_gates(contract, gates, found)
    if contract.tree is None:
        return found
    for tool in contract.tools:
        if tool.node is None:
            # Unbound: reported as such; there is no command to compare with.
            continue
        found += _drift(tool, document, reviewed.get(tool.id), banned)
    return found


def _reviewed_gates(
    contract: Contract, gates: Sequence[Record[Gate]], found: list[Diagnostic]
) -> dict[str, Record[Gate]]:
    """The valid gate records by tool id; the defects of the others go to ``found``."""
    tools = {tool.id for tool in contract.tools}
    kept: dict[str, Record[Gate]] = {}
    for record in gates:
        gate = record.value
        if contract.tree is None:
            found.append(
                record.problem(
                    GATE_INVALID,
                    "gates are only checked against a command tree, and none is configured",
                    "Configure `tree`, or delete dispositions/gates.toml.",
                )
            )
            continue
        if gate.tool not in tools:
            found.append(record.problem(GATE_INVALID, "the catalog has no such tool"))
            continue
        if not is_concrete_reason(gate.reason, ""):
            found.append(
                record.problem(GATE_INVALID, f"the reason {gate.reason.strip()!r} is not concrete")
            )
            continue
        if gate.tool in kept:
            found.append(
                record.problem(
                    GATE_DUPLICATE,
                    f"the tool already has a gate record at {kept[gate.tool].location}",
                    "Keep one record per tool.",
                )
            )
            continue
        kept[gate.tool] = record
    return kept


def _drift(
    tool: EffectiveTool,
    document: Document,
    record: Record[Gate] | None,
    banned: Sequence[str],
) -> list[Diagnostic]:
    safety = tool.tool.safety
    confirmation = safety.confirmation if safety is not None else None
    own_bypass = list(safety.bypass_flags) if safety is not None else []
    accepted = {flag for p in tool.parameters for flag in p.all_flags}
    gates = gate_parameters(tool.parameters)
    answers = [p.flags[0] for p in gates if p.flags]
    all_banned = {*own_bypass, *banned}
    where = ("tools", tool.index, "safety") if safety is not None else ("tools", tool.index)
    # Placed by the report builder, and only if there is a drift to report.
    region = document.region(where)
    found: list[Diagnostic] = []

    def drift(message: str, hint: str) -> None:
        found.append(
            SAFETY_DRIFT.diagnostic(f"{tool.id}: {message}", hint=hint, tool=tool.id, region=region)
        )

    if gates and confirmation != "required":
        said = "absent" if confirmation is None else f'"{confirmation}"'
        drift(
            f"the command asks for confirmation ({', '.join(answers)} answers it), but "
            f"safety.confirmation is {said}",
            'Say "confirmation": "required": an agent that calls it unasked hangs on the prompt.',
        )
    visible_bypass = sorted(all_banned & accepted)
    if confirmation == "required" and not gates and not visible_bypass:
        if record is None:
            drift(
                'safety.confirmation is "required", but the command shows no gate: no '
                "confirmation option, no prompted yes/no flag, and none of the bypass flags "
                f"({', '.join(sorted(all_banned)) or 'none'}) among its options",
                "If the command asks in its own code (click.confirm, input()), record that "
                "with its evidence in dispositions/gates.toml; otherwise say "
                '"confirmation": "none".',
            )
    elif record is not None:
        why = (
            'its confirmation is not "required"'
            if confirmation != "required"
            else "the tree shows its gate ("
            + ", ".join([*answers, *visible_bypass])
            + ") without it"
        )
        found.append(record.problem(GATE_STALE, f"nothing to silence: {why}", "Delete the record."))
    for flag in own_bypass:
        if flag not in accepted:
            drift(
                f"safety.bypass_flags names {flag}, which the command does not have",
                "List the flags that really skip the command's confirmation; a ban on a flag "
                "that does not exist protects nothing.",
            )
    for parameter in gates:
        if parameter.flags and not set(parameter.flags) & all_banned:
            drift(
                f"{parameter.flags[0]} answers the command's confirmation, and neither "
                "safety.bypass_flags nor the configuration's bypass_flags lists it",
                f"Add {parameter.flags[0]} to the tool's safety.bypass_flags, so that no "
                "example can skip the confirmation.",
            )
    return found
