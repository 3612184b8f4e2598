"""Locations a reader can use: the page of the cited sentence, or the section and lines of a text file.

A chunk's metadata carries its spans (rag_system/chunking/locations.py); a
citation's quote is one sentence of the chunk, so finding the quote in the
chunk text finds its span: the page it is on (the viewer opens there, not on
the chunk's first page) and, in a text file, its lines. Chunks indexed before
spans existed still get their section and page range.
"""

from __future__ import annotations

import json
from typing import Any

PAGED_TYPES = ("pdf", "pptx", "xlsx", "xls")


def _metadata(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def chunk_location(metadata: str | dict[str, Any] | None, heading_path: str, page_start: int,
                   page_end: int) -> dict[str, Any]:
    """`{"paged", "section", "lines"?, "rows"?, "sheet"?, "label"?}` for a whole chunk (rows: tables)."""
    meta = _metadata(metadata)
    paged = meta.get("paged")
    if paged is None:  # indexed before locations were recorded
        paged = meta.get("file_type") in PAGED_TYPES or page_end > 1
    out: dict[str, Any] = {"paged": bool(paged), "section": heading_path or ""}
    lines = meta.get("lines")
    if isinstance(lines, list) and len(lines) == 2:
        out["lines"] = lines
    rows = meta.get("rows")
    if isinstance(rows, list) and len(rows) == 2:
        out["rows"] = rows
        for key in ("sheet", "label"):
            if isinstance(meta.get(key), str):
                out[key] = meta[key]
    if page_start:
        out["page"] = page_start
    return out


def quote_location(metadata: str | dict[str, Any] | None, heading_path: str, page_start: int, page_end: int,
                   text: str, quote: str) -> dict[str, Any]:
    """The chunk's location narrowed to the span(s) the quote covers: its page, its lines.

    `text` may be the chunk merged with its neighbours (context expansion): the
    spans' anchors find the chunk's own sentences in it; a quote before or
    after them lies on the merged passage's first or last page.
    """
    out = chunk_location(metadata, heading_path, page_start, page_end)
    at = _find(text, quote)
    spans = _anchored(_metadata(metadata).get("spans") or [], text)
    if at < 0 or not spans:
        return out
    end = at + len(quote)
    before = [s for s in spans if s[0] <= at]
    if not before:
        out["page"] = page_start
        out.pop("lines", None)
        return out
    first = before[-1]
    covered = [s for s in spans if first[0] <= s[0] < end]
    last_unit_end = spans[-1][0] + len(str(spans[-1][4]))
    if first is spans[-1] and at > last_unit_end and page_end != first[1]:
        out["page"] = page_end  # past the chunk's own sentences: in the neighbour after it
        out.pop("lines", None)
        return out
    out["page"] = int(first[1])
    lines = [(s[2], s[3]) for s in covered if s[2]]
    if lines:
        out["lines"] = [min(a for a, _ in lines), max(b for _, b in lines)]
    return out


def _anchored(raw: list[Any], text: str) -> list[list[Any]]:
    """The spans with their offsets in `text`, found by their anchors in order (spans not found are dropped)."""
    out: list[list[Any]] = []
    cursor = 0
    for span in raw:
        if not (isinstance(span, list) and len(span) == 5):
            continue
        at = text.find(str(span[4]), cursor) if span[4] else -1
        if at < 0:
            continue
        out.append([at, int(span[1]), int(span[2]), int(span[3]), span[4]])
        cursor = at + 1
    return out


def _find(text: str, quote: str) -> int:
    """Where the quote starts in the chunk text; whitespace may differ (a quote is often re-flowed)."""
    quote = quote.strip()
    if not quote:
        return -1
    at = text.find(quote)
    if at >= 0:
        return at
    head = " ".join(quote.split()[:8])
    flat = " ".join(text.split())
    pos = flat.find(head)
    if pos < 0:
        return -1
    # Map the position in the flattened text back to the original one.
    seen, in_space = 0, True  # leading whitespace flattens to nothing, a run of it to one space
    for i, ch in enumerate(text):
        if ch.isspace():
            seen += not in_space
            in_space = True
            continue
        if seen == pos:
            return i
        seen += 1
        in_space = False
    return -1
