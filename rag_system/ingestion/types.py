"""Data passed from ingestion to chunking.

A converter turns one file into a `ConvertedDocument`: an ordered list of
blocks, each knowing its page and heading path, so chunking never has to look
at the original file again and every chunk can carry a page-level citation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

#: Block types a converter may emit. "heading" blocks open a new section.
BLOCK_TYPES = ("heading", "paragraph", "list", "table", "code", "ocr")


@dataclass(frozen=True)
class TableRows:
    """A table's cells by row, for tables whose rows a reader can name (sheets, CSV files).

    The chunker cuts a long table between rows and repeats `header` in every
    piece, so each chunk still says what its columns mean, and records the
    source row numbers it holds ("Sheet Q3, rows 12-40").
    """

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_numbers: tuple[int, ...]  # 1-based row number of each row, as a spreadsheet numbers them
    header_row: int = 1
    sheet: str = ""  # the sheet's name; empty for a CSV/TSV file


@dataclass(frozen=True)
class Block:
    """One logical unit of text on one page (paragraph, table, heading...)."""

    text: str
    page: int  # 1-based page number; text formats use 1 (or a sheet/slide number)
    block_type: str = "paragraph"
    heading_path: tuple[str, ...] = ()
    line: int = 0  # first line in the source file (text formats), so citations can say where; 0 = unknown
    table: TableRows | None = None  # row structure of a sheet or CSV table (`text` is its rendering)


@dataclass(frozen=True)
class ConvertedDocument:
    """Everything later stages need from one source file."""

    path: Path
    name: str
    file_type: str  # "pdf", "docx", "pptx", "xlsx", "csv", "tsv", "html", "md", "txt", ...
    page_count: int
    blocks: tuple[Block, ...]
    ocr_engine: str | None = None  # which OCR engine ran, when any page needed it
    ocr_pages: tuple[int, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    #: Each page is a document of its own (a mailbox's messages): indexed as parts of this file,
    #: `<file id>-<page>` (`common/document_ids.py`), so nothing joins one page to the next.
    pages_are_documents: bool = False
    #: Where the bytes came from when that was not `path` (an object fetched from storage).
    uri: str = ""

    @property
    def source_path(self) -> str:
        """The source as the index names it: the object's URI, or the file's path."""
        return self.uri or str(self.path)


class ConversionError(Exception):
    """A file could not be converted; `reason` is shown to the user as-is."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def check_page_limit(path: Path, count: int, unit: str, limit: int) -> None:
    """Refuse a file with more pages (slides, sheets, chapters) than `DOCENT_MAX_PAGES` allows."""
    if count > limit:
        raise ConversionError(path, f"too many {unit} ({count}; the limit is {limit}, set by DOCENT_MAX_PAGES)")


_UPLOAD_PREFIX = re.compile(r"^[0-9a-f]{64}_(?=.)")


def display_name(path: Path) -> str:
    """The name users see in citations: the file name without the gateway's `<sha256>_` upload prefix.

    Uploads are stored as `<sha256>_<original name>` so identical names never
    collide on disk; the prefix means nothing to a reader and would crowd every
    evidence label the model sees.
    """
    return _UPLOAD_PREFIX.sub("", path.name)
