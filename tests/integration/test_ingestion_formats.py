"""EPUB, ODT, ODS, ODP, RTF, EML and MBOX: real files in, blocks with places a citation can name.

The files are written in each test by the formats' own tools (odfpy, the
stdlib mail writers, the EPUB ZIP layout; testkit/formats.py). Each format is
converted, then all of them are built into one real index, searched and
answered over, and each answer's citation must name the chapter, page,
slide, sheet rows or message the fact is in. A damaged or renamed file of
each type must fail alone with a reason that says what is wrong.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from rag_system.config import Settings
from rag_system.ingestion import ConversionError, convert
from testkit import formats as fx

SETTINGS = Settings()
ATTACHMENT = ("agenda.txt", fx.MAIL_ATTACHMENT.encode(), "text/plain")


def _at(doc, needle: str):  # type: ignore[no-untyped-def]
    found = [b for b in doc.blocks if needle in b.text]
    assert found, f"{needle!r} not in {[b.text for b in doc.blocks]}"
    return found[0]


def test_epub_chapters_are_pages_with_their_titles(tmp_path: Path) -> None:
    doc = convert(fx.make_epub(tmp_path / "book.epub"), SETTINGS)
    assert doc.file_type == "epub" and doc.page_count == 3 and doc.warnings == ()
    for number, (title, text) in enumerate(fx.EPUB_CHAPTERS, start=1):
        block = _at(doc, text)
        assert block.page == number
        assert block.heading_path == ((title or fx.EPUB_UNTITLED_TOC),)  # the nav names the untitled chapter
    assert not any("Skerry Point" == b.text for b in doc.blocks if b.block_type == "heading")


def test_odt_headings_lists_tables_and_soft_page_breaks(tmp_path: Path) -> None:
    doc = convert(fx.make_odt(tmp_path / "manual.odt"), SETTINGS)
    assert doc.file_type == "odt" and doc.page_count == 2
    assert _at(doc, "SX-200").text == "This manual covers the  SX-200 spectrometer."  # text:s c=2 kept
    assert _at(doc, "USB cable").block_type == "list" and _at(doc, "USB cable").page == 1
    assert _at(doc, fx.ODT_PAGE_TWO).page == 2
    assert _at(doc, fx.ODT_PAGE_TWO).heading_path == (fx.ODT_HEADING,)
    table = _at(doc, "Warm-up")
    assert table.block_type == "table" and table.text.startswith("| Setting | Value |")


def test_odp_slides_are_pages_titles_headings_notes_kept(tmp_path: Path) -> None:
    doc = convert(fx.make_odp(tmp_path / "deck.odp"), SETTINGS)
    assert doc.file_type == "odp" and doc.page_count == 2
    for number, (title, body) in enumerate(fx.ODP_SLIDES, start=1):
        assert _at(doc, body).page == number and _at(doc, body).heading_path == (title,)
    assert _at(doc, fx.ODP_NOTE).page == 2


def test_ods_rows_keep_their_header_and_row_numbers(tmp_path: Path) -> None:
    doc = convert(fx.make_ods(tmp_path / "sales.ods"), SETTINGS)
    assert doc.file_type == "ods" and doc.page_count == 2  # two sheets; the million empty rows cost nothing
    assert _at(doc, "Sales by region").block_type == "paragraph"  # the merged title row is not a header
    (table,) = [b for b in doc.blocks if b.table is not None]
    assert table.page == 2 and table.table.sheet == "Sales"
    assert table.table.header == fx.ODS_HEADER and table.table.header_row == 2
    assert table.table.row_numbers == (3, 4, 5, 6)
    assert table.table.rows[0] == ("North", "Q1", "1200") and table.table.rows[1][2] == "950.5"


def test_rtf_pages_split_at_page_breaks_with_accents_decoded(tmp_path: Path) -> None:
    doc = convert(fx.make_rtf(tmp_path / "ferry.rtf"), SETTINGS)
    assert doc.file_type == "rtf" and doc.page_count == 2
    assert _at(doc, "Vinterøy").text == fx.RTF_PAGE_ONE and _at(doc, "Vinterøy").page == 1
    assert _at(doc, "café").text == fx.RTF_PAGE_TWO and _at(doc, "café").page == 2
    assert _at(doc, "café").heading_path == ("2. Tickets",)
    table = _at(doc, "Adult")
    assert table.block_type == "table" and table.page == 2
    assert table.text == "| Ticket | Price |\n|---|---|\n| Adult | 9,50 € |\n| Child | 4,75 € |"
    assert _at(doc, "Have a good trip.").block_type == "paragraph"


def test_eml_headers_body_and_attachment(tmp_path: Path) -> None:
    doc = convert(fx.make_eml(tmp_path / "budget.eml", ATTACHMENT), SETTINGS)
    sender, subject, text = fx.MAIL_MESSAGES[0]
    assert doc.file_type == "eml" and doc.page_count == 1
    context = _at(doc, "From: ")
    assert context.text.splitlines() == [f"From: {sender}", "To: Team <team@example.org>",
                                         "Date: Tue, 01 Dec 2026 09:30:00 +0100", f"Subject: {subject}"]
    assert _at(doc, text).heading_path == (subject,)
    assert _at(doc, fx.MAIL_ATTACHMENT).heading_path == (subject, "Attachment: agenda.txt")


def test_mbox_each_message_is_a_page_and_a_section(tmp_path: Path) -> None:
    doc = convert(fx.make_mbox(tmp_path / "team.mbox", ATTACHMENT), SETTINGS)
    assert doc.file_type == "mbox" and doc.page_count == 2
    for number, (_, subject, text) in enumerate(fx.MAIL_MESSAGES, start=1):
        assert _at(doc, text).page == number
        assert _at(doc, text).heading_path == (f"Message {number}: {subject}",)
    attached = _at(doc, fx.MAIL_ATTACHMENT)
    assert attached.page == 2 and attached.heading_path[-1] == "Attachment: agenda.txt"


def test_mail_attachment_goes_through_the_same_dispatch(tmp_path: Path) -> None:
    """An ODS attached to a mail is read as a sheet (rows and header), a broken one costs only a warning."""
    sheet = fx.make_ods(tmp_path / "sales.ods").read_bytes()
    ods = ("sales.ods", sheet, "application/vnd.oasis.opendocument.spreadsheet")
    doc = convert(fx.make_eml(tmp_path / "with-sheet.eml", ods), SETTINGS)
    (table,) = [b for b in doc.blocks if b.table is not None]
    assert table.table.header == fx.ODS_HEADER and table.heading_path[:2] == (fx.MAIL_MESSAGES[0][1],
                                                                              "Attachment: sales.ods")
    broken = ("report.odt", b"PK\x03\x04 not really a zip", "application/vnd.oasis.opendocument.text")
    doc = convert(fx.make_eml(tmp_path / "with-broken.eml", broken), SETTINGS)
    assert _at(doc, fx.MAIL_MESSAGES[0][2])  # the message itself is indexed
    assert any(w.startswith("message, attachment report.odt: not a valid ODT") for w in doc.warnings), doc.warnings


def _truncate(path: Path, keep: float = 0.6) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def _damaged(kind: str, tmp_path: Path) -> tuple[Path, str]:
    """A damaged or renamed file of each type, and the start of the reason it must fail with."""
    if kind == "epub":
        path = fx.make_epub(tmp_path / "book.epub")
        with zipfile.ZipFile(path) as archive:
            members = {n: archive.read(n) for n in archive.namelist() if n != "META-INF/container.xml"}
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
        return path, "damaged EPUB (META-INF/container.xml is missing)"
    if kind == "odt":
        return _truncate(fx.make_odt(tmp_path / "manual.odt")), "not a valid ODT (damaged ZIP archive"
    if kind == "ods":  # a spreadsheet saved under a text document's name
        return fx.make_ods(tmp_path / "sheet.odt").rename(tmp_path / "sheet.odp"), (
            "not a valid ODP: the content is an OpenDocument spreadsheet; rename it to .ods")
    if kind == "odp":
        path = tmp_path / "deck.odp"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("mimetype", "application/vnd.oasis.opendocument.presentation")
            archive.writestr("content.xml", "<office:document-content xmlns:office='urn:x'><unclosed>")
        return path, "damaged ODP (content.xml is not well-formed XML"
    if kind == "rtf":
        return _truncate(fx.make_rtf(tmp_path / "ferry.rtf")), "damaged RTF: the file is cut off"
    if kind == "eml":
        path = tmp_path / "scan.eml"
        path.write_bytes(b"%PDF-1.7\n%binary\n")
        return path, "not a valid EML (no mail header at the start; file starts with b'%PDF-1.7"
    path = tmp_path / "notes.mbox"
    path.write_text("Dear team,\n\nthis is a letter, not a mailbox.\n")
    return path, "not a valid MBOX (it must start with a 'From ' line"


@pytest.mark.parametrize("kind", ["epub", "odt", "ods", "odp", "rtf", "eml", "mbox"])
def test_damaged_file_fails_alone_with_a_clear_reason(kind: str, tmp_path: Path) -> None:
    path, reason = _damaged(kind, tmp_path)
    with pytest.raises(ConversionError) as info:
        convert(path, SETTINGS)
    assert info.value.reason.startswith(reason), info.value.reason


@pytest.fixture(scope="module")
def formats_index(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    """One real index over a file of every new format, plus one damaged file."""
    from rag_system.config import load_settings
    from rag_system.indexing.builder import build_index
    from rag_system.retrieval.engine import RetrievalEngine

    root = tmp_path_factory.mktemp("formats")
    folder = root / "docs"
    folder.mkdir()
    fx.make_epub(folder / "skerry.epub")
    fx.make_odt(folder / "manual.odt")
    fx.make_odp(folder / "review.odp")
    fx.make_ods(folder / "sales.ods")
    fx.make_rtf(folder / "ferry.rtf")
    fx.make_mbox(folder / "team.mbox", ATTACHMENT)
    _truncate(fx.make_rtf(folder / "cut.rtf"))
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data"), "OLLAMA_HOST": "http://127.0.0.1:9"},
                             dotenv_path=None)
    summary = build_index([folder], "formats", settings, embedder=embedder)
    return settings, RetrievalEngine(settings, embedder), summary


def test_index_build_reports_the_damaged_file_and_indexes_the_rest(formats_index) -> None:  # type: ignore[no-untyped-def]
    _, _, summary = formats_index
    assert summary.added == 6
    assert [(Path(f["path"]).name, f["reason"].split(":")[0]) for f in summary.failed] == [("cut.rtf", "damaged RTF")]


@pytest.mark.parametrize(("query", "name", "page", "section"), [
    ("replacement bell arrived from Bristol", "skerry.epub", 3, fx.EPUB_UNTITLED_TOC),
    ("storm flooded the harbour copper bell", "skerry.epub", 2, "The Storm"),
    ("spectrometer warm up forty minutes calibration", "manual.odt", 2, fx.ODT_HEADING),
    ("hire welders Tromsø yard", "review.odp", 2, "Hiring Plan"),
    ("tickets ferry sold café", "ferry.rtf", 2, "2. Tickets"),
    ("book the venue before the ninth of May", "team.mbox", 2, f"Message 2: {fx.MAIL_MESSAGES[1][1]}"),
    ("keynote on tidal energy agenda", "team.mbox", 2,
     f"Message 2: {fx.MAIL_MESSAGES[1][1]} > Attachment: agenda.txt"),
])
def test_search_finds_the_fact_at_its_place(formats_index, query: str, name: str, page: int,  # type: ignore[no-untyped-def]
                                            section: str) -> None:
    _, engine, _ = formats_index
    top = engine.retrieve("formats", query, engine.options(k=3)).candidates[0]
    location = top.to_json()["location"]
    assert (top.document_name, top.page_start, top.heading_path) == (name, page, section), location
    assert location["section"] == section and location["page"] == page


def test_search_finds_a_sheet_row_with_its_header(formats_index) -> None:  # type: ignore[no-untyped-def]
    _, engine, _ = formats_index
    hits = [c for c in engine.retrieve("formats", "West Q3 revenue", engine.options(k=5)).candidates
            if c.document_name == "sales.ods"]
    assert hits, "the ODS table is not among the top 5"
    assert "| Region | Quarter | Revenue |" in hits[0].text and "| West | Q3 | 777 |" in hits[0].text
    meta = json.loads(hits[0].metadata)
    assert meta["sheet"] == "Sales" and meta["rows"][0] <= 6 <= meta["rows"][1]
    assert hits[0].place == f"Sheet Sales, rows {meta['rows'][0]}\u2013{meta['rows'][1]}"


def test_answer_cites_the_message(formats_index) -> None:  # type: ignore[no-untyped-def]
    from rag_system.agent.pipeline import QueryPipeline
    from rag_system.generation.registry import BackendRegistry

    settings, engine, _ = formats_index
    pipe = QueryPipeline(settings, engine, BackendRegistry(settings))
    response = pipe.run(pipe.request("How much does the venue in Lisbon cost?", ["formats"],
                                     backend="extractive"), lambda event, data: None)
    payload = response.to_json()
    assert payload["validation"]["valid"] and payload["citations"], payload
    sources = {s["n"]: s for s in payload["source_documents"]}
    cited = [sources[c["n"]] for c in payload["citations"]]
    assert any(s["document_name"] == "team.mbox" and s["page_start"] == 1 and "4,300 euros" in s["text"]
               for s in cited), cited


def test_ods_repeat_bomb_is_refused(tmp_path: Path) -> None:
    """Repeats multiply: a few KB of XML may ask for billions of filled cells; reading stops at a limit."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow

    doc = OpenDocumentSpreadsheet()
    sheet = Table(name="Bomb")
    for _ in range(8):
        row = TableRow(numberrowsrepeated=1_000_000)
        row.addElement(TableCell(numbercolumnsrepeated=16000, valuetype="float", value=1))
        sheet.addElement(row)
    doc.spreadsheet.addElement(sheet)
    path = tmp_path / "bomb.ods"
    doc.save(str(path))
    assert path.stat().st_size < 20_000
    with pytest.raises(ConversionError) as info:
        convert(path, SETTINGS)
    assert info.value.reason == "ODS sheet 'Bomb' expands to more than 5,000,000 filled cells; refusing to read it"


