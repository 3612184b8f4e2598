"""Table questions over a real public-domain spreadsheet (statsmodels' US macro data, eval/tables/).

The gold rows were written by hand (eval/tables/README.md). For each question
the chunk that answers it, which is the one the answer would cite, must hold
the answering row *and* the header that says what its numbers are, and its
citation label must name the sheet and a row range that contains the row.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from rag_system.indexing.builder import build_index
from rag_system.ingestion import convert
from rag_system.ingestion.tables import cell_text
from rag_system.retrieval.engine import RetrievalEngine
from testkit import REPO_ROOT

GOLD = REPO_ROOT / "eval" / "tables" / "macrodata.jsonl"
HEADER = "| year | quarter | realgdp | realcons | realinv | realgovt | realdpi | cpi | m1 | tbilrate | unemp | pop |"


def _macrodata() -> Path:
    spec = importlib.util.find_spec("statsmodels")
    assert spec is not None and spec.submodule_search_locations, "statsmodels (requirements.txt) ships the data"
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / "macrodata"


def _gold() -> list[dict[str, object]]:
    return [json.loads(line) for line in GOLD.read_text().splitlines() if line.strip()]


def _as_xlsx(source: Path, target: Path) -> Path:
    """The same data as a workbook a person would make: a merged title row, a gap, the table, a blank row."""
    import openpyxl

    rows = list(csv.reader(source.open(newline="")))
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Macro"
    sheet.append(["US macroeconomic data 1959-2009"])
    sheet.merge_cells(start_row=1, start_column=1, end_row=1, end_column=len(rows[0]))
    sheet.append([])
    for i, row in enumerate(rows):
        sheet.append(row if i == 0 else [float(v) if "." in v else int(v) for v in row])
        if i == 100:
            sheet.append([])  # a stray empty row inside the data
    book.save(str(target))
    return target


def test_real_csv_and_xls_convert_to_row_tables() -> None:
    root = _macrodata()
    doc = convert(root / "macrodata.csv", _settings())
    (table,) = [b for b in doc.blocks if b.block_type == "table"]
    assert table.table is not None and len(table.table.rows) == 203
    assert table.table.row_numbers[0] == 2 and table.table.row_numbers[-1] == 204
    assert table.text.startswith(HEADER)
    legacy = convert(root / "src" / "macrodata.xls" / "macrodata.xls", _settings())
    assert legacy.file_type == "xls" and legacy.page_count == 3
    quarterly = [b for b in legacy.blocks if b.block_type == "table" and b.heading_path == ("Quarterly",)]
    assert quarterly and quarterly[0].text.startswith("| DATE | DPIC96 | FGCEC96 | GDPC96 |")
    assert "| 1947-01-01 | 1218.6 | 223.682 | 1772.204 |" in quarterly[0].text  # dates read as dates


def _settings():  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    return load_settings(environ={}, dotenv_path=None)


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_table_questions_cite_the_row_with_its_header(kind: str, tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    source = _macrodata() / "macrodata.csv"
    path = source if kind == "csv" else _as_xlsx(source, tmp_path / "macro.xlsx")
    summary = build_index([path], "macro", settings, embedder=embedder)
    assert not summary.failed and summary.added == 1
    engine = RetrievalEngine(settings, embedder)
    options = engine.options(k=5)
    offset = 2 if kind == "xlsx" else 0  # the title row and the gap above the header
    for row in _gold():
        result = engine.retrieve("macro", str(row["query"]), options)
        expected = str(row["expected"][0])  # type: ignore[index]
        if kind == "xlsx":  # numbers in a workbook are numbers: 4953.050 reads 4953.05
            cells = expected.strip("| ").split(" | ")
            expected = "| " + " | ".join(cell_text(float(c)) for c in cells) + " |"
        hits = [c for c in result.candidates[:3] if expected in c.text]
        assert hits, f"{row['id']}: no top-3 chunk holds {expected!r}"
        chunk = hits[0]
        assert HEADER in chunk.text, f"{row['id']}: the row's chunk lacks the header"
        meta = json.loads(chunk.metadata)
        first, last = meta["rows"]
        number = int(row["row"]) + offset + (1 if kind == "xlsx" and int(row["row"]) > 101 else 0)
        assert first <= number <= last, (row["id"], meta)
        assert chunk.place == (f"Sheet Macro, rows {first}\u2013{last}" if kind == "xlsx"
                               else f"rows {first}\u2013{last}")
