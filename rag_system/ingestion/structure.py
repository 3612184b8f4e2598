"""Helpers every converter shares: heading paths, text clean-up, boilerplate.

Kept format-neutral so PDF, Docling and plain-text conversion agree on what a
heading path is and how whitespace is treated; the citation checker later
compares quoted text against block text, so all converters must keep the
characters of the source and only ever change whitespace.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from rag_system.ingestion.types import Block, ConvertedDocument, display_name

# C0/C1 controls except tab/newline, DEL, the soft hyphen (an invisible line-break
# hint) and stray byte-order marks: none of them is text a reader can see or quote.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\ufeff]")
_NO_SPACE_BEFORE = frozenset(".,;:!?%)]}'\u2019\u201d\u00bb")
_NO_SPACE_AFTER = frozenset("([{\u2018\u201c\u00ab")


def clean_text(text: str) -> str:
    """Drop control characters and trailing spaces; keep everything else verbatim."""
    text = _CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def join_inline(parts: Iterable[str]) -> str:
    """Join fragments of one sentence (inline formatting runs) with natural spacing.

    Docling splits "see the `cfg` file." into ["see the", "cfg", "file", "."];
    a plain space join would produce "file ." and break verbatim quotes.
    """
    out = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if out and part[0] not in _NO_SPACE_BEFORE and out[-1] not in _NO_SPACE_AFTER:
            out += " "
        out += part
    return out


def join_lines(lines: Sequence[str]) -> str:
    """Join the visual lines of one paragraph into one string.

    Lines are joined by a space, except after a hyphen that splits a
    lower-case word ("flow-" + "controlled"), where the hyphen is kept and no
    space is added: that keeps every source character and only drops the
    line break, which is what a reader copying the sentence would expect.
    """
    out = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if out and out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[0].islower():
            out += line
        elif out:
            out += " " + line
        else:
            out = line
    return out


def render_table(rows: Iterable[Iterable[str | None]]) -> str:
    """A compact Markdown pipe table, the one text form every converter uses for tables.

    One line per row, cell whitespace collapsed, `|` escaped, a header rule
    after the first row; padding columns to equal width (as Docling's export
    does) would multiply the tokens of wide tables without adding meaning.
    """
    cleaned = [[" ".join((cell or "").split()).replace("|", "\\|") for cell in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    if not cleaned:
        return ""
    lines = ["| " + " | ".join(row) + " |" for row in cleaned]
    if len(lines) > 1:
        lines.insert(1, "|" + "---|" * len(cleaned[0]))
    return "\n".join(lines)


class HeadingTracker:
    """The current section path, updated as headings of known level appear.

    A heading of level `n` closes every open heading of level >= n, so the
    path is always the chain of enclosing headings. Level 0 is the title.
    """

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    def enter(self, level: int, text: str) -> tuple[str, ...]:
        """Open a heading; return the new path (which includes the heading itself)."""
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, " ".join(text.split())))
        return self.path

    def reset(self) -> None:
        """Forget all headings (a new slide or sheet starts a new context)."""
        self._stack.clear()

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(text for _, text in self._stack)


class BlockBuilder:
    """Collects blocks in order, keeping heading paths consistent.

    Heading blocks carry the path *including* themselves, so a chunk that
    starts at a heading has the same path as the text under it.
    """

    def __init__(self) -> None:
        self.headings = HeadingTracker()
        self.blocks: list[Block] = []

    def heading(self, text: str, page: int, level: int, line: int = 0) -> None:
        text = " ".join(clean_text(text).split())
        if text:
            path = self.headings.enter(level, text)
            self.blocks.append(Block(text=text, page=page, block_type="heading", heading_path=path, line=line))

    def add(self, text: str, page: int, block_type: str = "paragraph", line: int = 0) -> None:
        text = clean_text(text)
        if text.strip():
            self.blocks.append(Block(text=text, page=page, block_type=block_type,
                                     heading_path=self.headings.path, line=line))

    def document(self, path: Path, file_type: str, pages: int, warnings: Sequence[str] = ()) -> ConvertedDocument:
        """The converted file: at least one page, and a warning when no text was found."""
        notes = (*warnings, *(() if self.blocks else ("no text found",)))
        return ConvertedDocument(path=path, name=display_name(path), file_type=file_type, page_count=max(pages, 1),
                                 blocks=tuple(self.blocks), warnings=notes)


_DIGITS_RE = re.compile(r"\d+")


def boilerplate_key(text: str) -> str:
    """Normalise a running header/footer line: digits and spacing don't matter."""
    return " ".join(_DIGITS_RE.sub("#", text).lower().split())


def repeated_edge_lines(edge_lines_per_page: Sequence[Iterable[str]], min_pages: int = 3) -> set[str]:
    """Keys of lines that sit at a page edge on at least half of the pages.

    Running headers, footers and page numbers repeat on most pages and add
    noise to every chunk; real content almost never repeats at the edge of
    most pages. Short documents (< `min_pages`) are left alone.
    """
    pages = len(edge_lines_per_page)
    if pages < min_pages:
        return set()
    counts: Counter[str] = Counter()
    for lines in edge_lines_per_page:
        counts.update({boilerplate_key(line) for line in lines if line.strip()})
    threshold = max(min_pages, math.ceil(pages / 2))
    return {key for key, count in counts.items() if count >= threshold and key}


def placed(blocks: Iterable[Block], page: int, prefix: tuple[str, ...] = ()) -> list[Block]:
    """`blocks` of a part (an EPUB chapter, a mail attachment) moved to `page`, under the headings `prefix`.

    Why: a part is converted on its own, so its blocks start on page 1 with
    no context; in the containing file they belong to the chapter's or the
    message's page, and a citation should name the message and attachment.
    """
    return [replace(block, page=page, heading_path=prefix + block.heading_path) for block in blocks]