@pytest.mark.parametrize("name", ["stations.tsv", "stations.tab"])
def test_tsv_rows_keep_their_header(tmp_path: Path, name: str) -> None:
    """Tabs split the cells even where a cell holds commas or semicolons (a CSV sniffer would guess wrong)."""
    path = tmp_path / name
    path.write_text("station\tcity\tdepth, m\nNorth Quay\tBergen; Norway\t12,5\nSouth Pier\tÅlesund\t8\n",
                    encoding="utf-8")
    doc = convert(path, SETTINGS)
    (table,) = [b for b in doc.blocks if b.table is not None]
    assert doc.file_type == "tsv" and table.table.header == ("station", "city", "depth, m")
    assert table.table.rows == (("North Quay", "Bergen; Norway", "12,5"), ("South Pier", "Ålesund", "8"))
    assert table.table.row_numbers == (2, 3)


def test_rtf_saved_under_doc_is_indexed_as_rtf(tmp_path: Path) -> None:
    path = tmp_path / "ferry.doc"
    path.write_bytes(fx.make_rtf(tmp_path / "ferry.rtf").read_bytes())
    doc = convert(path, SETTINGS)
    assert doc.file_type == "rtf" and doc.page_count == 2 and _at(doc, "Vinterøy").text == fx.RTF_PAGE_ONE
