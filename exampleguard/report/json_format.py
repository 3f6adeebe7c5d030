"""The JSON renderer: the report data itself, with stable key order."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["render_json"]


def render_json(data: dict[str, Any]) -> str:
    """Render report data as JSON text (``exampleguard.report/v1``)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
