"""Content checks for the formats beyond PDF and OOXML: OpenDocument, EPUB, RTF, mail, legacy Office.

Split from `sniff.py` (which owns the extension table and the generic
checks) on the seam of "what does a file of this kind start with". Each
check is cheap: the first few KB, a ZIP directory and its `mimetype`
entry, or an OLE2 directory. A renamed file is named for what it is, so the
user knows what to rename it to or which program to save it from.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.types import ConversionError

#: What an OpenDocument or EPUB file's first ZIP entry, `mimetype`, must say.
ZIP_MIMETYPES: dict[str, str] = {
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "epub": "application/epub+zip",
}
_ZIP_KINDS = {"odt": "an OpenDocument text", "ods": "an OpenDocument spreadsheet",
              "odp": "an OpenDocument presentation", "epub": "an EPUB e-book"}
#: OOXML main parts, to name an Office file saved under an OpenDocument or EPUB name.
_OOXML_HINTS = (("wordprocessingml", ".docx", "a Word document"), ("presentationml", ".pptx", "a PowerPoint file"),
                ("spreadsheetml", ".xlsx", "an Excel workbook"))
#: EPUB font obfuscation is not DRM: the text stays readable.
_FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")

#: OLE2 stream that marks each legacy binary Office format, and the format to save it as.
OLE2_STREAMS: dict[str, tuple[str, str, str]] = {
    # file type: (stream name, what it is, modern extension)
    "xls": ("workbook", "an Excel 97-2003 workbook", ".xlsx"),
    "doc": ("worddocument", "a Word 97-2003 document", ".docx"),
    "ppt": ("powerpoint document", "a PowerPoint 97-2003 presentation", ".pptx"),
}
_OLE2_ALIASES = {"book": "xls"}  # Excel 5/95 workbooks name their stream "Book"

_HEADER_LINE = re.compile(rb"^[!-9;-~]{1,76}:")
_MAIL_FIELDS = (b"from:", b"to:", b"subject:", b"date:", b"message-id:", b"received:", b"return-path:",
                b"mime-version:", b"delivered-to:", b"sender:")


def zip_limit(settings: Settings) -> int:
    """How far an archive may expand: office formats compress text roughly 5-20x."""
    return max(settings.max_file_bytes * 20, 64 * 1024 * 1024)


def check_zip_format(path: Path, file_type: str, head: bytes, settings: Settings, describe: str) -> None:
    """An ODT/ODS/ODP/EPUB must be a ZIP whose `mimetype` entry names this format."""
    label = file_type.upper()
    if not head.startswith(b"PK\x03\x04"):
        raise ConversionError(path, f"not a valid {label} (not a ZIP archive; {describe})")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            expanded = sum(info.file_size for info in archive.infolist())
            mimetype = archive.read("mimetype")[:200].decode("ascii", "replace").strip() \
                if "mimetype" in names else ""
            content_types = archive.read("[Content_Types].xml")[:65536].decode("utf-8", "replace").lower() \
                if "[Content_Types].xml" in names else ""
            manifest = archive.read("META-INF/manifest.xml")[:1 << 20].decode("utf-8", "replace") \
                if "META-INF/manifest.xml" in names else ""
            encryption = archive.read("META-INF/encryption.xml")[:1 << 20].decode("utf-8", "replace") \
                if "META-INF/encryption.xml" in names else ""
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, KeyError) as exc:
        raise ConversionError(path, f"not a valid {label} (damaged ZIP archive: {exc})") from exc
    limit = zip_limit(settings)
    if expanded > limit:
        raise ConversionError(path, f"{label} expands to {expanded >> 20} MiB when unpacked "
                                    f"(limit {limit >> 20} MiB); refusing to open it")
    if not mimetype and file_type != "epub":
        match = re.search(r'full-path="/"[^>]*media-type="([^"]+)"|media-type="([^"]+)"[^>]*full-path="/"',
                          manifest)
        mimetype = next((g for g in match.groups() if g), "") if match else ""
    if mimetype == ZIP_MIMETYPES[file_type]:
        if file_type == "epub":
            _check_epub_encryption(path, encryption)
        elif "encryption-data" in manifest:
            raise ConversionError(path, f"encrypted {label} (password required)")
        return
    for other, expected in ZIP_MIMETYPES.items():
        if mimetype == expected:
            raise ConversionError(path, f"not a valid {label}: the content is {_ZIP_KINDS[other]}; "
                                        f"rename it to .{other}")
    for marker, extension, what in _OOXML_HINTS:
        if marker in content_types:
            raise ConversionError(path, f"not a valid {label}: the content is {what}; rename it to {extension}")
    if mimetype.startswith("application/vnd.oasis.opendocument."):
        raise ConversionError(path, f"not a valid {label}: this OpenDocument type ({mimetype}) is not supported")
    raise ConversionError(path, f"not a valid {label} (ZIP archive without the {label} mimetype entry)")


def _check_epub_encryption(path: Path, encryption: str) -> None:
    """Font obfuscation is allowed; any other encrypted resource is DRM."""
    algorithms = re.findall(r'EncryptionMethod[^>]*Algorithm="([^"]+)"', encryption)
    if any(algorithm not in _FONT_OBFUSCATION for algorithm in algorithms):
        raise ConversionError(path, "encrypted EPUB (DRM-protected e-books cannot be read)")


def check_ole2_streams(path: Path, file_type: str) -> None:
    """A legacy .xls/.doc/.ppt must hold its format's main stream; another Office format is named."""
    import olefile

    label = file_type.upper()
    try:
        with olefile.OleFileIO(str(path)) as ole:
            streams = {"/".join(entry).lower() for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError, IndexError, TypeError, RecursionError, EOFError) as exc:
        raise ConversionError(path, f"damaged or unreadable {label} (OLE2 directory: {exc}); "
                                    f"open it and save it as {OLE2_STREAMS[file_type][2]}") from exc
    found = {_OLE2_ALIASES.get(name, name) for name in streams}
    stream, _, modern = OLE2_STREAMS[file_type]
    if stream in found or file_type in found:
        return
    for other, (other_stream, what, _) in OLE2_STREAMS.items():
        if other_stream in found or other in found:
            raise ConversionError(path, f"not a valid {label}: the content is {what}; rename it to .{other}")
    raise ConversionError(path, f"not a valid {label} (an OLE2 file without a {label} stream); "
                                f"open it and save it as {modern}")


def check_rtf(path: Path, head: bytes, describe: str) -> None:
    """RTF is text starting with `{\\rtf`; anything else (a renamed .doc, a PDF) is named."""
    if not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{\\rtf"):
        raise ConversionError(path, f"not a valid RTF ({describe})")


def check_mail(path: Path, file_type: str, head: bytes, describe: str) -> None:
    """An .eml opens with header fields, an .mbox with a `From ` separator line."""
    text = head.lstrip(b"\xef\xbb\xbf\r\n")
    if file_type == "mbox":
        if not text.startswith(b"From "):
            raise ConversionError(path, f"not a valid MBOX (it must start with a 'From ' line; {describe})")
        return
    lines = text.split(b"\n", 40)[:40]
    if text.startswith(b"From ") and len(lines) > 1:
        lines = lines[1:]  # a message saved from a mailbox keeps its separator line
    if not lines or not _HEADER_LINE.match(lines[0]):
        raise ConversionError(path, f"not a valid EML (no mail header at the start; {describe})")
    if not any(line.lower().startswith(_MAIL_FIELDS) for line in lines):
        raise ConversionError(path, "not a valid EML (no From, To, Subject or Date header)")
