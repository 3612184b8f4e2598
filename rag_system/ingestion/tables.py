"""Cell grids (a sheet, a CSV file) -> table blocks that keep their header and row numbers.

Why not one pipe table per sheet: a question about one value ("what was the
total for Q3?") needs the row *and* the header that says what its cells mean,
and a citation should say where the row is. So every table block carries its
rows (`TableRows`): the chunker cuts long tables between rows, repeats the
header in each piece and records the row range.

What a grid of a real spreadsheet looks like, and what is done about it:
- empty rows and columns (spacing, leftovers of deleted data) are dropped;
  two or more empty rows in a row separate two tables;
- a region one column wide is a list of lines, kept as a paragraph;
- a leading row with a single value (one cell, or merged across) in a wider
  table is a title or a note, not a header: it becomes a paragraph before it;
- merged cells arrive already filled (`fill_merged`): every cell of a merged
  range shows its value, so a row cut from the table still names its group.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from rag_system.ingestion.structure import BlockBuilder, render_table
from rag_system.ingestion.types import Block, TableRows

#: This many empty rows (or more) between filled ones end a table and start another.
TABLE_GAP_ROWS = 2

Grid = list[tuple[int, list[str]]]  # (1-based row number, cell texts)


def cell_text(value: object, number_format: str = "") -> str:
    """A cell's value as a reader sees it: integers without '.0', dates as ISO dates, percents as percents."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float):
        if "%" in number_format:
            return f"{value * 100:.15g}%"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.15g}"
    return " ".join(str(value).split())


def fill_merged(cells: list[list[str]], ranges: Iterable[tuple[int, int, int, int]]) -> None:
    """Copy each merged range's top-left value into all of its cells (0-based, inclusive bounds)."""
    for top, left, bottom, right in ranges:
        if top >= len(cells) or left >= len(cells[top]):
            continue
        value = cells[top][left]
        for r in range(top, min(bottom, len(cells) - 1) + 1):
            row = cells[r]
            for c in range(left, min(right, len(row) - 1) + 1):
                row[c] = value


def split_regions(grid: Grid) -> list[Grid]:
    """Filled rows grouped into tables: a run of `TABLE_GAP_ROWS` empty rows starts a new one."""
    regions: list[Grid] = []
    current: Grid = []
    last = None
    for number, cells in grid:
        if not any(cells):
            continue
        if current and last is not None and number - last > TABLE_GAP_ROWS:
            regions.append(current)
            current = []
        current.append((number, cells))
        last = number
    if current:
        regions.append(current)
    return regions


def _trim_columns(region: Grid) -> Grid:
    width = max(len(cells) for _, cells in region)
    padded = [(n, cells + [""] * (width - len(cells))) for n, cells in region]
    keep = [c for c in range(width) if any(cells[c] for _, cells in padded)]
    return [(n, [cells[c] for c in keep]) for n, cells in padded]


def add_grid(builder: BlockBuilder, grid: Grid, page: int, sheet: str = "") -> None:
    """Append the tables (and any title rows above them) of one grid to `builder`."""
    for region in split_regions(grid):
        region = _trim_columns(region)
        width = len(region[0][1])
        if width == 1:  # one column is a list of lines (notes, a README sheet), not a table
            builder.add("\n".join(cells[0] for _, cells in region), page)
            continue
        while width > 1 and len(region) > 1 and len({c for c in region[0][1] if c}) == 1:
            # One value (in one cell, or merged across the row): a title or note above the table.
            builder.add(next(c for c in region[0][1] if c), page)
            region = region[1:]
        (header_row, header), body = region[0], region[1:]
        table = TableRows(header=tuple(header), rows=tuple(tuple(cells) for _, cells in body),
                          row_numbers=tuple(n for n, _ in body), header_row=header_row, sheet=sheet)
        text = render_table([header, *(cells for _, cells in body)])
        if text:
            builder.blocks.append(Block(text=text, page=page, block_type="table",
                                        heading_path=builder.headings.path, table=table))


def row_span_label(table: TableRows, first: int, last: int) -> str:
    """How a citation names rows of a table: "Sheet Q3, rows 12–40" (or "rows 12–40" in a CSV file)."""
    rows = f"row {first}" if first == last else f"rows {first}\u2013{last}"
    return f"Sheet {table.sheet}, {rows}" if table.sheet else rows


def rendered_rows(table: TableRows, rows: Sequence[tuple[str, ...]]) -> str:
    """The header plus these rows, in the same pipe-table form as the whole table."""
    return render_table([table.header, *rows])
