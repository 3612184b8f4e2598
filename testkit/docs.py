"""Builders for small test documents, generated at test time.

Binaries are never committed: every test that needs a PDF, DOCX, PPTX or XLSX
builds it in a temporary directory with the same libraries a user's office
suite would produce files compatible with. The indexing and retrieval tests
reuse these builders, so each one documents the distinctive words it plants;
assert on those, not on layout details.

Each builder takes the target path, writes the file and returns the path.
Heavy libraries are imported inside the builders so importing this module is
cheap.
"""

from __future__ import annotations

from pathlib import Path

#: Words planted in `make_pdf`, one per page, for page-number assertions.
PDF_PAGE_WORDS = ("aardvark", "bluejay", "cormorant")

#: Headings planted in `make_pdf` (title, then one section per page).
PDF_TITLE = "Atlas Field Guide"
PDF_SECTIONS = ("Chapter One Mammals", "Chapter Two Songbirds", "Chapter Three Seabirds")

#: Running footer printed at the bottom of every `make_pdf` page ("{n}" = page number).
PDF_FOOTER = "Atlas Field Guide - confidential draft - page {n}"

#: The phrase `make_scanned_pdf` renders into an image by default.
SCANNED_TEXT = "Quarterly zephyrine inventory report"

_BODY = (
    "This paragraph describes the {word} in enough detail to look like body text. "
    "It has several sentences so the body font size dominates the page. "
    "Readers should find the {word} on page {page} of this guide."
)


def make_pdf(path: Path, pages: int = 3) -> Path:
    """A born-digital PDF: a 20pt title, a 15pt section heading per page, 10pt body.

    Page ``n`` (1-based) mentions ``PDF_PAGE_WORDS[n-1]`` (cycling) under the
    heading ``PDF_SECTIONS[n-1]`` (cycling), and ends with the running footer
    ``PDF_FOOTER`` (which a converter should drop as boilerplate).
    """
    import pymupdf

    doc = pymupdf.open()
    for index in range(pages):
        page = doc.new_page()
        y = 72.0
        if index == 0:
            page.insert_text((72, y), PDF_TITLE, fontsize=20, fontname="hebo")
            y += 40
        page.insert_text((72, y), PDF_SECTIONS[index % len(PDF_SECTIONS)], fontsize=15, fontname="hebo")
        y += 30
        word = PDF_PAGE_WORDS[index % len(PDF_PAGE_WORDS)]
        for _ in range(2):
            rect = pymupdf.Rect(72, y, 520, y + 80)
            page.insert_textbox(rect, _BODY.format(word=word, page=index + 1), fontsize=10, fontname="helv")
            y += 90
        page.insert_text((72, page.rect.height - 30), PDF_FOOTER.format(n=index + 1), fontsize=8)
    doc.save(path)
    doc.close()
    return path


def make_scanned_pdf(path: Path, text: str = SCANNED_TEXT, extra_text_page: bool = False) -> Path:
    """A PDF whose page 1 is only an image of ``text`` (no text layer), like a scan.

    With ``extra_text_page`` a second, born-digital page follows, so tests can
    check that OCR runs per page, not per document.
    """
    import pymupdf

    # Render the text on a scratch page, rasterise it, and place only the image.
    scratch = pymupdf.open()
    src = scratch.new_page(width=595, height=842)
    src.insert_text((72, 120), text, fontsize=18)
    src.insert_text((72, 160), "Scanned page with no text layer", fontsize=14)
    png = src.get_pixmap(dpi=150).tobytes("png")
    scratch.close()

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_image(page.rect, stream=png)
    if extra_text_page:
        second = doc.new_page(width=595, height=842)
        second.insert_textbox(
            pymupdf.Rect(72, 72, 520, 300),
            "This second page has a real text layer about the pelican migration season. " * 3,
            fontsize=11,
        )
    doc.save(path)
    doc.close()
    return path


#: Cells of the ruled table drawn by `make_pdf_with_table` (first row is the header).
PDF_TABLE = (("Part", "Interval"), ("gasket", "14 months"), ("filter", "60 days"))


