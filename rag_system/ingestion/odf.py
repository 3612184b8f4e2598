"""OpenDocument text (ODT) and presentations (ODP), read from their content.xml.

Read directly with lxml rather than through a converter because the XML
already says what a reader needs: `text:h` with its outline level is a
heading, `text:list` a list, `table:table` a table, each `draw:page` of a
presentation a slide (its page), and in a text document the
`text:soft-page-break` marks LibreOffice leaves where each page ended the
last time it was laid out, which gives citations real page numbers.
Spreadsheets (ODS) go through the table path instead (`ods.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_system.config import Settings
from rag_system.ingestion.structure import BlockBuilder, render_table
from rag_system.ingestion.types import ConversionError, ConvertedDocument, check_page_limit
from rag_system.ingestion.zipxml import open_zip, parse_xml, read_part

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
PRESENTATION = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"

#: Elements whose text is not the document's running text (an index repeats the headings, comments
#: and tracked deletions are not what the document says).
_SKIPPED = frozenset({f"{{{TEXT}}}table-of-content", f"{{{TEXT}}}alphabetical-index", f"{{{TEXT}}}bibliography",
                      f"{{{TEXT}}}illustration-index", f"{{{TEXT}}}table-index", f"{{{TEXT}}}object-index",
                      f"{{{TEXT}}}user-index", f"{{{TEXT}}}tracked-changes", f"{{{OFFICE}}}annotation",
                      f"{{{TEXT}}}sequence-decls", f"{{{TEXT}}}variable-decls", f"{{{TEXT}}}user-field-decls",
                      f"{{{OFFICE}}}forms"})
_PAGE_BREAK = f"{{{TEXT}}}soft-page-break"


def content_root(path: Path, label: str) -> Any:
    """The parsed content.xml of an OpenDocument file."""
    with open_zip(path, label) as archive:
        data = read_part(archive, "content.xml", path, label)
    return parse_xml(data, path, label, "content.xml")


def body_of(root: Any, kind: str, path: Path, label: str) -> Any:
    """`office:body/office:<kind>` (text, spreadsheet, presentation)."""
    body = root.find(f"{{{OFFICE}}}body/{{{OFFICE}}}{kind}")
    if body is None:
        raise ConversionError(path, f"damaged {label} (content.xml has no office:{kind} body)")
    return body


def inline_text(element: Any, notes: list[str] | None = None) -> str:
    """A paragraph's text with its spaces (`text:s`), tabs and line breaks; footnotes go to `notes`."""
    parts: list[str] = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == f"{{{TEXT}}}s":
            parts.append(" " * _count(child.get(f"{{{TEXT}}}c")))
        elif tag == f"{{{TEXT}}}tab":
            parts.append("\t")
        elif tag == f"{{{TEXT}}}line-break":
            parts.append("\n")
        elif tag == f"{{{TEXT}}}note":
            body = child.find(f"{{{TEXT}}}note-body")
            if notes is not None and body is not None:
                notes.extend(t for t in (inline_text(p) for p in body.iter(f"{{{TEXT}}}p")) if t.strip())
        elif tag in _SKIPPED or (isinstance(tag, str) and tag.startswith(f"{{{DRAW}}}")):
            pass  # comments, and frames anchored in the paragraph (images, text boxes: read as blocks)
        elif isinstance(tag, str):
            parts.append(inline_text(child, notes))
        parts.append(child.tail or "")
    return "".join(parts)


def _count(value: str | None) -> int:
    try:
        return max(1, min(int(value or 1), 1000))
    except ValueError:
        return 1


def cell_paragraphs(cell: Any) -> str:
    """A table cell's text: its paragraphs, one per line."""
    return "\n".join(inline_text(p) for p in cell.iter(f"{{{TEXT}}}p", f"{{{TEXT}}}h"))


