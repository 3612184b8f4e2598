"""Page images for citations: a PDF page rendered with PyMuPDF, the cited text highlighted.

Only PDFs have pages to render; other documents answer 415 (their citations
point at `GET /documents/<id>/file` instead). Rendered PNGs are cached on disk
under `<data>/cache/pages/<sha256>/`, keyed by page, resolution and highlight
text, so a citation shown twice is rendered once. MuPDF is not thread-safe,
so rendering is serialised by one lock (reads of the cache are not).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path

from backend.web import ApiError

DEFAULT_DPI = 110
MIN_DPI, MAX_DPI = 36, 220
MAX_HIGHLIGHT_CHARS = 2000
HIGHLIGHT_RGB = (1.0, 0.86, 0.2)


class PageRenderer:
    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self._lock = threading.Lock()

    def render(self, pdf_path: str, sha256: str, page: int, highlight: str | None = None,
               dpi: int = DEFAULT_DPI) -> bytes:
        """PNG bytes of 1-based `page`; 404 for a page the document does not have."""
        if not MIN_DPI <= dpi <= MAX_DPI:
            raise ApiError(400, "invalid_dpi", f"dpi must be between {MIN_DPI} and {MAX_DPI}")
        text = " ".join((highlight or "").split())[:MAX_HIGHLIGHT_CHARS]
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text else "plain"
        cached = self.cache_dir / sha256 / f"p{page}_d{dpi}_{key}.png"
        if cached.is_file():
            return cached.read_bytes()
        png = self._render(pdf_path, page, text, dpi)
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(png)
        os.replace(tmp, cached)
        return png

    def _render(self, pdf_path: str, page_no: int, text: str, dpi: int) -> bytes:
        import pymupdf  # heavy: imported on first use, never at import time

        with self._lock:
            try:
                doc = pymupdf.open(pdf_path)
            except Exception as exc:  # PyMuPDF raises several types for unreadable files
                raise ApiError(422, "unreadable_document", f"the PDF cannot be opened: {exc}") from exc
            try:
                if doc.needs_pass:
                    raise ApiError(422, "encrypted_document", "the PDF is password-protected")
                if not 1 <= page_no <= doc.page_count:
                    raise ApiError(404, "page_not_found", f"page {page_no} does not exist; the document has "
                                                          f"{doc.page_count} page(s)")
                page = doc[page_no - 1]
                if text:
                    for rect in find_spans(page, text):
                        annot = page.add_highlight_annot(rect)
                        annot.set_colors(stroke=HIGHLIGHT_RGB)
                        annot.update()
                return page.get_pixmap(dpi=dpi, annots=True).tobytes("png")
            finally:
                doc.close()


def find_spans(page: object, text: str) -> list:
    """Rectangles of `text` on `page`: the whole quote, else its sentences, else its longest word run.

    Quotes from citations are normalised text, so an exact hit can fail on
    hyphenation or line breaks; falling back to pieces still points the
    reader at the right lines, and nothing is highlighted rather than the wrong thing.
    """
    hits = page.search_for(text)  # type: ignore[attr-defined]
    if hits:
        return list(hits)
    pieces = [p.strip() for p in re.split(r"(?<=[.!?;:])\s+", text) if len(p.strip()) >= 12]
    found: list = []
    for piece in pieces:
        found += page.search_for(piece)  # type: ignore[attr-defined]
    if found:
        return found
    words = text.split()
    for size in (8, 5):
        for start in range(0, max(1, len(words) - size + 1), size):
            chunk = " ".join(words[start:start + size])
            if len(chunk) >= 12:
                found += page.search_for(chunk)  # type: ignore[attr-defined]
        if found:
            return found
    return []
