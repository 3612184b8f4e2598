"""RTF documents through `striprtf`: paragraphs in order, pages at hard page breaks.

RTF is text with control words; `striprtf` (pure Python, no office suite)
drops the control words, font and colour tables and pictures, and decodes
`\\'xx` and `\\u` escapes by the file's code page. It turns `\\page` into a
blank line, so page breaks are marked first (as a form feed) and every page
after a hard break is its own page, the way a word processor prints it;
cell ends are marked the same way, so a table's rows come out as a table.
A file whose groups never close was cut off: it fails instead of indexing
half a document silently.
"""

from __future__ import annotations

import re
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.text import line_document
from rag_system.ingestion.types import ConversionError, ConvertedDocument

_PAGE = re.compile(rb"\\page(?![a-zA-Z])(?:-?\d+)? ?")
_CELL = re.compile(rb"\\(?:nest)?cell(?![a-zA-Z])(?:-?\d+)? ?")
#: What a cell end becomes in striprtf's output (a private-use character no document contains).
CELL_MARK = "\ue000"
_ESCAPED = re.compile(rb"\\[\\{}]")
#: The code page striprtf falls back to when a file names none (`\ansicpg`), as Word does.
DEFAULT_CODEPAGE = "cp1252"


def convert_rtf(path: Path, settings: Settings) -> ConvertedDocument:
    """One paragraph block per RTF paragraph; numbered section titles become headings."""
    from striprtf.striprtf import rtf_to_text

    data = path.read_bytes()
    _check_groups(path, data)
    marked = _CELL.sub(rb"\\u57344?", _PAGE.sub(rb"\\par\\u12?", data))
    try:
        # Latin-1 maps every byte to itself: RTF is 7-bit, and striprtf decodes the escapes.
        text = rtf_to_text(marked.decode("latin-1"), encoding=DEFAULT_CODEPAGE, errors="replace")
    except (IndexError, ValueError, LookupError, OverflowError) as exc:
        raise ConversionError(path, f"damaged RTF ({type(exc).__name__}: {exc})") from exc
    return line_document(text, path, settings, "rtf", _cells)


def _cells(line: str) -> list[str] | None:
    """A table row's cells (each ended by `CELL_MARK`), or None for a paragraph."""
    if CELL_MARK not in line:
        return None
    return [cell.strip() for cell in line.split(CELL_MARK)[:-1]] or [line.replace(CELL_MARK, "").strip()]


def _check_groups(path: Path, data: bytes) -> None:
    """Braces must balance: an unclosed group means the file was cut off."""
    plain = _ESCAPED.sub(b"", data)
    depth = plain.count(b"{") - plain.count(b"}")
    if depth > 0:
        raise ConversionError(path, f"damaged RTF: the file is cut off ({depth} groups never close); "
                                    "save it again from the program that made it")
