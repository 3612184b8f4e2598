"""Real EPUB, OpenDocument, RTF and mail files, written by the tests with the formats' own tools.

OpenDocument files are written by odfpy (a library that writes what
LibreOffice reads), mail by the stdlib `email`/`mailbox` writers, EPUB as the
EPUB 3 specification lays out its ZIP (mimetype first and stored, a container
pointing at the package, a nav document), RTF as Word writes its control words.
Each maker plants known sentences so a test can ask for them and check the
citation names the right chapter, page, slide, sheet or message.
"""

from __future__ import annotations

import mailbox
import zipfile
from email.message import EmailMessage
from pathlib import Path

EPUB_CHAPTERS = (
    ("The Lighthouse Keeper", "Marta lit the lamp of the Skerry Point lighthouse every evening at dusk."),
    ("The Storm", "The storm of 1893 flooded the harbour and carried away the copper bell."),
    ("", "The keeper's log records that the replacement bell arrived from Bristol in April."),
)
EPUB_UNTITLED_TOC = "Epilogue: The New Bell"

ODT_PAGE_TWO = "The calibration procedure requires the spectrometer to warm up for forty minutes."
ODT_HEADING = "Calibration"
ODP_SLIDES = (("Quarterly Review", "Revenue grew in the northern region."),
              ("Hiring Plan", "We will hire seven welders for the Tromsø yard."))
ODP_NOTE = "Mention that the Tromsø yard opens in March."
ODS_HEADER = ("Region", "Quarter", "Revenue")
ODS_ROWS = (("North", "Q1", 1200.0), ("South", "Q1", 950.5), ("North", "Q2", 1410.0), ("West", "Q3", 777.0))
RTF_PAGE_ONE = "The ferry to Vinterøy leaves from pier four at seven o'clock."
RTF_PAGE_TWO = "Tickets for the ferry are sold in the café next to the pier."
RTF_TABLE = (("Ticket", "Price"), ("Adult", "9,50 €"), ("Child", "4,75 €"))
MAIL_MESSAGES = (
    ("Ines Alvarez <ines@example.org>", "Budget for the Lisbon workshop",
     "The venue in Lisbon costs 4,300 euros for two days, catering included."),
    ("Tom Becker <tom@example.org>", "Re: Budget for the Lisbon workshop",
     "Please book the venue before the ninth of May; the early rate ends then."),
)
MAIL_ATTACHMENT = "The attached agenda starts with a keynote on tidal energy at nine."


def make_epub(path: Path) -> Path:
    """An EPUB 3 book: three chapters; the third has no heading of its own, only a nav title."""
    items, spine, nav_links = [], [], []
    chapters = {}
    for number, (title, text) in enumerate(EPUB_CHAPTERS, start=1):
        name = f"chapter{number}.xhtml"
        heading = f"<h1>{title}</h1>" if title else ""
        chapters[name] = (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head>'
            f"<body>{heading}<p>{text}</p><p>Chapter {number} ends here.</p></body></html>"
        )
        items.append(f'<item id="c{number}" href="text/{name}" media-type="application/xhtml+xml"/>')
        spine.append(f'<itemref idref="c{number}"/>')
        nav_links.append(f'<li><a href="text/{name}">{title or EPUB_UNTITLED_TOC}</a></li>')
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:1</dc:identifier>'
        '<dc:title>Skerry Point</dc:title><dc:language>en</dc:language></metadata>'
        '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        + "".join(items) + '</manifest><spine><itemref idref="nav" linear="no"/>' + "".join(spine)
        + "</spine></package>"
    )
    nav = ('<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
           'xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol>'
           + "".join(nav_links) + "</ol></nav></body></html>")
    container = ('<?xml version="1.0"?><container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 "</rootfiles></container>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", container)
        archive.writestr("OEBPS/content.opf", opf)
        archive.writestr("OEBPS/nav.xhtml", nav)
        for name, body in chapters.items():
            archive.writestr(f"OEBPS/text/{name}", body)
    return path


def make_odt(path: Path) -> Path:
    """Two pages (a soft page break between them, as LibreOffice writes it), a heading, a list, a table."""
    from odf.element import Element
    from odf.namespaces import TEXTNS
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, List, ListItem, P, S, Span

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text="Introduction"))
    intro = P(text="This manual covers the")
    intro.addElement(S(c=2))
    intro.addElement(Span(text="SX-200"))
    intro.addText(" spectrometer.")
    doc.text.addElement(intro)
    items = List()
    for word in ("power cable", "USB cable"):
        item = ListItem()
        item.addElement(P(text=word))
        items.addElement(item)
    doc.text.addElement(items)
    doc.text.addElement(Element(qname=(TEXTNS, "soft-page-break")))
    doc.text.addElement(H(outlinelevel=1, text=ODT_HEADING))
    doc.text.addElement(P(text=ODT_PAGE_TWO))
    table = Table(name="Specs")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for cells in (("Setting", "Value"), ("Warm-up", "40 min")):
        row = TableRow()
        for value in cells:
            cell = TableCell()
            cell.addElement(P(text=value))
            row.addElement(cell)
        table.addElement(row)
    doc.text.addElement(table)
    doc.save(str(path))
    return path


