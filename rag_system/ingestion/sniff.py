"""Decide how to read a file, from its extension *and* its first bytes.

Users drop whatever they have into a folder: a PDF saved as `.txt`, a `.docx`
that is really an old binary `.doc`, a half-downloaded file. Trusting the
extension alone sends those to a parser that fails with an unhelpful library
message (or, worse, indexes garbage), so every file is checked here first and
rejected with a reason a user can act on.
"""

from __future__ import annotations

import codecs
import os
import zipfile
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.sniff_formats import (
    OLE2_STREAMS, ZIP_MIMETYPES, check_mail, check_ole2_streams, check_rtf, check_zip_format, zip_limit,
)
from rag_system.ingestion.types import ConversionError

#: Extension (lower case) -> file type recorded in `ConvertedDocument.file_type`.
EXTENSIONS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".xls": "xls",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".html": "html",
    ".htm": "html",
    ".md": "md",
    ".markdown": "md",
    ".txt": "txt",
    ".epub": "epub",
    ".odt": "odt",
    ".ods": "ods",
    ".odp": "odp",
    ".rtf": "rtf",
    ".eml": "eml",
    ".mbox": "mbox",
    ".doc": "doc",
    ".ppt": "ppt",
}

_OOXML_MAIN_PARTS: dict[str, tuple[str, ...]] = {
    # Substrings of the main part's content type in [Content_Types].xml.
    "docx": ("wordprocessingml.document.main", "ms-word.document.macroenabled.main",
             "wordprocessingml.template.main"),
    "pptx": ("presentationml.presentation.main", "ms-powerpoint.presentation.macroenabled.main",
             "presentationml.slideshow.main"),
    "xlsx": ("spreadsheetml.sheet.main", "ms-excel.sheet.macroenabled.main",
             "spreadsheetml.template.main"),
}

_KIND_NAMES = {"docx": "a Word document", "pptx": "a PowerPoint presentation", "xlsx": "an Excel workbook"}

#: Known signatures, to say what a mislabelled file actually is.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive or Office document"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy (binary) or encrypted Office file"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"\x7fELF", "a program (ELF executable)"),
    (b"{\\rtf", "an RTF document"),
)

_HEAD_BYTES = 8192
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Legacy binary Office formats (OLE2 containers) and the format to save them as.
_OLE2_TYPES = {name: modern for name, (_, _, modern) in OLE2_STREAMS.items()}
_TEXT_LABELS = {"txt": "text", "md": "Markdown", "html": "HTML", "csv": "CSV", "tsv": "TSV", "eml": "EML",
                "mbox": "MBOX"}
#: Text control characters that do occur in real text files.
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\b\x1b")
_TEXT_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def supported_extensions() -> tuple[str, ...]:
    """The extensions `convert` accepts, sorted, for messages and file pickers."""
    return tuple(sorted(EXTENSIONS))


def detect_file_type(path: Path, settings: Settings) -> str:
    """Return the file type to convert `path` as, or raise `ConversionError`.

    Cheap checks only (stat, the first few KB, a ZIP directory): the real
    parse happens in the converter, which reports its own failures.
    """
    suffix = path.suffix.lower()
    file_type = EXTENSIONS.get(suffix)
    if file_type is None:
        shown = f"'{suffix}'" if suffix else "without an extension"
        raise ConversionError(
            path, f"unsupported file type {shown}; supported: {', '.join(supported_extensions())}"
        )
    size = _checked_size(path, settings)
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError as exc:
        raise ConversionError(path, f"cannot read file: {exc.strerror or exc}") from exc
    if size == 0 or not head:
        raise ConversionError(path, "empty file")

    if file_type == "pdf":
        # The PDF spec allows junk before the header; readers look in the first 1 KB.
        if b"%PDF-" not in head[:1024]:
            raise ConversionError(path, f"not a valid PDF ({_describe_start(head)})")
    elif file_type in _OOXML_MAIN_PARTS:
        _check_ooxml(path, file_type, head, settings)
    elif file_type == "doc" and head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        return "rtf"  # Word saves RTF under .doc ("Rich Text" in old Office); it is read as what it is
    elif file_type in _OLE2_TYPES:
        _check_ole2(path, file_type, head)
    elif file_type in ZIP_MIMETYPES:
        check_zip_format(path, file_type, head, settings, _describe_start(head))
    elif file_type == "rtf":
        check_rtf(path, head, _describe_start(head))
    else:
        if file_type in ("eml", "mbox"):  # a renamed file is named for what it is before "binary content"
            check_mail(path, file_type, head, _describe_start(head))
        problem = binary_reason(head)
        if problem:
            label = _TEXT_LABELS.get(file_type, file_type.upper())
            raise ConversionError(path, f"binary content in {_article(label)} {label} file ({problem})")
    return file_type


def _article(label: str) -> str:
    return "an" if label in ("EML", "MBOX") else "a"


