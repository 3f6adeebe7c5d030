"""The JSON renderer: the report data itself, with stable key order."""

from __future__ import annotations

import itertools
import json
from typing import Any

__all__ = ["render_json"]

# Chunks of the encoder joined at a time: enough to make joining cheap, few enough that the
# chunks never outweigh the text they make.
_CHUNKS_PER_PIECE = 8192


def render_json(data: Any) -> str:
    """Render report data (or a SARIF log) as indented JSON text ending in a newline.

    The text is ``json.dumps(data, indent=2, ensure_ascii=False)``, built in bounded memory:
    with an indent, ``json.dumps`` collects every one of the encoder's small chunks — several per
    value — before joining them, and for a report of 50,000 examples that list alone outweighs
    the report. Joining a few thousand at a time keeps the overhead to about the text itself.
    """
    chunks = json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(data)
    pieces = []
    while batch := list(itertools.islice(chunks, _CHUNKS_PER_PIECE)):
        pieces.append("".join(batch))
    pieces.append("\n")
    return "".join(pieces)
