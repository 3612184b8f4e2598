"""`convert`: one file in, one `ConvertedDocument` (or a `ConversionError`) out.

This is the only entry point the indexing stage uses. It checks the file
(size, extension, magic bytes) before any parser sees it, routes it to the
right converter, and turns any unexpected library exception into a
`ConversionError`, so one hostile or broken file fails alone and the rest of
an index build continues.
"""

from __future__ import annotations

import importlib
import logging
import time
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.sniff import detect_file_type
from rag_system.ingestion.types import ConversionError, ConvertedDocument

logger = logging.getLogger(__name__)

#: file type -> (module, converter) for the formats read by a module of their own.
_OTHER: dict[str, tuple[str, str]] = {
    "epub": ("rag_system.ingestion.epub", "convert_epub"),
    "odt": ("rag_system.ingestion.odf", "convert_odt"),
    "odp": ("rag_system.ingestion.odf", "convert_odp"),
    "ods": ("rag_system.ingestion.ods", "convert_ods"),
    "rtf": ("rag_system.ingestion.rtf", "convert_rtf"),
    "ppt": ("rag_system.ingestion.ppt", "convert_ppt"),
    "doc": ("rag_system.ingestion.doc", "convert_doc"),
}


def convert(path: Path | str, settings: Settings) -> ConvertedDocument:
    """Convert one file into ordered blocks with page numbers and heading paths.

    Raises `ConversionError` with a reason meant for the user (empty file,
    encrypted PDF, binary data in a text file, unsupported type, ...).
    """
    path = Path(path)
    file_type = detect_file_type(path, settings)
    started = time.perf_counter()
    try:
        document = _route(path, settings, file_type)
    except ConversionError:
        raise
    except MemoryError as exc:
        raise ConversionError(path, "not enough memory to convert this file") from exc
    except Exception as exc:  # a parser bug on a strange file must not stop the whole build
        logger.exception("unexpected error converting %s", path)
        detail = str(exc).strip() or type(exc).__name__
        raise ConversionError(path, f"could not convert {file_type.upper()}: {detail[:300]}") from exc
    elapsed = time.perf_counter() - started
    logger.info("converted %s (%s): %d pages, %d blocks, ocr pages %s in %.2fs", path.name, file_type,
                document.page_count, len(document.blocks), list(document.ocr_pages) or "none", elapsed)
    for warning in document.warnings:
        logger.warning("%s: %s", path.name, warning)
    return document


def _route(path: Path, settings: Settings, file_type: str) -> ConvertedDocument:
    # Converters are imported here so importing the package stays cheap.
    if file_type == "pdf":
        from rag_system.ingestion.pdf import convert_pdf

        return convert_pdf(path, settings)
    if file_type == "txt":
        from rag_system.ingestion.text import convert_text

        return convert_text(path, settings)
    if file_type in ("xlsx", "xls", "csv", "tsv"):
        from rag_system.ingestion import spreadsheet

        if file_type == "xlsx":
            return spreadsheet.convert_xlsx(path, settings)
        if file_type == "xls":
            return spreadsheet.convert_xls(path, settings)
        return spreadsheet.convert_delimited(path, settings, file_type)
    if file_type in _OTHER:
        module, function = _OTHER[file_type]
        return getattr(importlib.import_module(module), function)(path, settings)
    if file_type in ("eml", "mbox"):
        from rag_system.ingestion.mail import convert_mail

        return convert_mail(path, settings, file_type, convert)  # attachments come back here
    from rag_system.ingestion.office import convert_office

    return convert_office(path, settings, file_type)