def make_pdf_with_table(path: Path) -> Path:
    """One page: a heading, a paragraph and a ruled 3x2 table (``PDF_TABLE``)."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Maintenance Intervals", fontsize=16, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(72, 90, 520, 140),
                        "Replace the parts below on schedule to keep the warranty valid.", fontsize=10)
    top = 160.0
    for row, cells in enumerate(PDF_TABLE):
        for col, text in enumerate(cells):
            rect = pymupdf.Rect(72 + col * 150, top + row * 24, 222 + col * 150, top + (row + 1) * 24)
            page.draw_rect(rect, color=(0, 0, 0), width=0.8)
            page.insert_text((rect.x0 + 4, rect.y1 - 8), text, fontsize=10)
    doc.save(path)
    doc.close()
    return path


def make_scanned_copy(source: Path, path: Path, dpi: int = 150, stamp: str | None = None) -> Path:
    """Rasterise every page of ``source`` into an image-only PDF, like an office scanner.

    With ``stamp``, that text is added as a real text line at the bottom of
    every page, the way document portals stamp "Downloaded by ..." on scans.
    """
    import pymupdf

    src = pymupdf.open(source)
    out = pymupdf.open()
    for page in src:  # type: ignore[attr-defined]  # Document iterates through __getitem__, not in its types
        png = page.get_pixmap(dpi=dpi).tobytes("png")
        copy = out.new_page(width=page.rect.width, height=page.rect.height)
        copy.insert_image(copy.rect, stream=png)
        if stamp:
            copy.insert_text((36, copy.rect.height - 12), stamp, fontsize=7)
    src.close()
    out.save(path)
    out.close()
    return path


def make_encrypted_pdf(path: Path, password: str = "secret") -> Path:
    """A PDF that needs a user password to open (AES-256)."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Confidential numbers inside", fontsize=12)
    doc.save(
        path,
        encryption=pymupdf.PDF_ENCRYPT_AES_256,  # type: ignore[attr-defined]  # set at import, not declared
        owner_pw=password + "-owner",
        user_pw=password,
        permissions=pymupdf.PDF_PERM_PRINT,  # type: ignore[attr-defined]  # set at import, not declared
    )
    doc.close()
    return path


def make_truncated_pdf(path: Path) -> Path:
    """A real PDF cut off after its first 40% of bytes (a broken download)."""
    scratch = path.with_name(path.stem + "-full.pdf")
    make_pdf(scratch)
    data = scratch.read_bytes()
    scratch.unlink()
    path.write_bytes(data[: int(len(data) * 0.4)])
    return path


#: Words planted in `make_docx`.
DOCX_TITLE = "Northwind Travel Policy"
DOCX_HEADINGS = ("Booking Rules", "Reimbursement")
DOCX_TABLE_WORD = "Lisbon"


def make_docx(path: Path) -> Path:
    """A Word document: title, two Heading 1 sections, a bullet list and a 2x3 table."""
    import docx

    document = docx.Document()
    document.add_heading(DOCX_TITLE, level=0)
    document.add_heading(DOCX_HEADINGS[0], level=1)
    document.add_paragraph("Employees book flights through the travel desk at least 14 days ahead.")
    document.add_paragraph("Economy class for flights under six hours", style="List Bullet")
    document.add_paragraph("Hotels must be within the nightly cap", style="List Bullet")
    document.add_heading(DOCX_HEADINGS[1], level=1)
    document.add_paragraph("Claims are paid within 30 days of submission.")
    table = document.add_table(rows=3, cols=2)
    for row, (city, cap) in enumerate((("City", "Nightly cap"), (DOCX_TABLE_WORD, "140 EUR"), ("Oslo", "210 EUR"))):
        table.cell(row, 0).text = city
        table.cell(row, 1).text = cap
    document.save(str(path))
    return path


#: Titles of the slides `make_pptx` creates (slide n has title n-1).
PPTX_SLIDE_TITLES = ("Quarterly Review", "Pipeline Risks", "Next Steps")


def make_pptx(path: Path) -> Path:
    """A three-slide deck; each slide has a title and a body mentioning its number."""
    import pptx

    deck = pptx.Presentation()
    layout = deck.slide_layouts[1]  # title and content
    for number, title in enumerate(PPTX_SLIDE_TITLES, start=1):
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text = f"Slide {number} talks about the marmoset{number} project."
    deck.save(str(path))
    return path


#: Sheet names of `make_xlsx`; sheet n contains the word ``f"{name.lower()}-cell"``.
XLSX_SHEETS = ("Budget", "Staff")


def make_xlsx(path: Path) -> Path:
    """A workbook with two sheets, each a small table with a header row."""
    import openpyxl

    book = openpyxl.Workbook()
    first = book.worksheets[0]  # a new workbook's one (and active) sheet
    first.title = XLSX_SHEETS[0]
    first.append(["Item", "Amount"])
    first.append(["budget-cell", 1200])
    first.append(["Travel", 300])
    second = book.create_sheet(XLSX_SHEETS[1])
    second.append(["Name", "Role"])
    second.append(["staff-cell", "Engineer"])
    book.save(str(path))
    return path


