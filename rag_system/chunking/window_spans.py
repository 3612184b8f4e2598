"""Where a chunk's vector-only windows are in its text, so they can be embedded again without the file.

Why: a chunk's full-text windows are stored as rows of their own, but the
windows that only the vector leg reads (`CHUNK_WINDOW_AT_TOPICS`) are stored
only as vectors, and `reembed` (rag_system/indexing/reembed.py) must embed
exactly the texts a build embeds without converting the files again. Each
such window is the chunk's context line followed by one stretch of the
chunk's own text, so two numbers per window rebuild it: the chunk's
metadata records `{"head": <length of the context line and its newline>,
"spans": [[start, end], ...]}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

KEY = "vector_windows"


def spans_of(text: str, prefix: str, windows: Sequence[str], vector_only: int) -> dict[str, Any] | None:
    """The record for the last `vector_only` of `windows` (cut from `text` under `prefix`), or None when
    one of them is not the context line plus a stretch of the text."""
    head = len(prefix) + 1 if prefix else 0
    spans: list[list[int]] = []
    for window in windows[len(windows) - vector_only:]:
        start = text.find(window[head:], head)
        if window[:head] != text[:head] or start < 0:
            return None
        spans.append([start, start + len(window) - head])
    return {"head": head, "spans": spans}


def texts_of(text: str, metadata: Mapping[str, Any]) -> list[str] | None:
    """The vector-only windows recorded in `metadata` for `text` ([] when it has none), or None when
    they were not recorded (a chunk written before the record existed)."""
    record = metadata.get(KEY)
    if not isinstance(record, Mapping):
        return None
    head = int(record.get("head", 0))
    return [text[:head] + text[int(a):int(b)] for a, b in record.get("spans", [])]
