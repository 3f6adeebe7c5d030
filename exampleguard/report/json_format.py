"""The JSON renderer: the report data itself, with stable key order."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["json_pieces", "render_json"]

# Chunks of the encoder joined at a time: enough to make joining cheap, few enough that the
# chunks never outweigh the text they make.
_CHUNKS_PER_PIECE = 8192


def render_json(data: Any) -> str:
    """Render report data (or a SARIF log) as indented JSON text ending in a newline.

    The text is ``json.dumps(data, indent=2, ensure_ascii=False)``, built in bounded memory
    (see :func:`json_pieces`).
    """
    return "".join(json_pieces(data))


def json_pieces(data: Any) -> Iterator[str]:
    """The text of :func:`render_json`, in consecutive pieces of a few thousand chunks each.

    With an indent, ``json.dumps`` collects every one of the encoder's small chunks — several per
    value — before joining them, and for a report of 50,000 examples that list alone outweighs
    the report. Written out piece by piece, the text never exists whole either.
    """
    chunks = json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(data)
    while batch := list(itertools.islice(chunks, _CHUNKS_PER_PIECE)):
        yield "".join(batch)
    yield "\n"