def _checked_size(path: Path, settings: Settings) -> int:
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise ConversionError(path, "file not found") from exc
    except OSError as exc:
        raise ConversionError(path, f"cannot read file: {exc.strerror or exc}") from exc
    if not path.is_file():
        raise ConversionError(path, "not a regular file")
    if not os.access(path, os.R_OK):
        raise ConversionError(path, "cannot read file: permission denied")
    if info.st_size > settings.max_file_bytes:
        raise ConversionError(
            path,
            f"file is too large ({_mib(info.st_size)}; the limit is {_mib(settings.max_file_bytes)},"
            " set by DOCENT_MAX_FILE_BYTES)",
        )
    return info.st_size


def _check_ooxml(path: Path, file_type: str, head: bytes, settings: Settings) -> None:
    """A .docx/.pptx/.xlsx must be a ZIP whose main part has the right type."""
    label = file_type.upper()
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        # Password-protected OOXML files are OLE2 containers with an EncryptedPackage stream.
        if _is_encrypted_ooxml(path):
            raise ConversionError(path, f"encrypted {label} (password required)")
        raise ConversionError(
            path, f"not a valid {label}: this is a legacy binary Office file "
            f"(.doc/.xls/.ppt); open it and save it as {path.suffix.lower()}"
        )
    if not head.startswith(b"PK\x03\x04"):
        raise ConversionError(path, f"not a valid {label} (not a ZIP archive; {_describe_start(head)})")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            expanded = sum(info.file_size for info in archive.infolist())
            content_types = (
                archive.read("[Content_Types].xml").decode("utf-8", "replace").lower()
                if "[Content_Types].xml" in names else ""
            )
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise ConversionError(path, f"not a valid {label} (damaged ZIP archive: {exc})") from exc
    limit = zip_limit(settings)  # a guard against decompression bombs
    if expanded > limit:
        raise ConversionError(
            path, f"{label} expands to {_mib(expanded)} when unpacked (limit {_mib(limit)}); refusing to open it"
        )
    if not content_types:
        raise ConversionError(path, f"not a valid {label} (ZIP archive without Office content types)")
    if any(marker in content_types for marker in _OOXML_MAIN_PARTS[file_type]):
        return
    for other, markers in _OOXML_MAIN_PARTS.items():
        if any(marker in content_types for marker in markers):
            raise ConversionError(
                path, f"not a valid {label}: the content is {_KIND_NAMES[other]}; rename it to .{other}"
            )
    raise ConversionError(path, f"not a valid {label} (ZIP archive without a {label} main document)")


def _check_ole2(path: Path, file_type: str, head: bytes) -> None:
    """A legacy .xls/.doc/.ppt must be an OLE2 container holding its format (a renamed .xlsx is named)."""
    label, modern = file_type.upper(), _OLE2_TYPES[file_type]
    if head.startswith(b"PK\x03\x04"):
        raise ConversionError(path, f"not a valid {label}: this is a ZIP-based file; rename it to {modern}")
    if not head.startswith(_OLE2):
        raise ConversionError(path, f"not a valid {label} ({_describe_start(head)})")
    if _is_encrypted_ooxml(path):
        raise ConversionError(path, f"encrypted {label} (password required)")
    check_ole2_streams(path, file_type)


def _is_encrypted_ooxml(path: Path, max_scan: int = 64 * 1024 * 1024) -> bool:
    """True when an OLE2 file holds an `EncryptedPackage` stream (Office encryption)."""
    marker = "EncryptedPackage".encode("utf-16-le")
    try:
        with path.open("rb") as handle:
            data = handle.read(max_scan)
    except OSError:
        return False
    return marker in data


def binary_reason(sample: bytes) -> str | None:
    """Why `sample` (the start of a file) is not text, or None when it is text.

    Accepts UTF-8, UTF-16 with BOM and single-byte encodings; rejects NUL
    bytes, known binary signatures and a high share of control characters.
    """
    if sample.startswith(_TEXT_BOMS):
        return None
    for signature, what in _SIGNATURES:
        if sample.startswith(signature) and what != "an RTF document":
            return f"looks like {what}"
    if b"\x00" in sample:
        return "contains NUL bytes"
    controls = sum(1 for byte in sample if (byte < 0x20 and byte not in _TEXT_CONTROLS) or byte == 0x7F)
    if controls > max(2, len(sample) // 100):
        return f"{controls} control characters in the first {len(sample)} bytes"
    return None


def _describe_start(head: bytes) -> str:
    """'file starts with b'...'', plus what it looks like when we know."""
    start = head[:12]
    for signature, what in _SIGNATURES:
        if head.startswith(signature):
            return f"file starts with {start!r}, which looks like {what}"
    if not head.strip():
        return "file contains only whitespace"
    return f"file starts with {start!r}"


def _mib(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"
