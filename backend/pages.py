"""Page images for citations: a PDF page rendered with PyMuPDF, the cited text highlighted.

Only PDFs have pages to render; other documents answer 415 (their citations
point at `GET /documents/<id>/file` instead). Rendered PNGs are cached on disk
under `<data>/cache/pages/<sha256>/`, keyed by page, resolution and highlight
text, so a citation shown twice is rendered once. MuPDF is not thread-safe,
and importing it costs ~130 MB: rendering runs in one worker process,
started on the first page request and stopped after `IDLE_S` without one,
so the gateway itself stays small (Documentation/api-gateway.md) and renders one page at a time.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import re
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from common.errors import ApiError

log = logging.getLogger(__name__)

DEFAULT_DPI = 110
MIN_DPI, MAX_DPI = 36, 220
MAX_HIGHLIGHT_CHARS = 2000
HIGHLIGHT_RGB = (1.0, 0.86, 0.2)
IDLE_S = 300.0
RENDER_TIMEOUT_S = 120.0


class PageRenderer:
    def __init__(self, cache_dir: Path, idle_s: float = IDLE_S) -> None:
        self.cache_dir = cache_dir
        self.idle_s = idle_s
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._last_used = 0.0
        self._busy = 0

    def render_marked(self, pdf_path: str, sha256: str, page: int, highlight: str | None = None,
                      dpi: int = DEFAULT_DPI) -> tuple[bytes, bool | None]:
        """The PNG, and whether the highlight text was found on the page (None: none asked for), so a
        viewer can look for the cited sentence on the next page of the passage when it is not here."""
        if not MIN_DPI <= dpi <= MAX_DPI:
            raise ApiError(400, "invalid_dpi", f"dpi must be between {MIN_DPI} and {MAX_DPI}")
        text = " ".join((highlight or "").split())[:MAX_HIGHLIGHT_CHARS]
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text else "plain"
        cached = self.cache_dir / sha256 / f"p{page}_d{dpi}_{key}.png"
        missed = cached.with_name(cached.name + ".miss")  # present: the text is not on this page
        if cached.is_file():
            return cached.read_bytes(), (not missed.exists()) if text else None
        png, found = self._in_worker(pdf_path, page, text, dpi)
        tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            if text and not found:
                missed.touch()
            tmp.write_bytes(png)
            os.replace(tmp, cached)
        except OSError as exc:  # a full disk costs the cache, not the page
            log.warning("page cache not written (%s): %s", cached.name, exc)
            tmp.unlink(missing_ok=True)
        return png, found if text else None

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _in_worker(self, pdf_path: str, page: int, text: str, dpi: int) -> tuple[bytes, bool]:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
                threading.Thread(target=self._reap, args=(self._pool,), name="page-renderer-reaper",
                                 daemon=True).start()
            pool = self._pool
            self._busy += 1
        try:
            outcome = pool.submit(render_page_marked, pdf_path, page, text, dpi).result(timeout=RENDER_TIMEOUT_S)
        except BrokenProcessPool as exc:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            raise ApiError(503, "renderer_unavailable", "the page renderer stopped; try again") from exc
        except TimeoutError as exc:
            raise ApiError(504, "render_timeout", f"rendering took longer than {RENDER_TIMEOUT_S:g} s") from exc
        finally:
            with self._lock:
                self._busy -= 1
                self._last_used = time.monotonic()
        if isinstance(outcome[0], bytes):
            return outcome[0], bool(outcome[1])
        status, code, message = outcome
        raise ApiError(status, code, message)

    def _reap(self, pool: ProcessPoolExecutor) -> None:
        """Stop the worker process after `idle_s` without a render (it costs ~130 MB while it lives)."""
        while True:
            time.sleep(min(30.0, self.idle_s / 2))
            with self._lock:
                if self._pool is not pool:
                    return
                if self._busy == 0 and time.monotonic() - self._last_used > self.idle_s:
                    self._pool = None
                    break
        pool.shutdown(wait=False)


def render_page_marked(pdf_path: str, page_no: int, text: str,
                       dpi: int) -> tuple[bytes, bool] | tuple[int, str, str]:
    """Runs in the worker process: (PNG bytes, whether the text was found), or (status, code, message)."""
    import pymupdf  # heavy: only ever imported in the worker

    try:
        doc = pymupdf.open(pdf_path)
    except Exception as exc:  # PyMuPDF raises several types for unreadable files
        return 422, "unreadable_document", f"the PDF cannot be opened: {exc}"
    try:
        if doc.needs_pass:
            return 422, "encrypted_document", "the PDF is password-protected"
        if not 1 <= page_no <= doc.page_count:
            return 404, "page_not_found", f"page {page_no} does not exist; the document has {doc.page_count} page(s)"
        page = doc[page_no - 1]
        spans = find_spans(page, text) if text else []
        for rect in spans:
            annot = page.add_highlight_annot(rect)
            annot.set_colors(stroke=HIGHLIGHT_RGB)
            annot.update()
        return bytes(page.get_pixmap(dpi=dpi, annots=True).tobytes("png")), bool(spans)
    finally:
        doc.close()


def find_spans(page: Any, text: str) -> list[Any]:
    """Rectangles of `text` on `page`: the whole quote, else its sentences, else its longest word run.

    Quotes from citations are normalised text, so an exact hit can fail on
    hyphenation or line breaks; falling back to pieces still points the
    reader at the right lines, and nothing is highlighted rather than the wrong thing.
    """
    hits = page.search_for(text)
    if hits:
        return list(hits)
    pieces = [p.strip() for p in re.split(r"(?<=[.!?;:])\s+", text) if len(p.strip()) >= 12]
    found: list[Any] = []
    for piece in pieces:
        found += page.search_for(piece)
    if found:
        return found
    words = text.split()
    for size in (8, 5):
        for start in range(0, max(1, len(words) - size + 1), size):
            chunk = " ".join(words[start:start + size])
            if len(chunk) >= 12:
                found += page.search_for(chunk)
        if found:
            return found
    return []