#: Text inside the <script> of `make_html`; it must never reach the blocks.
HTML_SCRIPT_MARKER = "trackingPixelSecret"


def make_html(path: Path) -> Path:
    """An HTML page with h1/h2 headings, paragraphs, a list, a table and a script."""
    path.write_text(
        f"""<!DOCTYPE html>
<html><head><title>Garden Handbook</title>
<script>var {HTML_SCRIPT_MARKER} = "do-not-index";</script>
<style>body {{ color: red; }}</style></head>
<body>
<h1>Garden Handbook</h1>
<p>Tomatoes need six hours of sun.</p>
<h2>Watering</h2>
<p>Water the hydrangea every morning.</p>
<ul><li>Use rain water</li><li>Avoid the leaves</li></ul>
<h2>Tools</h2>
<table><tr><th>Tool</th><th>Use</th></tr><tr><td>Trowel</td><td>Planting bulbs</td></tr></table>
<script>console.log("{HTML_SCRIPT_MARKER}");</script>
</body></html>
""",
        encoding="utf-8",
    )
    return path


#: Code line inside the fenced block of `make_markdown`.
MD_CODE_LINE = "docent index --profile fast ./papers"


def make_markdown(path: Path) -> Path:
    """Markdown with nested headings, a list, a fenced code block and a table."""
    path.write_text(
        f"""# Quick Start

Docent answers questions about your documents.

## Install

Run the installer once.

- download the wheel
- run pip

```bash
{MD_CODE_LINE}
```

### Verify

Open the dashboard and look for the green badge.

| Option | Default |
|--------|---------|
| port   | 8000    |

## Troubleshooting

Delete the cache folder and retry.
""",
        encoding="utf-8",
    )
    return path


def make_text(path: Path) -> Path:
    """Plain text: two paragraphs on page 1, a form feed, one paragraph on page 2."""
    path.write_text(
        "First paragraph about the walrus.\nIt wraps onto a second line.\n\n"
        "Second paragraph about the narwhal.\n\f"
        "Third paragraph, on page two, about the beluga.\n",
        encoding="utf-8",
    )
    return path


def make_binary_as_text(path: Path) -> Path:
    """Random-looking binary bytes (with NULs) saved under a text extension."""
    path.write_bytes(bytes(range(256)) * 8)
    return path


def make_broken_docx(path: Path) -> Path:
    """A real DOCX whose main XML part is cut in half (a damaged ZIP member)."""
    import zipfile

    scratch = make_docx(path.with_name(path.stem + "-good.docx"))
    with zipfile.ZipFile(scratch) as source, zipfile.ZipFile(path, "w") as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml":
                data = data[: len(data) // 2]
            target.writestr(info, data)
    scratch.unlink()
    return path


def make_fake_docx(path: Path) -> Path:
    """A file named .docx that is plain text, not a zip archive."""
    path.write_text("This is not really a Word document.\n", encoding="utf-8")
    return path


# A tiny answering corpus: one QUIC fact with a near-miss neighbour, and two unrelated documents.
ANSWER_QUIC = ("Transport Parameter Definitions\n\n"
        "ack_delay_exponent (0x0a): The acknowledgment delay exponent is an integer value indicating an "
        "exponent used to decode the ACK Delay field in the ACK frame. If this value is absent, a default "
        "value of 3 is assumed (indicating a multiplier of 8). Values above 20 are invalid.\n\n"
        "max_ack_delay (0x0b): The maximum acknowledgment delay is an integer value indicating the maximum "
        "amount of time in milliseconds by which the endpoint will delay sending acknowledgments. If this "
        "value is absent, a default of 25 milliseconds is assumed.\n")
ANSWER_DOCS = {
    "quic-transport.txt": ANSWER_QUIC,
    "garden.md": "# Garden\n\nTomatoes need six hours of sun a day.\n\n## Water\n\nWater hydrangeas every "
                 "morning in summer, and twice a week in winter.",
    "leave-policy.txt": "Leave policy.\n\nEmployees accrue 25 days of annual leave per year.\f"
                        "Sick leave requires a doctor's note after three consecutive days.",
}
ANSWER_QUESTION = "If a QUIC endpoint never sends the ack_delay_exponent transport parameter, what value is assumed?"
