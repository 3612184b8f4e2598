"""Plain-text conversion through the public `convert` entry point (no heavy libraries)."""

from __future__ import annotations

import codecs
import subprocess
import sys
from pathlib import Path

import pytest

from rag_system.config import Settings
from rag_system.ingestion import ConversionError, convert
from testkit.docs import make_text

SETTINGS = Settings()


def test_paragraphs_and_form_feed_pages(tmp_path: Path) -> None:
    doc = convert(make_text(tmp_path / "notes.txt"), SETTINGS)
    assert doc.file_type == "txt" and doc.name == "notes.txt" and doc.page_count == 2
    assert [(b.page, b.block_type) for b in doc.blocks] == [(1, "paragraph"), (1, "paragraph"), (2, "paragraph")]
    assert doc.blocks[0].text == "First paragraph about the walrus.\nIt wraps onto a second line."
    assert "beluga" in doc.blocks[2].text
    assert doc.ocr_engine is None and doc.ocr_pages == () and doc.warnings == ()


def test_accepts_str_path(tmp_path: Path) -> None:
    path = make_text(tmp_path / "notes.txt")
    assert convert(str(path), SETTINGS).path == path


def test_indentation_kept_relative_and_crlf_normalised(tmp_path: Path) -> None:
    path = tmp_path / "rfc.txt"
    path.write_bytes(b"   Abstract\r\n\r\n   enum {\r\n       a(0), b(1)\r\n   } Kind;\r\n")
    texts = [b.text for b in convert(path, SETTINGS).blocks]
    assert texts == ["Abstract", "enum {\n    a(0), b(1)\n} Kind;"]


def test_utf8_bom_and_utf16(tmp_path: Path) -> None:
    bom = tmp_path / "bom.txt"
    bom.write_bytes(codecs.BOM_UTF8 + "Grüße aus Köln".encode())
    assert convert(bom, SETTINGS).blocks[0].text == "Grüße aus Köln"
    wide = tmp_path / "wide.txt"
    wide.write_bytes("Ελληνικά κείμενο\n\nδεύτερη".encode("utf-16"))
    assert [b.text for b in convert(wide, SETTINGS).blocks] == ["Ελληνικά κείμενο", "δεύτερη"]


def test_windows_1252_fallback_warns(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    path.write_bytes("\u201cQuoted\u201d caf\xe9 text".encode("cp1252"))
    doc = convert(path, SETTINGS)
    assert doc.blocks[0].text == "\u201cQuoted\u201d caf\xe9 text"
    assert doc.warnings == ("file is not valid UTF-8; decoded as cp1252",)


def test_binary_after_a_text_start_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"plain start\n" * 1000 + b"\xff\x00\x01\x02" * 100)
    with pytest.raises(ConversionError) as info:
        convert(path, SETTINGS)
    assert info.value.reason == "binary content in a text file (contains NUL bytes)"


def test_running_headers_and_footers_dropped(tmp_path: Path) -> None:
    pages = []
    for n in range(1, 5):
        pages.append(f"RFC 9999        Example Protocol        May 2024\n\n"
                     f"Body of page {n} mentions topic{n}.\n\n\n"
                     f"Author                 Standards Track                 [Page {n}]\n")
    path = tmp_path / "rfc9999.txt"
    path.write_text("\f".join(pages))
    doc = convert(path, SETTINGS)
    assert [b.text for b in doc.blocks] == [f"Body of page {n} mentions topic{n}." for n in range(1, 5)]
    assert [b.page for b in doc.blocks] == [1, 2, 3, 4]


def test_whitespace_only_text_file_has_no_blocks(tmp_path: Path) -> None:
    path = tmp_path / "blank.txt"
    path.write_text("\n\n   \n")
    doc = convert(path, SETTINGS)
    assert doc.blocks == () and doc.warnings == ("no text found",)


def test_too_many_pages(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("\f".join(f"page {n}" for n in range(5)))
    with pytest.raises(ConversionError) as info:
        convert(path, SETTINGS.with_overrides(max_pages=3))
    assert "too many pages (5" in info.value.reason


def test_importing_ingestion_loads_no_parser() -> None:
    code = ("import sys, rag_system.ingestion\n"
            "heavy = [m for m in ('docling', 'pymupdf', 'fitz', 'rapidocr', 'onnxruntime', 'torch')"
            " if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


def test_numbered_section_titles_become_headings() -> None:
    from rag_system.ingestion.text import heading_level

    assert heading_level("4.5.  Stream Final Size") == 2
    assert heading_level("4.  Flow Control") == 1
    assert heading_level("Appendix A.2.  Sample Code") == 2
    assert heading_level("4.5.  Stream Final Size\nmore text") is None
    assert heading_level("3 packets were lost in transit.") is None
    assert heading_level("2.  the lower-case start") is None
    assert heading_level("1990 Annual Report") is None


def test_upload_prefix_is_not_part_of_the_display_name(tmp_path):
    from rag_system.ingestion.types import display_name

    digest = "ab" * 32
    assert display_name(tmp_path / f"{digest}_Leave Policy.pdf") == "Leave Policy.pdf"
    assert display_name(tmp_path / f"{digest}_") == f"{digest}_"
    assert display_name(tmp_path / "abc_report.pdf") == "abc_report.pdf"
