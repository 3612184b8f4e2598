"""Content checks for EPUB, OpenDocument, RTF, mail and legacy Office: a renamed file is named for what it is."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from rag_system.config import Settings
from rag_system.ingestion import ConversionError, detect_file_type, supported_extensions

SETTINGS = Settings()
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _reason(path: Path) -> str:
    with pytest.raises(ConversionError) as info:
        detect_file_type(path, SETTINGS)
    return info.value.reason


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def test_new_extensions_are_supported() -> None:
    assert {".epub", ".odt", ".ods", ".odp", ".rtf", ".eml", ".mbox", ".doc", ".ppt"} <= set(supported_extensions())


@pytest.mark.parametrize(("name", "mimetype", "expected"), [
    ("a.odt", "application/vnd.oasis.opendocument.text", "odt"),
    ("b.ODS", "application/vnd.oasis.opendocument.spreadsheet", "ods"),
    ("c.odp", "application/vnd.oasis.opendocument.presentation", "odp"),
    ("d.epub", "application/epub+zip", "epub"),
])
def test_zip_formats_detected_by_their_mimetype_entry(tmp_path: Path, name: str, mimetype: str,
                                                      expected: str) -> None:
    assert detect_file_type(_zip(tmp_path / name, {"mimetype": mimetype}), SETTINGS) == expected


def test_odf_without_mimetype_entry_is_read_from_its_manifest(tmp_path: Path) -> None:
    manifest = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                '<manifest:file-entry manifest:full-path="/" '
                'manifest:media-type="application/vnd.oasis.opendocument.text"/></manifest:manifest>')
    assert detect_file_type(_zip(tmp_path / "m.odt", {"META-INF/manifest.xml": manifest}), SETTINGS) == "odt"


def test_odt_that_is_a_presentation_says_rename(tmp_path: Path) -> None:
    path = _zip(tmp_path / "deck.odt", {"mimetype": "application/vnd.oasis.opendocument.presentation"})
    assert _reason(path) == "not a valid ODT: the content is an OpenDocument presentation; rename it to .odp"


def test_odt_that_is_a_word_file_says_rename(tmp_path: Path) -> None:
    path = _zip(tmp_path / "report.odt", {"[Content_Types].xml": "<Types><Override ContentType="
                                          '"application/vnd.openxmlformats-officedocument.wordprocessingml.'
                                          'document.main+xml"/></Types>'})
    assert _reason(path) == "not a valid ODT: the content is a Word document; rename it to .docx"


def test_epub_that_is_a_plain_zip(tmp_path: Path) -> None:
    path = _zip(tmp_path / "photos.epub", {"a.txt": "x"})
    assert _reason(path) == "not a valid EPUB (ZIP archive without the EPUB mimetype entry)"


def test_odt_that_is_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "notes.odt"
    path.write_bytes(b"%PDF-1.7\n")
    assert _reason(path).startswith("not a valid ODT (not a ZIP archive; file starts with b'%PDF-1.7")


def test_encrypted_odf_needs_a_password(tmp_path: Path) -> None:
    manifest = ('<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                '<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/>'
                "</manifest:file-entry></manifest:manifest>")
    path = _zip(tmp_path / "secret.ods", {"mimetype": "application/vnd.oasis.opendocument.spreadsheet",
                                          "META-INF/manifest.xml": manifest})
    assert _reason(path) == "encrypted ODS (password required)"


def test_epub_with_drm_is_refused_but_font_obfuscation_is_not(tmp_path: Path) -> None:
    def encryption(algorithm: str) -> str:
        return ('<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
                f'<enc:EncryptionMethod Algorithm="{algorithm}"/></enc:EncryptedData></encryption>')

    drm = _zip(tmp_path / "drm.epub", {"mimetype": "application/epub+zip",
                                       "META-INF/encryption.xml": encryption("http://www.w3.org/2001/04/xmlenc#aes128-cbc")})
    assert _reason(drm) == "encrypted EPUB (DRM-protected e-books cannot be read)"
    fonts = _zip(tmp_path / "fonts.epub", {"mimetype": "application/epub+zip",
                                           "META-INF/encryption.xml": encryption("http://www.idpf.org/2008/embedding")})
    assert detect_file_type(fonts, SETTINGS) == "epub"


def test_rtf_must_start_with_the_rtf_group(tmp_path: Path) -> None:
    good = tmp_path / "a.rtf"
    good.write_bytes(b"\xef\xbb\xbf\n{\\rtf1\\ansi hello}")
    assert detect_file_type(good, SETTINGS) == "rtf"
    bad = tmp_path / "b.rtf"
    bad.write_bytes(OLE2 + b"\x00" * 100)
    assert _reason(bad).startswith("not a valid RTF (file starts with")
    assert "legacy (binary) or encrypted Office file" in _reason(bad)


def test_mail_files_need_mail_headers(tmp_path: Path) -> None:
    eml = tmp_path / "a.eml"
    eml.write_bytes(b"Return-Path: <a@example.org>\nFrom: a@example.org\nSubject: hi\n\nbody\n")
    assert detect_file_type(eml, SETTINGS) == "eml"
    saved_from_mbox = tmp_path / "b.eml"
    saved_from_mbox.write_bytes(b"From a@example.org Tue Dec  1 09:30:00 2026\nFrom: a@example.org\n\nbody\n")
    assert detect_file_type(saved_from_mbox, SETTINGS) == "eml"
    letter = tmp_path / "letter.eml"
    letter.write_bytes(b"Dear team,\n\nsee you soon.\n")
    assert _reason(letter).startswith("not a valid EML (no mail header at the start")
    headers_only = tmp_path / "config.eml"
    headers_only.write_bytes(b"Host: example.org\nPort: 25\n")
    assert _reason(headers_only) == "not a valid EML (no From, To, Subject or Date header)"
    mbox = tmp_path / "box.mbox"
    mbox.write_bytes(b"From a@example.org Tue Dec  1 09:30:00 2026\nFrom: a@example.org\n\nbody\n")
    assert detect_file_type(mbox, SETTINGS) == "mbox"


@pytest.mark.parametrize("name", ["old.doc", "old.ppt"])
def test_legacy_office_named_from_its_zip_twin(tmp_path: Path, name: str) -> None:
    path = _zip(tmp_path / name, {"[Content_Types].xml": "<Types/>"})
    modern = ".docx" if name.endswith(".doc") else ".pptx"
    assert _reason(path) == f"not a valid {name[-3:].upper()}: this is a ZIP-based file; rename it to {modern}"


def test_legacy_office_file_of_the_wrong_kind(tmp_path: Path) -> None:
    """A real OLE2 workbook (statsmodels ships one) saved as .doc names what it is."""
    import importlib.util

    spec = importlib.util.find_spec("statsmodels")
    assert spec is not None and spec.submodule_search_locations
    source = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "macrodata" / "src" / "macrodata.xls"
    path = tmp_path / "macro.doc"
    path.write_bytes((source / "macrodata.xls").read_bytes() if source.is_dir() else source.read_bytes())
    assert _reason(path) == "not a valid DOC: the content is an Excel 97-2003 workbook; rename it to .xls"
    workbook = tmp_path / "macro.xls"
    workbook.write_bytes(path.read_bytes())
    assert detect_file_type(workbook, SETTINGS) == "xls"


def test_rtf_saved_as_doc_is_read_as_rtf(tmp_path: Path) -> None:
    path = tmp_path / "letter.doc"
    path.write_bytes(b"{\\rtf1\\ansi Dear team,\\par see you soon.\\par }")
    assert detect_file_type(path, SETTINGS) == "rtf"