def make_odp(path: Path) -> Path:
    """Two slides with titles and body text; speaker notes on the second."""
    from odf.draw import Frame, Page, TextBox
    from odf.namespaces import PRESENTATIONNS
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="layout")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="master", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    for number, (title, body) in enumerate(ODP_SLIDES, start=1):
        page = Page(name=f"slide{number}", masterpagename=master)
        for kind, text in (("title", title), ("outline", body)):
            frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
            frame.setAttrNS(PRESENTATIONNS, "class", kind)
            box = TextBox()
            box.addElement(P(text=text))
            frame.addElement(box)
            page.addElement(frame)
        if number == 2:
            notes = Notes()
            frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
            frame.setAttrNS(PRESENTATIONNS, "class", "notes")
            box = TextBox()
            box.addElement(P(text=ODP_NOTE))
            frame.addElement(box)
            notes.addElement(frame)
            page.addElement(notes)
        doc.presentation.addElement(page)
    doc.save(str(path))
    return path


def make_ods(path: Path) -> Path:
    """Sheet "Sales": a merged title row, the header, typed rows, and the million-row empty tail ODS keeps."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    notes = Table(name="Notes")
    row = TableRow()
    cell = TableCell()
    cell.addElement(P(text="Figures in thousands of euros."))
    row.addElement(cell)
    notes.addElement(row)
    sheet = Table(name="Sales")
    title = TableRow()
    cell = TableCell(numbercolumnsspanned=3)
    cell.addElement(P(text="Sales by region"))
    title.addElement(cell)
    sheet.addElement(title)
    header = TableRow()
    for value in ODS_HEADER:
        cell = TableCell(valuetype="string")
        cell.addElement(P(text=value))
        header.addElement(cell)
    sheet.addElement(header)
    for region, quarter, revenue in ODS_ROWS:
        row = TableRow()
        for value in (region, quarter):
            cell = TableCell(valuetype="string")
            cell.addElement(P(text=value))
            row.addElement(cell)
        cell = TableCell(valuetype="float", value=revenue)
        cell.addElement(P(text=f"{revenue:,.2f}"))
        row.addElement(cell)
        sheet.addElement(row)
    tail = TableRow(numberrowsrepeated=1048000)
    tail.addElement(TableCell(numbercolumnsrepeated=1024))
    sheet.addElement(tail)
    doc.spreadsheet.addElement(notes)
    doc.spreadsheet.addElement(sheet)
    doc.save(str(path))
    return path


def make_rtf(path: Path) -> Path:
    """Two pages split by \\page, accented letters as \\'xx escapes and \\u words, as Word writes them."""
    def escape(text: str) -> str:
        out = []
        for char in text:
            if ord(char) < 128:
                out.append(char)
            elif ord(char) < 256:
                out.append(f"\\'{ord(char):02x}")
            else:
                out.append(f"\\u{ord(char)}?")
        return "".join(out)

    body = (r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss Arial;}}{\colortbl;\red0\green0\blue0;}"
            r"{\info{\title Ferry}}\f0\fs24 {\b 1. Timetable}\par " + escape(RTF_PAGE_ONE) + r"\par\page "
            r"{\b 2. Tickets}\par " + escape(RTF_PAGE_TWO) + r"\par "
            + "".join(r"\trowd\cellx3000\cellx6000\pard\intbl " + r"\cell ".join(map(escape, row)) + r"\cell\row "
                      for row in RTF_TABLE) + r"\pard Have a good trip.\par }")
    path.write_bytes(body.encode("ascii"))
    return path


def mail_message(sender: str, subject: str, text: str, attachment: tuple[str, bytes, str] | None = None,
                 ) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "Team <team@example.org>"
    message["Date"] = "Tue, 01 Dec 2026 09:30:00 +0100"
    message["Subject"] = subject
    message.set_content(text + "\n\nBest,\n" + sender.split()[0] + "\n")
    if attachment is not None:
        name, data, mime = attachment
        maintype, subtype = mime.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return message


def make_eml(path: Path, attachment: tuple[str, bytes, str] | None = None) -> Path:
    sender, subject, text = MAIL_MESSAGES[0]
    path.write_bytes(bytes(mail_message(sender, subject, text, attachment)))
    return path


def make_mbox(path: Path, attachment: tuple[str, bytes, str] | None = None) -> Path:
    """Both messages; the second carries `attachment` (name, bytes, MIME type) when given."""
    box = mailbox.mbox(str(path))
    try:
        for number, (sender, subject, text) in enumerate(MAIL_MESSAGES, start=1):
            box.add(mail_message(sender, subject, text, attachment if number == 2 else None))
        box.flush()
    finally:
        box.close()
    return path


def make_legacy_office(folder: Path) -> tuple[Path, Path]:
    """(manual.doc, deck.ppt): the ODT and ODP above saved as Word 97 and PowerPoint 97 by LibreOffice.

    LibreOffice is the one offline writer of these binary formats; the
    tests that need it skip (saying so) where `make test` could not install it.
    """
    import shutil
    import subprocess

    import pytest

    soffice = shutil.which("soffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) writes the .doc/.ppt test files: 'make setup-office' installs it")
    make_odt(folder / "manual.odt")
    make_odp(folder / "deck.odp")
    profile = folder / "lo-profile"
    for source, target in (("manual.odt", "doc"), ("deck.odp", "ppt")):
        subprocess.run([soffice, f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", target,
                        "--outdir", str(folder), str(folder / source)], check=True, capture_output=True,
                       timeout=180, env={"PATH": "/usr/bin:/bin", "HOME": str(folder)})
    return folder / "manual.doc", folder / "deck.ppt"
