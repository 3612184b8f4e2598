"""DOCX, PPTX, XLSX, HTML and Markdown through Docling's model-free backends."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rag_system.config import Settings  # noqa: E402
from rag_system.ingestion import BLOCK_TYPES, ConversionError, ConvertedDocument, convert  # noqa: E402
from testkit.docs import (  # noqa: E402
    DOCX_HEADINGS,
    DOCX_TABLE_WORD,
    DOCX_TITLE,
    HTML_SCRIPT_MARKER,
    MD_CODE_LINE,
    PPTX_SLIDE_TITLES,
    XLSX_SHEETS,
    make_broken_docx,
    make_docx,
    make_html,
    make_markdown,
    make_pptx,
    make_xlsx,
)

SETTINGS = Settings()


def _check_common(doc: ConvertedDocument, file_type: str) -> None:
    assert doc.file_type == file_type and doc.warnings == () and doc.ocr_engine is None
    assert doc.blocks and all(b.block_type in BLOCK_TYPES and b.text.strip() for b in doc.blocks)
    assert all(1 <= b.page <= doc.page_count for b in doc.blocks)


def _one(doc: ConvertedDocument, needle: str):
    found = [b for b in doc.blocks if needle in b.text]
    assert len(found) == 1, (needle, found)
    return found[0]


def test_docx_headings_list_and_table(tmp_path: Path) -> None:
    doc = convert(make_docx(tmp_path / "policy.docx"), SETTINGS)
    _check_common(doc, "docx")
    assert doc.page_count == 1
    headings = [(b.text, b.heading_path) for b in doc.blocks if b.block_type == "heading"]
    assert headings == [
        (DOCX_TITLE, (DOCX_TITLE,)),
        (DOCX_HEADINGS[0], (DOCX_TITLE, DOCX_HEADINGS[0])),
        (DOCX_HEADINGS[1], (DOCX_TITLE, DOCX_HEADINGS[1])),
    ]
    bullets = _one(doc, "Economy class")
    assert bullets.block_type == "list" and "nightly cap" in bullets.text  # both items, one block
    assert bullets.heading_path == (DOCX_TITLE, DOCX_HEADINGS[0])
    table = _one(doc, DOCX_TABLE_WORD)
    assert table.block_type == "table" and table.heading_path == (DOCX_TITLE, DOCX_HEADINGS[1])
    assert table.text.splitlines()[0] == "| City | Nightly cap |"
    assert f"| {DOCX_TABLE_WORD} | 140 EUR |" in table.text


def test_pptx_slide_numbers_are_pages(tmp_path: Path) -> None:
    doc = convert(make_pptx(tmp_path / "deck.pptx"), SETTINGS)
    _check_common(doc, "pptx")
    assert doc.page_count == 3
    for number, title in enumerate(PPTX_SLIDE_TITLES, start=1):
        heading = _one(doc, title)
        assert (heading.block_type, heading.page, heading.heading_path) == ("heading", number, (title,))
        body = _one(doc, f"marmoset{number}")
        assert body.page == number and body.heading_path == (title,)


def test_xlsx_sheets_are_pages(tmp_path: Path) -> None:
    doc = convert(make_xlsx(tmp_path / "book.xlsx"), SETTINGS)
    _check_common(doc, "xlsx")
    assert doc.page_count == 2
    for number, sheet in enumerate(XLSX_SHEETS, start=1):
        table = _one(doc, f"{sheet.lower()}-cell")
        assert (table.block_type, table.page, table.heading_path) == ("table", number, (sheet,))
    assert "| budget-cell | 1200 |" in _one(doc, "budget-cell").text


def test_html_structure_without_scripts(tmp_path: Path) -> None:
    doc = convert(make_html(tmp_path / "garden.html"), SETTINGS)
    _check_common(doc, "html")
    assert not any(HTML_SCRIPT_MARKER in b.text or "color: red" in b.text for b in doc.blocks)
    water = _one(doc, "hydrangea")
    assert water.block_type == "paragraph" and water.heading_path == ("Garden Handbook", "Watering")
    assert _one(doc, "rain water").block_type == "list"
    table = _one(doc, "Trowel")
    assert table.block_type == "table" and table.heading_path == ("Garden Handbook", "Tools")


def test_markdown_headings_and_code(tmp_path: Path) -> None:
    doc = convert(make_markdown(tmp_path / "start.md"), SETTINGS)
    _check_common(doc, "md")
    code = _one(doc, MD_CODE_LINE)
    assert code.block_type == "code" and code.text == MD_CODE_LINE
    assert code.heading_path == ("Quick Start", "Install")
    assert _one(doc, "green badge").heading_path == ("Quick Start", "Install", "Verify")
    assert _one(doc, "cache folder").heading_path == ("Quick Start", "Troubleshooting")
    assert _one(doc, "download the wheel").text == "- download the wheel\n- run pip"
    assert _one(doc, "| port | 8000 |").block_type == "table"


def test_markdown_inline_formatting_stays_one_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "inline.md"
    path.write_text("## Run `docent` now\n\nUse the **fast** profile (see `cfg.toml`), then *wait*.\n\n"
                    "- item with `code` inside\n- plain item\n")
    doc = convert(path, SETTINGS)
    assert [b.text for b in doc.blocks] == [
        "Run docent now",
        "Use the fast profile (see cfg.toml), then wait.",
        "- item with code inside\n- plain item",
    ]
    assert all(b.heading_path == ("Run docent now",) for b in doc.blocks)


def test_broken_docx_is_a_conversion_error(tmp_path: Path) -> None:
    with pytest.raises(ConversionError) as info:
        convert(make_broken_docx(tmp_path / "broken.docx"), SETTINGS)
    assert info.value.reason.startswith("damaged or unreadable DOCX")
    assert "hash" not in info.value.reason


def test_too_many_slides(tmp_path: Path) -> None:
    with pytest.raises(ConversionError) as info:
        convert(make_pptx(tmp_path / "deck.pptx"), SETTINGS.with_overrides(max_pages=2))
    assert info.value.reason == "too many slides (3; the limit is 2, set by DOCENT_MAX_PAGES)"


def test_concurrent_conversions_share_one_converter(tmp_path: Path) -> None:
    paths = [make_docx(tmp_path / "a.docx"), make_pptx(tmp_path / "b.pptx"), make_xlsx(tmp_path / "c.xlsx"),
             make_html(tmp_path / "d.html"), make_markdown(tmp_path / "e.md")] * 2
    sequential = [convert(p, SETTINGS).blocks for p in paths]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda p: convert(p, SETTINGS).blocks, paths))
    assert parallel == sequential
