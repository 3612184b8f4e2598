"""File checks before any parser runs: every bad file gets a reason a user can act on."""

from __future__ import annotations

import codecs
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_system.config import Settings
from rag_system.ingestion import ConversionError, detect_file_type, supported_extensions
from rag_system.ingestion.sniff import binary_reason
from testkit.docs import make_binary_as_text, make_fake_docx

SETTINGS = Settings()


def _reason(path: Path, settings: Settings = SETTINGS) -> str:
    with pytest.raises(ConversionError) as info:
        detect_file_type(path, settings)
    assert info.value.path == str(path)
    return info.value.reason


def _ooxml(path: Path, main_content_type: str) -> Path:
    """A minimal ZIP with an OOXML [Content_Types].xml naming `main_content_type`."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml",
                         f'<Types><Override PartName="/x.xml" ContentType="{main_content_type}"/></Types>')
    return path


def test_supported_extensions_cover_every_format() -> None:
    assert set(supported_extensions()) >= {".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".md", ".txt"}


@pytest.mark.parametrize(("name", "expected"), [
    ("a.pdf", "pdf"), ("B.PDF", "pdf"), ("c.txt", "txt"), ("d.md", "md"), ("e.markdown", "md"),
    ("f.html", "html"), ("g.htm", "html"),
])
def test_text_and_pdf_types_detected(tmp_path: Path, name: str, expected: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"%PDF-1.7\n..." if expected == "pdf" else b"# hello\n\nworld\n")
    assert detect_file_type(path, SETTINGS) == expected


def test_zero_byte_file_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert _reason(path) == "empty file"


def test_missing_file(tmp_path: Path) -> None:
    assert _reason(tmp_path / "gone.pdf") == "file not found"


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    assert _reason(folder) == "not a regular file"


def test_unsupported_extension_lists_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "photo.jpg"
    path.write_bytes(b"\xff\xd8\xff\xe0 jpeg")
    reason = _reason(path)
    assert "unsupported file type '.jpg'" in reason
    for ext in (".pdf", ".docx", ".txt"):
        assert ext in reason


def test_no_extension(tmp_path: Path) -> None:
    path = tmp_path / "README"
    path.write_text("hello")
    assert "without an extension" in _reason(path)


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("x" * 2048)
    reason = _reason(path, SETTINGS.with_overrides(max_file_bytes=1024))
    assert "too large" in reason and "DOCENT_MAX_FILE_BYTES" in reason


def test_binary_bytes_named_txt(tmp_path: Path) -> None:
    reason = _reason(make_binary_as_text(tmp_path / "data.txt"))
    assert reason.startswith("binary content in a text file")


def test_pdf_named_txt_says_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "report.txt"
    path.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    assert _reason(path) == "binary content in a text file (looks like a PDF document)"


def test_binary_in_markdown_and_html(tmp_path: Path) -> None:
    for name, label in (("x.md", "Markdown"), ("x.html", "HTML")):
        path = tmp_path / name
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        assert _reason(path) == f"binary content in a {label} file (looks like a PNG image)"


def test_pdf_without_header(tmp_path: Path) -> None:
    path = tmp_path / "fake.pdf"
    path.write_text("Hello, I am plain text pretending to be a PDF.")
    reason = _reason(path)
    assert reason.startswith("not a valid PDF (file starts with b'Hello, I am ")


def test_zip_named_pdf_is_identified(tmp_path: Path) -> None:
    path = _ooxml(tmp_path / "slides.pdf", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml")
    assert "looks like a ZIP archive" in _reason(path)


def test_pdf_header_after_junk_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "junk.pdf"
    path.write_bytes(b"\r\n\r\n" + b"%PDF-1.5\n")
    assert detect_file_type(path, SETTINGS) == "pdf"


def test_docx_that_is_not_a_zip(tmp_path: Path) -> None:
    reason = _reason(make_fake_docx(tmp_path / "letter.docx"))
    assert reason.startswith("not a valid DOCX (not a ZIP archive; file starts with b'This is not ")


def test_damaged_zip(tmp_path: Path) -> None:
    path = tmp_path / "cut.xlsx"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    assert _reason(path).startswith("not a valid XLSX (damaged ZIP archive")


def test_xlsx_content_named_docx(tmp_path: Path) -> None:
    path = _ooxml(tmp_path / "sheet.docx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml")
    assert _reason(path) == "not a valid DOCX: the content is an Excel workbook; rename it to .xlsx"


def test_ooxml_of_the_right_kind_passes(tmp_path: Path) -> None:
    path = _ooxml(tmp_path / "deck.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml")
    assert detect_file_type(path, SETTINGS) == "pptx"


def test_zip_without_content_types(tmp_path: Path) -> None:
    path = tmp_path / "plain.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hello.txt", "hi")
    assert "without Office content types" in _reason(path)


OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def test_legacy_doc_named_docx(tmp_path: Path) -> None:
    path = tmp_path / "old.docx"
    path.write_bytes(OLE2 + b"\x00" * 600)
    assert "legacy binary Office file" in _reason(path)


def test_password_protected_office_file(tmp_path: Path) -> None:
    path = tmp_path / "locked.xlsx"
    path.write_bytes(OLE2 + b"\x00" * 100 + "EncryptedPackage".encode("utf-16-le") + b"\x00" * 100)
    assert _reason(path) == "encrypted XLSX (password required)"


def test_utf16_text_with_bom_is_text() -> None:
    assert binary_reason(codecs.BOM_UTF16_LE + "hello".encode("utf-16-le")) is None


def test_latin1_text_is_text() -> None:
    assert binary_reason("Caf\xe9 cr\xe8me br\xfbl\xe9e\n".encode("latin-1")) is None


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=500))
def test_any_printable_utf8_text_is_text(text: str) -> None:
    assert binary_reason(text.encode("utf-8")) is None


@given(st.binary(max_size=600))
def test_binary_reason_never_raises(data: bytes) -> None:
    result = binary_reason(data)
    assert result is None or isinstance(result, str)
