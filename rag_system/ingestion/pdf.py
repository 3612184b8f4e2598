"""PDF conversion with PyMuPDF: native text per page, OCR only where needed.

PyMuPDF is fast (milliseconds per page), keeps exact page numbers and gives
font information for heading detection, so PDFs never go through Docling's
model-based pipeline. Pages whose text layer is (nearly) empty are rendered
and OCR'd one by one: a scanned appendix does not force OCR of the whole
document, and a born-digital page never loses its exact text to OCR.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_system.config import Settings
from rag_system.ingestion.ocr import get_ocr_engine, page_is_blank, render_for_ocr
from rag_system.ingestion.pdf_layout import Line, build_page_blocks, extract_lines, font_profile
from rag_system.ingestion.structure import BlockBuilder, boilerplate_key, render_table, repeated_edge_lines
from rag_system.ingestion.types import ConversionError, ConvertedDocument, check_page_limit, display_name

logger = logging.getLogger(__name__)

#: MuPDF is not thread-safe: every PyMuPDF call in this process holds this lock.
#: OCR inference runs outside it, so a scanned PDF does not block other PDFs.
MUPDF_LOCK = threading.RLock()

#: Share of the page height at the top and bottom where running headers live.
_EDGE_FRACTION = 0.1
#: Ruling lines/rectangles a page needs before `find_tables` (~0.3 s/page) is worth running.
_MIN_RULINGS_FOR_TABLES = 4


@dataclass
class _Page:
    number: int
    lines: list[Line]
    height: float
    tables: list[tuple[tuple[float, ...], str]] = field(default_factory=list)

    @property
    def native_chars(self) -> int:
        return sum(len("".join(line.text.split())) for line in self.lines)


def convert_pdf(path: Path, settings: Settings) -> ConvertedDocument:
    """Convert a PDF into blocks; OCR pages with fewer than `ocr_min_chars` characters."""
    with MUPDF_LOCK:
        doc = _open(path, settings)
    warnings: list[str] = []
    try:
        with MUPDF_LOCK:
            repaired = bool(doc.is_repaired)
            pages = _read_pages(doc, path)
        if repaired:
            warnings.append("the PDF was damaged and has been repaired; some content may be missing")
        drop = _running_headers(pages)
        profile = font_profile(page.lines for page in pages)
        builder = BlockBuilder()
        for page in pages:  # running headers/stamps do not count as a text layer
            page.lines = [ln for ln in page.lines if not _is_edge_boilerplate(ln, page.height, drop)]
        needs_ocr = [p.number for p in pages if p.native_chars < settings.ocr_min_chars]
        ocr = _OcrRun(settings.ocr_engine, needs_ocr) if needs_ocr else None
        for page in pages:
            if ocr is not None and page.number in ocr.wanted and ocr.run(doc, page, builder):
                continue
            build_page_blocks(page.lines, page.number, profile, builder, page.tables)
        if ocr is not None:
            warnings.extend(ocr.warnings())
        if not builder.blocks:
            warnings.append("no text found")
        return ConvertedDocument(
            path=path, name=display_name(path), file_type="pdf", page_count=len(pages), blocks=tuple(builder.blocks),
            ocr_engine=ocr.engine_name if ocr else None, ocr_pages=tuple(ocr.done) if ocr else (),
            warnings=tuple(warnings),
        )
    finally:
        with MUPDF_LOCK:
            doc.close()


def _open(path: Path, settings: Settings) -> Any:
    import pymupdf

    try:
        doc = pymupdf.open(path, filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise ConversionError(path, f"damaged or truncated PDF (cannot be opened: {exc})") from exc
    try:
        if doc.needs_pass:
            raise ConversionError(path, "encrypted PDF (password required)")
        if doc.page_count == 0:
            raise ConversionError(path, "damaged PDF (no readable pages)")
        if doc.is_repaired and not _has_eof_marker(path):
            # MuPDF "repairs" a cut-off file into pages with missing content; indexing
            # that silently would lose text, so an incomplete file is an error.
            raise ConversionError(path, "truncated PDF (the file ends before its end-of-file marker; "
                                        "it may be an incomplete download or copy)")
        check_page_limit(path, doc.page_count, "pages", settings.max_pages)
    except BaseException:
        doc.close()
        raise
    return doc


def _has_eof_marker(path: Path) -> bool:
    """True when `%%EOF` occurs in the last 2 KB, where every complete PDF has it."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 2048))
        return b"%%EOF" in handle.read()


