"""JSON Schemas of every file format, generated from the models.

The generated schemas are also committed next to this module (``catalog.schema.json`` …) so
editors and other tools can use them without running exampleguard; a test checks the committed
copies still match the models.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

__all__ = [
    "SCHEMA_KINDS",
    "committed_schema_path",
    "generate_schema",
    "schema_id",
    "schema_text",
]

SCHEMA_KINDS = (
    "catalog",
    "tree",
    "judge",
    "dispositions",
    "exclusions",
    "doc-exceptions",
    "counts",
    "report",
    "config",
)

_TITLES = {
    "catalog": "exampleguard.catalog/v1",
    "tree": "exampleguard.tree/v1",
    "judge": "exampleguard tree protocol: one verdict line of `PROGRAM __exampleguard judge`",
    "dispositions": "exampleguard dispositions file (dispositions/*.toml)",
    "exclusions": "exampleguard coverage exclusions (dispositions/exclusions.toml)",
    "doc-exceptions": "exampleguard doc exceptions (dispositions/doc-exceptions.toml)",
    "counts": "exampleguard.counts/v1",
    "report": "exampleguard.report/v1",
    "config": "[tool.exampleguard] / exampleguard.toml",
}


# Each format's model, by module and name: imported when its schema is asked for, so that
# `exampleguard --help` never pays for every model.
_MODELS = {
    "catalog": ("exampleguard._catalog", "Catalog"),
    "tree": ("exampleguard._snapshot", "Tree"),
    "judge": ("exampleguard._snapshot", "JudgeVerdict"),
    "dispositions": ("exampleguard._dispositions.records", "DispositionFile"),
    "exclusions": ("exampleguard._dispositions.records", "ExclusionFile"),
    "doc-exceptions": ("exampleguard._dispositions.records", "DocExceptionFile"),
    "counts": ("exampleguard._counts", "Counts"),
    "report": ("exampleguard._report.model", "Report"),
    "config": ("exampleguard._config", "Settings"),
}


def _model(kind: str) -> type[BaseModel]:
    module, name = _MODELS[kind]
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return model


# The JSON formats whose files may name their schema in a top-level `$schema` key, which
# exampleguard accepts and sets aside (exampleguard._documents.SCHEMA_KEY).
_SCHEMA_KEYED = frozenset({"catalog", "tree", "counts", "report"})


def schema_id(kind: str) -> str:
    """The stable ``$id`` of the schema of ``kind``: a URN, since the project owns no URL."""
    return f"urn:exampleguard:schema:{kind}:v1"


def generate_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the format ``kind``, generated from its model."""
    schema = _model(kind).model_json_schema(mode="validation")
    if kind in _SCHEMA_KEYED:
        schema["properties"] = {
            "$schema": {
                "description": "Where an editor finds this file's JSON Schema (a URL or a path); "
                "exampleguard accepts it and otherwise ignores it.",
                "type": "string",
            },
            **schema["properties"],
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id(kind),
        **schema,
        "title": _TITLES[kind],
    }


def schema_text(kind: str) -> str:
    """The schema of ``kind`` as the text that is printed and committed."""
    return json.dumps(generate_schema(kind), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def committed_schema_path(kind: str) -> Path:
    """Where the committed copy of the schema of ``kind`` lives."""
    return Path(__file__).with_name(f"{kind}.schema.json")
