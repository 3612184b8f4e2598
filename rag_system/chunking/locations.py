"""Where each part of a chunk came from: its page and, for text files, its lines.

Why: a citation names one sentence of a chunk, and a chunk can span pages
(a PDF) or a hundred lines (a text file that is all "page 1"). Each chunk's
metadata keeps one span per sentence or block — `[offset in the chunk text,
page, first line, last line, anchor]`, the anchor being the unit's first
characters, which find the span again in a passage that context expansion
merged with its neighbours — so the sentence a citation quotes can be
placed on its own page and lines (rag_system/retrieval/locations.py), and
the viewer opens there. Lines are 0 when the format has none (PDF, Office,
HTML and Markdown through Docling).
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_system.ingestion.types import Block

#: Formats whose page numbers mean something to a reader (slides and sheets count as pages).
PAGED_TYPES = frozenset({"pdf", "pptx", "xlsx", "xls"})

Lines = tuple[int, int] | None
ANCHOR_CHARS = 24


def block_lines(block: Block, text: str) -> Lines:
    """The lines a whole block covers (tables, code, headings), when its format knows lines."""
    return (block.line, block.line + text.count("\n")) if block.line else None


def sentence_lines(block: Block, sentences: Sequence[str]) -> list[Lines]:
    """Each sentence's lines, found in order in the block's text (a sentence not found keeps the block's)."""
    if not block.line:
        return [None] * len(sentences)
    out: list[Lines] = []
    cursor = 0
    for sentence in sentences:
        at = block.text.find(sentence, cursor)
        if at < 0:
            out.append(block_lines(block, block.text))
            continue
        first = block.line + block.text.count("\n", 0, at)
        out.append((first, first + sentence.count("\n")))
        cursor = at + len(sentence)
    return out


def location_metadata(text: str, parts: Sequence[tuple[str, int, Lines]], file_type: str,
                      page_count: int) -> dict[str, object]:
    """`paged`, and `lines` and `spans` where they add something to `page_start`/`page_end`.

    `parts` are the chunk's units in order: (text, page, lines).
    """
    meta: dict[str, object] = {"paged": file_type in PAGED_TYPES or page_count > 1}
    known = [lines for _, _, lines in parts if lines]
    multi_page = len({page for _, page, _ in parts}) > 1
    if known:
        meta["lines"] = [min(a for a, _ in known), max(b for _, b in known)]
    if not known and not multi_page:
        return meta
    spans: list[list[int | str]] = []
    cursor = 0
    for unit_text, page, lines in parts:
        at = text.find(unit_text, cursor)
        if at < 0:
            continue
        cursor = at + len(unit_text)
        first, last = lines or (0, 0)
        spans.append([at, page, first, last, unit_text[:ANCHOR_CHARS]])
    meta["spans"] = spans
    return meta