def _read_pages(doc: Any, path: Path) -> list[_Page]:
    """First pass: lines (and ruled tables) of every page, for document-wide statistics."""
    pages = []
    for index in range(doc.page_count):
        try:
            page = doc[index]
            lines = extract_lines(page)
            tables = _tables(page) if lines else []
        except Exception as exc:  # MuPDF raises plain RuntimeError on broken content streams
            raise ConversionError(path, f"damaged PDF (page {index + 1} cannot be read: {exc})") from exc
        pages.append(_Page(number=index + 1, lines=lines, height=float(page.rect.height), tables=tables))
    return pages


def _tables(page: Any) -> list[tuple[tuple[float, ...], str]]:
    """Ruled tables as markdown, only on pages with enough ruling lines to hold one."""
    rulings = sum(1 for drawing in page.get_cdrawings()
                  for item in drawing.get("items", ()) if item and item[0] in ("l", "re", "qu"))
    if rulings < _MIN_RULINGS_FOR_TABLES:
        return []
    found = []
    try:
        for table in page.find_tables(strategy="lines").tables:
            if table.row_count >= 2 and table.col_count >= 2:
                # Cell text via get_textbox: Table.extract() drops spaces in PyMuPDF 2.0.
                markdown = render_table(
                    [page.get_textbox(cell) if cell else "" for cell in row.cells] for row in table.rows
                )
                if markdown:
                    found.append((tuple(table.bbox), markdown))
    except Exception as exc:  # table detection is best effort; text is still extracted
        logger.debug("find_tables failed on page %d: %s", page.number + 1, exc)
    return found


def _running_headers(pages: list[_Page]) -> set[str]:
    edges = []
    for page in pages:
        top = page.height * _EDGE_FRACTION
        bottom = page.height * (1 - _EDGE_FRACTION)
        edges.append([ln.text for ln in page.lines if ln.bbox[3] <= top or ln.bbox[1] >= bottom])
    return repeated_edge_lines(edges)


def _is_edge_boilerplate(line: Line, height: float, drop: set[str]) -> bool:
    if not drop:
        return False
    at_edge = line.bbox[3] <= height * _EDGE_FRACTION or line.bbox[1] >= height * (1 - _EDGE_FRACTION)
    return at_edge and boilerplate_key(line.text) in drop


class _OcrRun:
    """OCR state for one document: engine choice, pages done, pages skipped."""

    def __init__(self, choice: str, wanted: list[int]) -> None:
        self.wanted = set(wanted)
        self.done: list[int] = []
        self.skipped: list[int] = []
        self.failed: list[str] = []
        self.engine_name: str | None = None
        self._choice = choice
        self._engine: Any = None
        self._unavailable: str | None = None

    def run(self, doc: Any, page: _Page, builder: BlockBuilder) -> bool:
        """OCR one page into `builder`; False when the native text should be used instead."""
        with MUPDF_LOCK:
            if page_is_blank(doc[page.number - 1]):
                return False
        if self._engine is None and self._unavailable is None:
            self._engine, reason = get_ocr_engine(self._choice)
            self._unavailable = reason or None
        if self._engine is None:
            self.skipped.append(page.number)
            return False
        try:
            with MUPDF_LOCK:
                png, image = render_for_ocr(doc[page.number - 1], self._engine)
            paragraphs = self._engine.paragraphs(png, image)
        except Exception as exc:  # one bad page must not fail the document
            logger.warning("OCR failed on page %d: %s", page.number, exc)
            self.failed.append(f"page {page.number}: {exc}")
            return False
        self.engine_name = self._engine.name
        ocr_chars = sum(len("".join(p.split())) for p in paragraphs)
        if ocr_chars <= page.native_chars:
            return False
        for paragraph in paragraphs:
            builder.add(paragraph, page.number, "ocr")
        self.done.append(page.number)
        return True

    def warnings(self) -> list[str]:
        out = []
        if self.skipped:
            verb = "needs" if len(self.skipped) == 1 else "need"
            out.append(f"{_pages(self.skipped)} {verb} OCR (no text layer) but {self._unavailable}; "
                       "that text is missing")
        if self.failed:
            out.append("OCR failed on " + "; ".join(self.failed))
        return out


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10]) + (", ..." if len(numbers) > 10 else "")
    return f"page {shown}" if len(numbers) == 1 else f"{len(numbers)} pages ({shown})"
