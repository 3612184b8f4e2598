"""Cut a sheet or CSV table into pieces that fit a token budget, each with the header.

A piece of a table without its header row is a row of bare numbers: neither
the embedder nor the model can tell which column is the Q3 total. So every
piece repeats the header, and knows the source rows it holds, so a citation
can say "Sheet Q3, rows 12–40" (`rag_system.ingestion.tables.row_span_label`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rag_system.ingestion.tables import rendered_rows, row_span_label
from rag_system.ingestion.types import TableRows

TokenCounter = Callable[[list[str]], list[int]]


def split_rows(table: TableRows, count_tokens: TokenCounter, budget: int) -> list[tuple[TableRows, str, int]]:
    """(sub-table, its text, its tokens) pieces in row order, each within `budget` where a row allows.

    Greedy on per-line counts, then checked on the rendered text (a tokenizer
    is not additive across lines); a piece still too large is halved. A single
    row larger than the budget stays a piece of its own, over budget: the
    chunker splits it by words like any oversized unit.
    """
    if not table.rows:
        text = rendered_rows(table, ())
        return [(table, text, count_tokens([text])[0])]
    lines = rendered_rows(table, table.rows).split("\n")
    head_text, row_lines = "\n".join(lines[:2]), lines[2:]
    counts = count_tokens([head_text, *row_lines])
    head, row_counts = counts[0], counts[1:]
    groups: list[list[int]] = []
    size = head
    for i, tokens in enumerate(row_counts):
        if groups and groups[-1] and size + tokens + 1 <= budget:
            groups[-1].append(i)
            size += tokens + 1
        else:
            groups.append([i])
            size = head + tokens + 1
    pieces: list[tuple[TableRows, str, int]] = []
    for group in groups:
        pieces.extend(_checked(table, group, count_tokens, budget))
    return pieces


def _checked(table: TableRows, indices: list[int], count_tokens: TokenCounter,
             budget: int) -> list[tuple[TableRows, str, int]]:
    sub = sub_table(table, indices)
    text = rendered_rows(sub, sub.rows)
    tokens = count_tokens([text])[0]
    if tokens <= budget or len(indices) == 1:
        return [(sub, text, tokens)]
    half = len(indices) // 2
    return _checked(table, indices[:half], count_tokens, budget) + \
        _checked(table, indices[half:], count_tokens, budget)


def sub_table(table: TableRows, indices: list[int]) -> TableRows:
    return replace(table, rows=tuple(table.rows[i] for i in indices),
                   row_numbers=tuple(table.row_numbers[i] for i in indices))


def row_metadata(table: TableRows) -> dict[str, object]:
    """What a chunk holding these rows records: the row range, the sheet and the label a citation shows."""
    if not table.row_numbers:
        first = last = table.header_row
    else:
        first, last = table.row_numbers[0], table.row_numbers[-1]
    meta: dict[str, object] = {"rows": [first, last], "label": row_span_label(table, first, last)}
    if table.sheet:
        meta["sheet"] = table.sheet
    return meta
