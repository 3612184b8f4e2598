"""Ingestion: turn one file into page-numbered, heading-aware blocks.

Public API: `convert(path, settings)` returns a `ConvertedDocument` or raises
`ConversionError` whose `reason` is shown to the user. Importing this package
loads no parser; PyMuPDF, Docling and RapidOCR are imported on first use.
"""

from rag_system.ingestion.dispatch import convert
from rag_system.ingestion.sniff import EXTENSIONS, detect_file_type, supported_extensions
from rag_system.ingestion.types import BLOCK_TYPES, Block, ConversionError, ConvertedDocument

__all__ = [
    "BLOCK_TYPES",
    "EXTENSIONS",
    "Block",
    "ConversionError",
    "ConvertedDocument",
    "convert",
    "detect_file_type",
    "supported_extensions",
]
