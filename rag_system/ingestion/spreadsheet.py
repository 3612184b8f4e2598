"""Spreadsheets (XLSX, legacy XLS) and delimited text (CSV, TSV) -> sheet-aware table blocks.

Read directly (openpyxl, xlrd, the `csv` module) instead of through Docling
because a table answer needs what a rendered page throws away: the real row
numbers a citation can name, the header row to repeat in every chunk, and
merged ranges (`rag_system.ingestion.tables`). Each sheet is a page, its name
a heading; a CSV/TSV file is one page.
"""

from __future__ import annotations

import csv
import io
import logging
import sys
from pathlib import Path
from typing import Any, Literal

from rag_system.config import Settings
from rag_system.ingestion.structure import BlockBuilder
from rag_system.ingestion.tables import Grid, add_grid, cell_text, fill_merged
from rag_system.ingestion.text import decode_text
from rag_system.ingestion.types import ConversionError, ConvertedDocument, check_page_limit

logger = logging.getLogger(__name__)

#: Delimiters a CSV file may use (the sniffer picks among these).
CSV_DELIMITERS = ",;\t|"
_SNIFF_CHARS = 64 * 1024


def convert_xlsx(path: Path, settings: Settings) -> ConvertedDocument:
    """Every sheet (hidden ones too: they often hold the lookup tables) as a page of tables."""
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        # data_only: the values Excel last calculated, not the formulas.
        book = openpyxl.load_workbook(path, data_only=True)
    except (InvalidFileException, KeyError, ValueError, OSError, EOFError) as exc:
        raise ConversionError(path, f"damaged or unreadable XLSX ({type(exc).__name__}: {exc})") from exc
    try:
        sheets = [ws for ws in book.worksheets if hasattr(ws, "iter_rows")]
        check_page_limit(path, len(sheets), "sheets", settings.max_pages)
        builder = BlockBuilder()
        for number, sheet in enumerate(sheets, start=1):
            builder.headings.reset()
            title = sheet.title or f"Sheet {number}"
            builder.heading(title, number, 1)
            add_grid(builder, _xlsx_grid(sheet), number, title)
        return builder.document(path, "xlsx", len(sheets))
    finally:
        book.close()


def _xlsx_grid(sheet: Any) -> Grid:
    cells: list[list[str]] = []
    numbers: list[int] = []
    for row in sheet.iter_rows():
        if not row:
            continue
        numbers.append(row[0].row)
        cells.append([cell_text(c.value, getattr(c, "number_format", "") or "") for c in row])
    if not cells:
        return []
    first = numbers[0]
    ranges = [(r.min_row - first, r.min_col - 1, r.max_row - first, r.max_col - 1)
              for r in sheet.merged_cells.ranges]
    fill_merged(cells, ranges)
    return list(zip(numbers, cells))


def convert_xls(path: Path, settings: Settings) -> ConvertedDocument:
    """A legacy binary workbook (Excel 97-2003) through xlrd, which reads it without Office."""
    import xlrd
    from xlrd.biffh import XLRDError  # also xlrd.XLRDError, which types-xlrd does not list
    from xlrd.compdoc import CompDocError

    notes = io.StringIO()  # xlrd writes its warnings to a "logfile", stdout by default
    try:
        book = xlrd.open_workbook(str(path), formatting_info=False, on_demand=True, logfile=notes)
    except (XLRDError, CompDocError, OSError, ValueError, AssertionError, IndexError) as exc:
        raise ConversionError(path, f"damaged or unreadable XLS ({exc}); open it and save it as .xlsx") from exc
    try:
        check_page_limit(path, book.nsheets, "sheets", settings.max_pages)
        builder = BlockBuilder()
        for index in range(book.nsheets):
            sheet = book.sheet_by_index(index)
            builder.headings.reset()
            title = sheet.name or f"Sheet {index + 1}"
            builder.heading(title, index + 1, 1)
            cells = [[_xls_cell(sheet.cell(r, c), book.datemode) for c in range(sheet.ncols)]
                     for r in range(sheet.nrows)]
            # xlrd reports merged ranges only with formatting_info, which .xls files
            # written by other tools often break; merged cells then show their top-left value only.
            add_grid(builder, [(r + 1, row) for r, row in enumerate(cells)], index + 1, title)
            book.unload_sheet(index)
        return builder.document(path, "xls", book.nsheets)
    finally:
        book.release_resources()
        if notes.getvalue().strip():
            logger.debug("xlrd on %s: %s", path.name, notes.getvalue().strip())


def _xls_cell(cell: Any, datemode: Literal[0, 1]) -> str:
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return cell_text(xlrd.xldate.xldate_as_datetime(cell.value, datemode))
        except (ValueError, OverflowError):
            return cell_text(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return cell_text(bool(cell.value))
    if cell.ctype in (xlrd.XL_CELL_ERROR, xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    return cell_text(cell.value)


def convert_delimited(path: Path, settings: Settings, file_type: str) -> ConvertedDocument:
    """CSV (delimiter sniffed among `CSV_DELIMITERS`) or TSV: the first row is the header."""
    text, warning = decode_text(path.read_bytes(), path)
    delimiter = "\t" if file_type == "tsv" else _sniff_delimiter(text[:_SNIFF_CHARS])
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        grid = [(number, [cell_text(cell) for cell in row]) for number, row in enumerate(reader, start=1)]
    except csv.Error as exc:
        raise ConversionError(path, f"malformed {file_type.upper()} (line {reader.line_num}: {exc})") from exc
    builder = BlockBuilder()
    add_grid(builder, grid, 1)
    return builder.document(path, file_type, 1, [warning] if warning else [])


def _sniff_delimiter(sample: str) -> str:
    lines = sample.splitlines()
    head = "\n".join(lines[:50]) if len(lines) > 1 else sample
    try:
        return csv.Sniffer().sniff(head, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        return ","
