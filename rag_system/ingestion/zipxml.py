"""XML parts of ZIP-based formats (OpenDocument, EPUB), parsed without trusting them.

Why a helper: these files come from anywhere, and an XML parser left at its
defaults would fetch external entities or expand entity bombs. Every part is
read through one hardened parser, and a missing or broken part becomes a
`ConversionError` that names the format, not an lxml traceback.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from rag_system.ingestion.types import ConversionError


def parse_xml(data: bytes, path: Path, label: str, part: str) -> Any:
    """The root element of `data`; no DTDs, no entities, no network."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             recover=False)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ConversionError(path, f"damaged {label} ({part} is not well-formed XML: {exc})") from exc


def read_part(archive: zipfile.ZipFile, name: str, path: Path, label: str) -> bytes:
    """One member of the archive, or a `ConversionError` saying which part is missing or broken."""
    try:
        return archive.read(name)
    except KeyError as exc:
        raise ConversionError(path, f"damaged {label} ({name} is missing)") from exc
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise ConversionError(path, f"damaged {label} ({name} cannot be unpacked: {exc})") from exc


def open_zip(path: Path, label: str) -> zipfile.ZipFile:
    """The archive (the sniffer has checked it is one; this catches a file changed since)."""
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ConversionError(path, f"damaged {label} (ZIP archive: {exc})") from exc


def local_name(element: Any) -> str:
    """An element's tag without its namespace ('p' for '{urn:oasis:...:text:1.0}p')."""
    tag = element.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
