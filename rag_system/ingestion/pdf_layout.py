"""Reading lines out of a PDF page and deciding which ones are headings.

PDFs have no semantic markup, so headings are inferred from typography the
way a reader does: text noticeably larger than the body font, or a short
bold / ALL-CAPS line opening a block at body size ("1. MAINTENANCE"). The
body size is the character-weighted median over the whole document, so one
large title or a page of footnotes cannot skew it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rag_system.ingestion.structure import BlockBuilder, join_lines

_BOLD_FLAG = 16
_MONO_FLAG = 8
_BULLET_RE = re.compile(r"^\s*([\u2022\u25e6\u25aa\u25cf\u2023\u2043\u2219\u00b7\-\u2013*])\s+\S")
_NUMBERING_RE = re.compile(r"^\s*(\d+(\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.)\s+")
_MAX_HEADING_CHARS = 160
_MAX_HEADING_WORDS = 20
_MAX_LEVELS = 6


@dataclass(frozen=True)
class Line:
    """One visual line of text with the typography needed to classify it."""

    text: str
    size: float  # character-weighted font size, rounded to 0.5 pt
    bold: bool
    mono: bool
    bbox: tuple[float, float, float, float]
    block_no: int
    first_in_block: bool


def text_flags() -> int:
    """PyMuPDF extraction flags: expand ligatures, skip image payloads."""
    import pymupdf

    return pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_LIGATURES & ~pymupdf.TEXT_PRESERVE_IMAGES


def extract_lines(page: Any) -> list[Line]:
    """All text lines of a page in the PDF's own (creator's) reading order."""
    out: list[Line] = []
    data = page.get_text("dict", flags=text_flags())
    for block_no, block in enumerate(data.get("blocks", ())):
        if block.get("type") != 0:
            continue
        first = True
        for raw in block.get("lines", ()):
            spans = [s for s in raw.get("spans", ()) if s.get("text")]
            text = "".join(s["text"] for s in spans)
            if not text.strip():
                continue
            visible = [s for s in spans if s["text"].strip()]
            weights: Counter[float] = Counter()
            for span in visible:
                weights[round(float(span["size"]) * 2) / 2] += len(span["text"].strip())
            size = weights.most_common(1)[0][0]
            bold = all(_is_bold(s) for s in visible)
            mono = all(_is_mono(s) for s in visible)
            out.append(Line(text=text, size=size, bold=bold, mono=mono,
                            bbox=tuple(raw.get("bbox", block.get("bbox"))),
                            block_no=block_no, first_in_block=first))
            first = False
    return out


def _is_bold(span: dict[str, Any]) -> bool:
    font = str(span.get("font", "")).lower()
    return bool(span.get("flags", 0) & _BOLD_FLAG) or any(w in font for w in ("bold", "black", "heavy"))


def _is_mono(span: dict[str, Any]) -> bool:
    font = str(span.get("font", "")).lower()
    return bool(span.get("flags", 0) & _MONO_FLAG) or any(w in font for w in ("mono", "courier", "consol"))


@dataclass(frozen=True)
class FontProfile:
    """Document-wide typography: body size and the heading level of each larger size."""

    body_size: float
    levels: dict[float, int]  # font size -> heading level (1 = largest)

    @property
    def body_heading_level(self) -> int:
        """Level of bold / ALL-CAPS headings set at body size (below all larger ones)."""
        return min(len(self.levels) + 1, _MAX_LEVELS)


def font_profile(pages: Iterable[Sequence[Line]]) -> FontProfile:
    """Body size = character-weighted median; larger sizes used by short lines are heading levels."""
    weights: Counter[float] = Counter()
    heading_sizes: set[float] = set()
    all_lines = [line for lines in pages for line in lines]
    for line in all_lines:
        weights[line.size] += len(line.text.strip())
    if not weights:
        return FontProfile(body_size=0.0, levels={})
    total = sum(weights.values())
    running = 0
    body = 0.0
    for size in sorted(weights):
        running += weights[size]
        if running * 2 >= total:
            body = size
            break
    for line in all_lines:
        if _is_large(line.size, body) and _short(line.text):
            heading_sizes.add(line.size)
    ordered = sorted(heading_sizes, reverse=True)
    return FontProfile(body_size=body,
                       levels={size: min(i + 1, _MAX_LEVELS) for i, size in enumerate(ordered)})


def _is_large(size: float, body: float) -> bool:
    return size >= body * 1.15 and size - body >= 1.0


def _short(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) <= _MAX_HEADING_CHARS and len(stripped.split()) <= _MAX_HEADING_WORDS


def heading_level(line: Line, profile: FontProfile, previous_was_heading: bool) -> int | None:
    """Heading level of `line`, or None when it is body text."""
    text = line.text.strip()
    if not _short(text) or not any(ch.isalpha() for ch in text) or _BULLET_RE.match(text):
        return None
    if line.size in profile.levels:
        return profile.levels[line.size]
    if line.size != profile.body_size or not (line.first_in_block or previous_was_heading):
        return None
    if text[-1] in ".,;:" or line.mono:
        return None
    letters = [ch for ch in _NUMBERING_RE.sub("", text) if ch.isalpha()]
    all_caps = len(letters) >= 4 and all(ch.isupper() for ch in letters)
    if line.bold or all_caps:
        return profile.body_heading_level
    return None


def build_page_blocks(lines: Sequence[Line], page_number: int, profile: FontProfile,
                      builder: BlockBuilder, tables: Sequence[tuple[tuple[float, ...], str]] = ()) -> None:
    """Append one page's blocks to `builder`: headings, paragraphs, lists, code, tables.

    `tables` holds (bbox, markdown) pairs; lines inside a table's box are
    replaced by one table block at the position of the table's first line.
    """
    pending_tables = list(tables)
    run: list[str] = []
    run_kind: tuple[str, int, int] | None = None  # (kind, level, block_no)

    def flush() -> None:
        nonlocal run, run_kind
        if run and run_kind is not None:
            kind, level, _ = run_kind
            text = join_lines(run)
            if kind == "heading" and len(text) <= _MAX_HEADING_CHARS:
                builder.heading(text, page_number, level)
            elif kind == "heading":  # many short large-font lines: a lead paragraph, not a title
                builder.add(text, page_number, "paragraph")
            elif kind == "code":
                builder.add("\n".join(run), page_number, "code")
            elif kind == "list":
                builder.add("\n".join(run), page_number, "list")
            else:
                builder.add(text, page_number, "paragraph")
        run, run_kind = [], None

    previous_heading = False
    for line in lines:
        table = next((t for t in pending_tables if _inside(line.bbox, t[0])), None)
        if table is not None or any(_inside(line.bbox, t[0]) for t in tables):
            if table is not None:
                flush()
                builder.add(table[1], page_number, "table")
                pending_tables.remove(table)
            previous_heading = False
            continue
        level = heading_level(line, profile, previous_heading and run_kind is not None
                              and run_kind[0] == "heading" and run_kind[2] == line.block_no)
        if level is not None:
            kind = ("heading", level, line.block_no)
        elif line.mono:
            kind = ("code", 0, line.block_no)
        elif _BULLET_RE.match(line.text) or (run_kind is not None and run_kind[0] == "list"
                                              and run_kind[2] == line.block_no):
            kind = ("list", 0, line.block_no)
        else:
            kind = ("paragraph", 0, line.block_no)
        if run_kind is not None and kind == run_kind:
            if kind[0] == "list" and not _BULLET_RE.match(line.text):
                run[-1] = join_lines([run[-1], line.text])  # continuation of an item
            else:
                run.append(line.text)
        elif run_kind is not None and kind[0] == "list" == run_kind[0] and _BULLET_RE.match(line.text):
            run.append(line.text)  # consecutive bullets in separate PDF blocks: one list
            run_kind = kind
        else:
            flush()
            run, run_kind = [line.text], kind
        previous_heading = kind[0] == "heading"
    flush()
    for _, markdown in pending_tables:  # tables without text lines we saw (rare)
        builder.add(markdown, page_number, "table")


def _inside(box: Sequence[float], area: Sequence[float]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return area[0] <= cx <= area[2] and area[1] <= cy <= area[3]
