"""Page rendering for citations: highlights, fallbacks, errors, the cache and the worker process."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import pytest

from backend.pages import PageRenderer, find_spans, render_page_marked
from common.errors import ApiError
from testkit.docs import PDF_PAGE_WORDS, make_pdf


@pytest.fixture(scope="module")
def pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pdf(tmp_path_factory.mktemp("pdf") / "guide.pdf")


def test_render_and_highlight(pdf: Path) -> None:
    plain = render_page_marked(str(pdf), 2, "", 72)[0]
    lit = render_page_marked(str(pdf), 2, PDF_PAGE_WORDS[1], 72)[0]
    assert isinstance(plain, bytes) and plain.startswith(b"\x89PNG")
    assert isinstance(lit, bytes) and lit != plain


def test_errors_come_back_as_values(pdf: Path, tmp_path: Path) -> None:
    assert render_page_marked(str(pdf), 9, "", 72)[:2] == (404, "page_not_found")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not a pdf")
    assert render_page_marked(str(broken), 1, "", 72)[0] == 422


def test_find_spans_falls_back_to_pieces_of_the_quote(pdf: Path) -> None:
    with pymupdf.open(pdf) as doc:
        page = doc[1]
        exact = find_spans(page, f"Readers should find the {PDF_PAGE_WORDS[1]} on page 2")
        assert exact
        # A quote whose second sentence is not on the page still marks the first one.
        mixed = find_spans(page, f"Readers should find the {PDF_PAGE_WORDS[1]} on page 2 of this guide. "
                                 "This sentence is nowhere in the document at all.")
        assert mixed
        assert find_spans(page, "completely unrelated words that never occur anywhere here") == []


def test_renderer_caches_and_stops_its_worker_when_idle(pdf: Path, tmp_path: Path) -> None:
    renderer = PageRenderer(tmp_path / "cache", idle_s=0.5)
    try:
        png = renderer.render_marked(str(pdf), "a" * 64, 1, "aardvark", dpi=72)[0]
        assert png.startswith(b"\x89PNG")
        assert len(list((tmp_path / "cache" / ("a" * 64)).glob("*.png"))) == 1
        assert renderer.render_marked(str(pdf), "a" * 64, 1, "  aardvark ", dpi=72)[0] == png  # same key, from the cache
        # whether the text is on the page, rendered and from the cache (the viewer looks on when it is not)
        for _ in range(2):
            assert renderer.render_marked(str(pdf), "a" * 64, 1, "aardvark", dpi=72)[1] is True
            assert renderer.render_marked(str(pdf), "a" * 64, 2, "aardvark", dpi=72)[1] is False
            assert renderer.render_marked(str(pdf), "a" * 64, 2, None, dpi=72)[1] is None
        with pytest.raises(ApiError) as err:
            renderer.render_marked(str(pdf), "a" * 64, 7, None, dpi=72)
        assert err.value.status == 404
        with pytest.raises(ApiError):
            renderer.render_marked(str(pdf), "a" * 64, 1, None, dpi=1000)
        deadline = time.monotonic() + 10
        while renderer._pool is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert renderer._pool is None
    finally:
        renderer.close()
