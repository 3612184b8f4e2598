"""Table grids and table chunks: header repeated, row ranges named, merged cells and empty rows clean."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_system.chunking.chunker import ChunkerOptions, chunk_document
from rag_system.chunking.table_rows import split_rows
from rag_system.ingestion.structure import BlockBuilder
from rag_system.ingestion.tables import add_grid, cell_text, fill_merged, row_span_label, split_regions
from rag_system.ingestion.types import ConvertedDocument, TableRows


def words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def _blocks(grid, sheet: str = "Q3", heading: bool = False):  # type: ignore[no-untyped-def]
    builder = BlockBuilder()
    if heading:
        builder.heading(sheet, 1, 1)
    add_grid(builder, grid, 1, sheet)
    return builder.blocks


def test_cell_text_reads_like_the_sheet() -> None:
    assert cell_text(1200.0) == "1200"
    assert cell_text(0.25, "0%") == "25%"
    assert cell_text(2.5) == "2.5"
    assert cell_text(dt.datetime(2024, 7, 1)) == "2024-07-01"
    assert cell_text(True) == "TRUE"
    assert cell_text(None) == ""
    assert cell_text("  two\nlines ") == "two lines"


def test_merged_cells_fill_their_range() -> None:
    cells = [["North", "Jul", "1"], ["", "Aug", "2"], ["South", "Jul", "3"]]
    fill_merged(cells, [(0, 0, 1, 0)])
    assert [row[0] for row in cells] == ["North", "North", "South"]


def test_empty_rows_and_columns_vanish_and_a_wide_gap_starts_a_new_table() -> None:
    grid = [(1, ["Region", "", "Total"]), (2, ["North", "", "10"]), (3, ["", "", ""]), (4, ["South", "", "20"]),
            (8, ["Name", "", "Role"]), (9, ["Ada", "", "Engineer"])]
    assert [len(r) for r in split_regions(grid)] == [3, 2]
    tables = [b for b in _blocks(grid) if b.block_type == "table"]
    assert len(tables) == 2
    assert tables[0].text == "| Region | Total |\n|---|---|\n| North | 10 |\n| South | 20 |"
    assert tables[0].table is not None and tables[0].table.row_numbers == (2, 4)
    assert tables[1].table is not None and tables[1].table.header == ("Name", "Role")
    assert "||" not in tables[0].text


def test_a_title_row_above_the_header_is_a_paragraph_and_one_column_is_a_list() -> None:
    blocks = _blocks([(1, ["Quarterly sales", "", ""]), (3, ["Region", "Month", "Total"]), (4, ["North", "Jul", "5"])])
    assert [b.block_type for b in blocks] == ["paragraph", "table"]
    assert blocks[0].text == "Quarterly sales"
    assert blocks[1].table is not None and blocks[1].table.header_row == 3
    notes = _blocks([(1, ["Data list"]), (2, ["Updated 2009"])])
    assert [(b.block_type, b.text) for b in notes] == [("paragraph", "Data list\nUpdated 2009")]


def test_row_labels() -> None:
    table = TableRows(("a",), (("1",),), (12,), sheet="Q3")
    assert row_span_label(table, 12, 40) == "Sheet Q3, rows 12\u201340"
    assert row_span_label(TableRows(("a",), (), ()), 7, 7) == "row 7"


def _table_doc(n: int) -> ConvertedDocument:
    grid = [(1, ["year", "quarter", "total"])] + [(i + 2, [str(1950 + i // 4), str(i % 4 + 1), str(i * 7)])
                                                  for i in range(n)]
    return ConvertedDocument(path=Path("/x/book.xlsx"), name="book.xlsx", file_type="xlsx", page_count=1,
                             blocks=tuple(_blocks(grid, heading=True)))


def test_long_table_chunks_repeat_the_header_and_name_their_rows() -> None:
    chunks = chunk_document(_table_doc(120), "d" * 64, words, ChunkerOptions(max_tokens=60, context="document"))
    assert len(chunks) > 3
    seen: list[int] = []
    for chunk in chunks:
        assert chunk.token_count <= 60 and chunk.block_type == "table"
        lines = chunk.text.split("\n")
        assert lines[:3] == ["book.xlsx > Q3", "| year | quarter | total |", "|---|---|---|"]
        first, last = chunk.metadata["rows"]  # type: ignore[misc]
        numbers = list(range(first, last + 1))
        assert len(lines) - 3 == len(numbers)
        assert chunk.metadata["label"] == f"Sheet Q3, rows {first}\u2013{last}"
        assert chunk.metadata["sheet"] == "Q3"
        seen.extend(numbers)
    assert seen == list(range(2, 122))  # every row once, in order


def test_table_windows_are_smaller_pieces_under_the_header() -> None:
    chunks = chunk_document(_table_doc(15), "d" * 64, words,
                            ChunkerOptions(max_tokens=200, context="document", window_tokens=40))
    assert len(chunks) == 1 and len(chunks[0].windows) > 2
    for window in chunks[0].windows:
        assert window.split("\n")[1] == "| year | quarter | total |"
        assert len(window.split()) <= 40 + 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=60), st.integers(10, 80))
def test_split_rows_keeps_every_row_once_within_budget(widths: list[int], budget: int) -> None:
    rows = tuple(tuple(["w"] * w) for w in widths)
    table = TableRows(header=("h",) * 12, rows=tuple(r + ("",) * (12 - len(r)) for r in rows),
                      row_numbers=tuple(range(2, len(rows) + 2)))
    pieces = split_rows(table, words, budget)
    assert [n for sub, _, _ in pieces for n in sub.row_numbers] == list(table.row_numbers)
    for sub, text, tokens in pieces:
        assert text.startswith("| h |")
        assert tokens == words([text])[0]
        assert tokens <= budget or len(sub.rows) == 1


def test_a_title_merged_across_the_row_is_not_the_header() -> None:
    cells = [["US macro data", "", ""], ["year", "quarter", "total"], ["1959", "1", "5"]]
    fill_merged(cells, [(0, 0, 0, 2)])
    blocks = _blocks([(n + 1, row) for n, row in enumerate(cells)])
    assert [b.block_type for b in blocks] == ["paragraph", "table"]
    assert blocks[1].table is not None and blocks[1].table.header == ("year", "quarter", "total")
