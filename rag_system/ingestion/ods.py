"""OpenDocument spreadsheets (ODS) -> the same sheet-aware row tables as XLSX.

Each `table:table` is a sheet: its page, its name a heading, and its grid
goes through `tables.add_grid`, so a row keeps its header and a citation
names "Sheet Q3, rows 12–40" exactly as for a workbook. Values are read as
typed (`office:value`, `office:date-value`, ...) and written the way
`tables.cell_text` writes XLSX values, so the same sheet saved in either
format reads the same. ODS compresses repeats (`number-rows-repeated`,
`number-columns-repeated`): a sheet's tail is often one empty row repeated
a million times, so empty repeats advance the counters without being built.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from rag_system.config import Settings
from rag_system.ingestion.odf import OFFICE, TABLE, body_of, cell_paragraphs, content_root
from rag_system.ingestion.structure import BlockBuilder
from rag_system.ingestion.tables import Grid, add_grid, cell_text, fill_merged
from rag_system.ingestion.types import ConversionError, ConvertedDocument, check_page_limit

#: A filled row or cell repeated more often than this is cut here (a sheet of copies says nothing more).
MAX_REPEAT = 1000
#: Filled cells one sheet may expand to; repeats multiply, so a small file could otherwise ask for billions.
MAX_CELLS = 5_000_000
#: LibreOffice's widest sheet; cells beyond it are not read.
MAX_COLUMNS = 16384
_CELL = f"{{{TABLE}}}table-cell"
_COVERED = f"{{{TABLE}}}covered-table-cell"
_ROW = f"{{{TABLE}}}table-row"


def convert_ods(path: Path, settings: Settings) -> ConvertedDocument:
    """Every sheet as a page of row tables, merged ranges filled."""
    body = body_of(content_root(path, "ODS"), "spreadsheet", path, "ODS")
    sheets = body.findall(f"{{{TABLE}}}table")
    check_page_limit(path, len(sheets), "sheets", settings.max_pages)
    builder = BlockBuilder()
    for number, sheet in enumerate(sheets, start=1):
        builder.headings.reset()
        title = sheet.get(f"{{{TABLE}}}name") or f"Sheet {number}"
        builder.heading(title, number, 1)
        add_grid(builder, _grid(sheet, path), number, title)
    return builder.document(path, "ods", len(sheets))


def _grid(sheet: Any, path: Path) -> Grid:
    rows: Grid = []
    merges: list[tuple[int, int, int, int]] = []  # (first row, first column, rows, columns); rows by number
    number = 0
    cell_count = 0
    for row in sheet.iter(_ROW):
        repeat = _repeat(row.get(f"{{{TABLE}}}number-rows-repeated"))
        cells, spans, covered = _cells(row)
        if not any(cells) and not covered:
            number += repeat
            continue
        copies = min(repeat, MAX_REPEAT)
        cell_count += copies * max(len(cells), 1)
        if cell_count > MAX_CELLS:
            raise ConversionError(path, f"ODS sheet '{sheet.get(f'{{{TABLE}}}name') or '?'}' expands to more than "
                                        f"{MAX_CELLS:,} filled cells; refusing to read it")
        for _ in range(copies):
            number += 1
            rows.append((number, list(cells)))
            merges.extend((number, column, down, across) for column, down, across in spans)
        number += repeat - copies
    index = {n: i for i, (n, _) in enumerate(rows)}
    ranges = [(index[r], c, index[r] + down - 1, c + across - 1) for r, c, down, across in merges if r in index]
    grid_cells = [cells for _, cells in rows]
    fill_merged(grid_cells, ranges)
    return rows


def _cells(row: Any) -> tuple[list[str], list[tuple[int, int, int]], bool]:
    """(cell texts, merged spans starting in this row as (column, rows, columns), any covered cells)."""
    cells: list[str] = []
    spans: list[tuple[int, int, int]] = []
    pending = 0  # empty cells not yet written: a row's tail of empties is never built
    covered = False
    for cell in row:
        if cell.tag not in (_CELL, _COVERED):
            continue
        repeat = _repeat(cell.get(f"{{{TABLE}}}number-columns-repeated"))
        value = _value(cell) if cell.tag == _CELL else ""
        covered = covered or cell.tag == _COVERED
        if not value:
            pending += repeat
            continue
        cells.extend([""] * pending)
        pending = 0
        down = _repeat(cell.get(f"{{{TABLE}}}number-rows-spanned"))
        across = _repeat(cell.get(f"{{{TABLE}}}number-columns-spanned"))
        if down > 1 or across > 1:
            spans.append((len(cells), down, across))
        cells.extend([value] * min(repeat, MAX_REPEAT))
        if len(cells) >= MAX_COLUMNS:
            del cells[MAX_COLUMNS:]
            break
    return cells, spans, covered


def _value(cell: Any) -> str:
    kind = cell.get(f"{{{OFFICE}}}value-type")
    try:
        if kind in ("float", "currency"):
            return cell_text(float(cell.get(f"{{{OFFICE}}}value")))
        if kind == "percentage":
            return cell_text(float(cell.get(f"{{{OFFICE}}}value")), "0%")
        if kind == "boolean":
            return cell_text(cell.get(f"{{{OFFICE}}}boolean-value") == "true")
        if kind == "date":
            return cell_text(dt.datetime.fromisoformat(str(cell.get(f"{{{OFFICE}}}date-value"))))
    except (TypeError, ValueError):
        pass  # a value attribute that does not parse: show what the sheet shows
    return cell_text(cell_paragraphs(cell))


def _repeat(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1

