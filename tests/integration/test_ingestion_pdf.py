"""PDF conversion with real PyMuPDF on generated documents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_system.config import Settings  # noqa: E402
from rag_system.ingestion import BLOCK_TYPES, ConversionError, convert  # noqa: E402
from testkit.docs import (  # noqa: E402
    PDF_FOOTER,
    PDF_PAGE_WORDS,
    PDF_SECTIONS,
    PDF_TABLE,
    PDF_TITLE,
    make_encrypted_pdf,
    make_pdf,
    make_pdf_with_table,
    make_truncated_pdf,
)

SETTINGS = Settings()


def _reason(path: Path, settings: Settings = SETTINGS) -> str:
    with pytest.raises(ConversionError) as info:
        convert(path, settings)
    return info.value.reason


def test_pages_headings_and_paths(tmp_path: Path) -> None:
    doc = convert(make_pdf(tmp_path / "guide.pdf"), SETTINGS)
    assert (doc.file_type, doc.page_count, doc.name) == ("pdf", 3, "guide.pdf")
    assert doc.ocr_engine is None and doc.ocr_pages == () and doc.warnings == ()
    assert all(b.block_type in BLOCK_TYPES for b in doc.blocks)
    headings = [(b.text, b.page, b.heading_path) for b in doc.blocks if b.block_type == "heading"]
    assert headings == [
        (PDF_TITLE, 1, (PDF_TITLE,)),
        (PDF_SECTIONS[0], 1, (PDF_TITLE, PDF_SECTIONS[0])),
        (PDF_SECTIONS[1], 2, (PDF_TITLE, PDF_SECTIONS[1])),
        (PDF_SECTIONS[2], 3, (PDF_TITLE, PDF_SECTIONS[2])),
    ]
    for page, word in enumerate(PDF_PAGE_WORDS, start=1):
        paragraphs = [b for b in doc.blocks if word in b.text]
        assert paragraphs and all(b.page == page and b.block_type == "paragraph" for b in paragraphs)
        assert all(b.heading_path == (PDF_TITLE, PDF_SECTIONS[page - 1]) for b in paragraphs)
    # Wrapped lines become one paragraph; the running footer is dropped as boilerplate.
    assert any("several sentences so the body font size dominates the page." in b.text for b in doc.blocks)
    footer = PDF_FOOTER.split(" - page")[0]
    assert not any(footer in b.text for b in doc.blocks)


def test_ruled_table_becomes_one_table_block(tmp_path: Path) -> None:
    doc = convert(make_pdf_with_table(tmp_path / "table.pdf"), SETTINGS)
    tables = [b for b in doc.blocks if b.block_type == "table"]
    assert len(tables) == 1
    lines = tables[0].text.splitlines()
    assert lines[0] == "| " + " | ".join(PDF_TABLE[0]) + " |"
    assert lines[2] == "| " + " | ".join(PDF_TABLE[1]) + " |"
    assert tables[0].heading_path == ("Maintenance Intervals",)
    # Cell text appears only inside the table block.
    assert sum("gasket" in b.text for b in doc.blocks) == 1


def test_encrypted_pdf(tmp_path: Path) -> None:
    assert _reason(make_encrypted_pdf(tmp_path / "locked.pdf")) == "encrypted PDF (password required)"


def test_truncated_pdf(tmp_path: Path) -> None:
    reason = _reason(make_truncated_pdf(tmp_path / "cut.pdf"))
    assert reason.startswith("truncated PDF")


@pytest.mark.parametrize("keep", [0.02, 0.6, 0.99])
def test_pdf_cut_anywhere_fails_cleanly(tmp_path: Path, keep: float) -> None:
    full = make_pdf(tmp_path / "full.pdf").read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(full[: int(len(full) * keep)])
    reason = _reason(path)
    assert reason.startswith(("truncated PDF", "damaged or truncated PDF"))


def test_pdf_with_a_broken_xref_is_repaired_with_a_warning(tmp_path: Path) -> None:
    full = make_pdf(tmp_path / "full.pdf").read_bytes()
    start = full.rindex(b"startxref")
    path = tmp_path / "bad-xref.pdf"
    path.write_bytes(full[:start] + b"startxref\n999999\n%%EOF\n")  # offset points nowhere
    doc = convert(path, SETTINGS)
    assert doc.page_count == 3 and any("aardvark" in b.text for b in doc.blocks)
    assert any("repaired" in w for w in doc.warnings)


def test_too_many_pages(tmp_path: Path) -> None:
    reason = _reason(make_pdf(tmp_path / "guide.pdf"), SETTINGS.with_overrides(max_pages=2))
    assert reason == "too many pages (3; the limit is 2, set by DOCENT_MAX_PAGES)"


def test_blank_pdf_page_is_not_ocrd(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page()
    doc.save(tmp_path / "blank.pdf")
    result = convert(tmp_path / "blank.pdf", SETTINGS)
    assert result.blocks == () and result.ocr_pages == () and result.warnings == ("no text found",)
