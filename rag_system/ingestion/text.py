"""Plain-text files: decode carefully, split into paragraphs, honour form feeds.

Text files have no markup, so the only structure we trust is the blank line
(paragraph break) and the form feed (page break, as in RFCs and printer
output). Paragraph text is kept line-for-line: reflowing would damage tables,
ASCII diagrams and the verbatim quotes citations are checked against.
"""

from __future__ import annotations

import codecs
import logging
import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.sniff import binary_reason
from rag_system.ingestion.structure import BlockBuilder, boilerplate_key, render_table, repeated_edge_lines
from rag_system.ingestion.types import ConversionError, ConvertedDocument, check_page_limit, display_name

logger = logging.getLogger(__name__)

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A numbered section title alone on its line, as in RFCs and specifications:
# "4.5.  Stream Final Size", "Appendix A.2.  Sample Code". The number's depth
# gives the heading level, so chunks follow sections and carry their title.
_NUMBERED_HEADING = re.compile(
    r"^(?:(?P<num>\d{1,2}(?:\.\d{1,3}){0,5})\.?|Appendix (?P<app>[A-Z](?:\.\d{1,3}){0,5})\.?)"
    r"[ \t]+(?P<title>[A-Z][^\n]{0,78})$"
)


def heading_level(paragraph: str) -> int | None:
    """Level of a numbered section title (1 for "4.", 2 for "4.5."), else None."""
    if "\n" in paragraph or paragraph.rstrip().endswith((".", ",", ";", ":")):
        return None
    match = _NUMBERED_HEADING.match(paragraph.strip())
    if match is None:
        return None
    number = match.group("num") or match.group("app")
    return number.count(".") + 1


def decode_text(data: bytes, path: Path) -> tuple[str, str | None]:
    """Return (text, warning). UTF-8 first; single-byte fallbacks only for real text.

    UTF-16 needs a BOM (without one it is indistinguishable from binary);
    non-UTF-8 text is read as Windows-1252, or Latin-1 when it has bytes
    Windows-1252 leaves undefined, and a warning says so.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError as exc:
            raise ConversionError(path, f"invalid UTF-16 text ({exc.reason} at byte {exc.start})") from exc
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    problem = "contains NUL bytes" if b"\x00" in data else binary_reason(data[:65536])
    if problem:
        raise ConversionError(path, f"binary content in a text file ({problem})")
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return text, f"file is not valid UTF-8; decoded as {encoding}"
    raise ConversionError(path, "cannot decode text")  # unreachable: latin-1 decodes anything


def form_feed_pages(text: str, path: Path, settings: Settings) -> list[str]:
    """Pages split at form feeds (hard page breaks), a trailing empty page dropped, the page limit kept."""
    pages = text.split("\f")
    while len(pages) > 1 and not pages[-1].strip():
        pages.pop()
    check_page_limit(path, len(pages), "pages", settings.max_pages)
    return pages


def add_lines(builder: BlockBuilder, page: int, lines: Iterable[str],
              cells_of: Callable[[str], list[str] | None]) -> None:
    """One paragraph per line (a numbered title as a heading); runs of table rows as one table block.

    For converters whose tool prints a paragraph per line (antiword, striprtf);
    `cells_of` says whether a line is a table row and gives its cells.
    """
    rows: list[list[str]] = []
    for line in [*lines, ""]:
        cells = cells_of(line)
        if cells is not None:
            rows.append(cells)
            continue
        if rows:
            builder.add(render_table(rows), page, "table")
            rows = []
        stripped = line.strip()
        level = heading_level(stripped) if stripped else None
        if level is None:
            builder.add(stripped, page)
        else:
            builder.heading(stripped, page, level)


def line_document(text: str, path: Path, settings: Settings, file_type: str,
                  cells_of: Callable[[str], list[str] | None]) -> ConvertedDocument:
    """A document from a tool's plain-text output: pages at form feeds, one paragraph per line (`add_lines`)."""
    pages = form_feed_pages(text, path, settings)
    builder = BlockBuilder()
    for number, page in enumerate(pages, start=1):
        add_lines(builder, number, page.split("\n"), cells_of)
    return builder.document(path, file_type, len(pages))


def split_paragraphs(page_text: str) -> list[str]:
    """Paragraphs of one page: blank-line separated, common indentation removed."""
    return [paragraph for _, paragraph in paragraph_lines(page_text)]


def paragraph_lines(page_text: str) -> list[tuple[int, str]]:
    """(line within the page, 0-based, paragraph) for each paragraph, so citations can name lines."""
    out = []
    start = 0
    for match in [*_PARAGRAPH_BREAK.finditer(page_text), None]:
        end = match.start() if match else len(page_text)
        raw = page_text[start:end]
        chunk = textwrap.dedent(raw.strip("\n")).rstrip()
        if chunk.strip():
            lead = len(raw) - len(raw.lstrip("\n"))
            out.append((page_text.count("\n", 0, start + lead), chunk))
        if match:
            start = match.end()
    return out


def convert_text(path: Path, settings: Settings) -> ConvertedDocument:
    """Convert a .txt file: one paragraph block per blank-line separated run."""
    data = path.read_bytes()
    text, warning = decode_text(data, path)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    raw_pages = text.split("\f")
    # The file line each page starts on (a form feed ends a page without ending its line).
    first_lines = [1]
    for page in raw_pages[:-1]:
        first_lines.append(first_lines[-1] + page.count("\n"))
    located = [paragraph_lines(page) for page in raw_pages]
    pages = [[p for _, p in paragraphs] for paragraphs in located]
    # A trailing form feed is a printer habit, not an extra page.
    while len(pages) > 1 and not pages[-1]:
        pages.pop()
    check_page_limit(path, len(pages), "pages", settings.max_pages)
    drop = _running_headers(pages)
    builder = BlockBuilder()
    for number, paragraphs in enumerate(located[:len(pages)], start=1):
        last = len(paragraphs) - 1
        for index, (offset, paragraph) in enumerate(paragraphs):
            if index in (0, last) and "\n" not in paragraph and boilerplate_key(paragraph) in drop:
                continue
            line = first_lines[number - 1] + offset
            level = heading_level(paragraph)
            if level is None:
                builder.add(paragraph, number, line=line)
            else:
                builder.heading(paragraph.strip(), number, level, line=line)
    warnings = [warning] if warning else []
    if not builder.blocks:
        warnings.append("no text found")
    logger.debug("text %s: %d pages, %d blocks", path.name, len(pages), len(builder.blocks))
    return ConvertedDocument(path=path, name=display_name(path), file_type="txt", page_count=len(pages),
                             blocks=tuple(builder.blocks), warnings=tuple(warnings))


def _running_headers(pages: list[list[str]]) -> set[str]:
    """Single-line first/last paragraphs that repeat on most pages (RFC headers, footers)."""
    edges = []
    for paragraphs in pages:
        lines = [p for p in (paragraphs[:1] + paragraphs[-1:]) if "\n" not in p]
        edges.append(lines)
    return repeated_edge_lines(edges)
