"""``exampleguard schema KIND`` and ``exampleguard schema tool ID``."""

from __future__ import annotations

import json

from exampleguard._codes import CONFIG_INVALID
from exampleguard._commands._outcome import TextOutcome, refuse
from exampleguard._config import Config
from exampleguard._contractbuild import build_contract
from exampleguard._pipeline import InputError, load_inputs
from exampleguard._toolschema import argument_schema
from exampleguard.schemas import schema_text

__all__ = ["format_schema", "tool_schema"]


def format_schema(kind: str) -> TextOutcome:
    """``exampleguard schema KIND``: the JSON Schema generated from the format's model."""
    return TextOutcome(schema_text(kind))


def tool_schema(config: Config, tool_id: str) -> TextOutcome:
    """``exampleguard schema tool ID``: the strict argument schema of one tool."""
    try:
        inputs = load_inputs(config, with_counts=False)
    except InputError as error:
        return TextOutcome(unusable=error.diagnostics)
    contract = build_contract(inputs.catalog, inputs.tree)
    tool = next((t for t in contract.tools if t.id == tool_id), None)
    if tool is None:
        known = ", ".join(t.id for t in contract.tools[:10])
        return refuse(CONFIG_INVALID, f"the catalog has no tool {tool_id!r} (tools: {known})")
    return TextOutcome(json.dumps(argument_schema(tool), indent=2, ensure_ascii=False) + "\n")
