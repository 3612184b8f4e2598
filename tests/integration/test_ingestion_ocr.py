"""OCR of scanned PDF pages with the real RapidOCR models shipped in the wheel."""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_system.config import Settings  # noqa: E402
from rag_system.ingestion import convert  # noqa: E402
from rag_system.ingestion.ocr import get_ocr_engine  # noqa: E402
from testkit.docs import PDF_PAGE_WORDS, make_pdf, make_scanned_copy, make_scanned_pdf  # noqa: E402

SETTINGS = Settings()

#: Each test renders and OCRs pages (about 2-3 s per page on two cores).
pytestmark = pytest.mark.slow


def test_scanned_page_is_ocrd_and_text_page_is_not(tmp_path: Path) -> None:
    doc = convert(make_scanned_pdf(tmp_path / "scan.pdf", extra_text_page=True), SETTINGS)
    assert doc.ocr_engine == "rapidocr"
    assert doc.ocr_pages == (1,)
    ocr_blocks = [b for b in doc.blocks if b.block_type == "ocr"]
    assert ocr_blocks and all(b.page == 1 for b in ocr_blocks)
    text = " ".join(b.text for b in ocr_blocks).lower()
    assert "zephyrine" in text
    assert "inventory" in text
    native = [b for b in doc.blocks if b.page == 2]
    assert native and all(b.block_type == "paragraph" for b in native)
    assert "pelican" in native[0].text
    assert doc.warnings == ()


def test_distinctive_text_is_read_back(tmp_path: Path) -> None:
    doc = convert(make_scanned_pdf(tmp_path / "scan.pdf", text="Invoice KX-4471 for Marmalade Holdings"), SETTINGS)
    text = " ".join(b.text for b in doc.blocks)
    assert "KX-4471" in text and "Marmalade" in text


def test_scanned_copy_with_stamped_text_layer_is_ocrd(tmp_path: Path) -> None:
    """A portal stamp (real text, > ocr_min_chars) on every page must not hide the scan."""
    stamp = "Downloaded from the Northwind archive portal by jdoe on 2026-01-05"
    scan = make_scanned_copy(make_pdf(tmp_path / "guide.pdf"), tmp_path / "scan.pdf", stamp=stamp)
    doc = convert(scan, SETTINGS)
    assert doc.ocr_pages == (1, 2, 3)
    for page, word in enumerate(PDF_PAGE_WORDS, start=1):
        text = " ".join(" ".join(b.text.split()) for b in doc.blocks if b.page == page)
        assert word in text
        assert "It has several sentences so the body font size dominates the page." in text
    assert not any("Northwind archive portal" in b.text and b.block_type != "ocr" for b in doc.blocks)


def test_ocr_disabled_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    doc = convert(make_scanned_pdf(tmp_path / "scan.pdf", extra_text_page=True),
                  SETTINGS.with_overrides(ocr_engine="none"))
    assert doc.ocr_engine is None and doc.ocr_pages == ()
    assert [b.page for b in doc.blocks] == [2]
    assert any("page 1 needs OCR" in w and "OCR_ENGINE=none" in w for w in doc.warnings)


def test_ocr_min_chars_zero_disables_the_need(tmp_path: Path) -> None:
    doc = convert(make_scanned_pdf(tmp_path / "scan.pdf"), SETTINGS.with_overrides(ocr_min_chars=0))
    assert doc.ocr_pages == () and doc.blocks == ()


def test_engine_is_cached_per_process() -> None:
    first, reason = get_ocr_engine("auto")
    assert first is not None and reason == ""
    with ThreadPoolExecutor(4) as pool:
        engines = list(pool.map(lambda _: get_ocr_engine("auto")[0], range(8)))
    assert all(engine is first for engine in engines)


def test_concurrent_ocr_conversions_agree(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "scan.pdf")
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: convert(path, SETTINGS).blocks, range(3)))
    assert results[0] and all(r == results[0] for r in results)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract is not installed")
def test_tesseract_engine(tmp_path: Path) -> None:
    doc = convert(make_scanned_pdf(tmp_path / "scan.pdf"), SETTINGS.with_overrides(ocr_engine="tesseract"))
    assert doc.ocr_engine == "tesseract" and doc.ocr_pages == (1,)
    assert "zephyrine" in " ".join(b.text for b in doc.blocks).lower()


@pytest.mark.skipif(shutil.which("tesseract") is not None, reason="tesseract is installed")
def test_tesseract_missing_is_a_warning(tmp_path: Path) -> None:
    doc = convert(make_scanned_pdf(tmp_path / "scan.pdf"), SETTINGS.with_overrides(ocr_engine="tesseract"))
    assert doc.blocks == () and doc.ocr_engine is None
    assert any("tesseract is not installed" in w for w in doc.warnings)