class _Walker:
    """Depth-first walk over ODF text content (a document body, a slide's text boxes)."""

    def __init__(self, builder: BlockBuilder, page: int = 1, count_pages: bool = False) -> None:
        self.builder = builder
        self.page = page
        self.count_pages = count_pages  # ODT: soft page breaks start pages; ODP: the slide is the page

    def walk(self, parent: Any, list_depth: int = 0) -> None:
        for child in parent:
            self.visit(child, list_depth)

    def visit(self, element: Any, list_depth: int = 0) -> None:
        tag = element.tag
        if tag == _PAGE_BREAK:
            if self.count_pages:
                self.page += 1
        elif tag in _SKIPPED or not isinstance(tag, str):
            return
        elif tag == f"{{{TEXT}}}h":
            self._break_inside(element)
            level = _count(element.get(f"{{{TEXT}}}outline-level"))
            self.builder.heading(inline_text(element), self.page, level)
        elif tag == f"{{{TEXT}}}p":
            self._break_inside(element)
            notes: list[str] = []
            self.builder.add(inline_text(element, notes), self.page)
            for note in notes:
                self.builder.add(note, self.page)
            self._frames(element, list_depth)
        elif tag == f"{{{TEXT}}}list":
            lines: list[str] = []
            page = self.page
            self._list_lines(element, 0, lines)
            self.builder.add("\n".join(lines), page, "list")
        elif tag == f"{{{TABLE}}}table":
            rows = [[cell_paragraphs(cell) for cell in row.iter(f"{{{TABLE}}}table-cell")]
                    for row in element.iter(f"{{{TABLE}}}table-row")]
            self.builder.add(render_table(rows), self.page, "table")
        else:  # sections, frames, text boxes, groups: their content is the document's
            self.walk(element, list_depth)

    def _break_inside(self, element: Any) -> None:
        """A page break inside a paragraph: the paragraph starts on the earlier page, the next one after."""
        if self.count_pages:
            self.page += sum(1 for _ in element.iter(_PAGE_BREAK))

    def _frames(self, paragraph: Any, list_depth: int) -> None:
        for frame in paragraph.iter(f"{{{DRAW}}}text-box"):
            self.walk(frame, list_depth)

    def _list_lines(self, element: Any, depth: int, lines: list[str]) -> None:
        for item in element:
            if item.tag not in (f"{{{TEXT}}}list-item", f"{{{TEXT}}}list-header"):
                continue
            for child in item:
                if child.tag == f"{{{TEXT}}}list":
                    self._list_lines(child, depth + 1, lines)
                elif child.tag in (f"{{{TEXT}}}p", f"{{{TEXT}}}h"):
                    text = " ".join(inline_text(child).split())
                    if text:
                        lines.append("  " * depth + f"- {text}")
                elif child.tag == _PAGE_BREAK and self.count_pages:
                    self.page += 1


def convert_odt(path: Path, settings: Settings) -> ConvertedDocument:
    """An OpenDocument text: headings by outline level, pages from its soft page breaks."""
    body = body_of(content_root(path, "ODT"), "text", path, "ODT")
    builder = BlockBuilder()
    walker = _Walker(builder, count_pages=True)
    walker.walk(body)
    pages = max([walker.page, *(b.page for b in builder.blocks)])
    check_page_limit(path, pages, "pages", settings.max_pages)
    return builder.document(path, "odt", pages)


def convert_odp(path: Path, settings: Settings) -> ConvertedDocument:
    """An OpenDocument presentation: each slide a page, its title a heading, speaker notes kept."""
    body = body_of(content_root(path, "ODP"), "presentation", path, "ODP")
    slides = body.findall(f"{{{DRAW}}}page")
    check_page_limit(path, len(slides), "slides", settings.max_pages)
    builder = BlockBuilder()
    for number, slide in enumerate(slides, start=1):
        builder.headings.reset()
        walker = _Walker(builder, page=number)
        frames = [f for f in slide if f.tag == f"{{{DRAW}}}frame"]
        titles = [f for f in frames if f.get(f"{{{PRESENTATION}}}class") == "title"]
        for frame in titles:
            builder.heading(" ".join(cell_paragraphs(frame).split()), number, 1)
        for child in slide:
            if child.tag == f"{{{PRESENTATION}}}notes":
                walker.walk(child)
            elif all(child is not title for title in titles):
                walker.visit(child)
    return builder.document(path, "odp", len(slides))
