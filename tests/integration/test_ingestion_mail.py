"""Mail as people have it: HTML-only bodies, forwarded messages, PDF and image attachments, odd headers."""

from __future__ import annotations

from email.message import EmailMessage
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion import convert
from testkit import formats as fx
from testkit.docs import PDF_PAGE_WORDS, make_pdf

SETTINGS = Settings()


def _write(path: Path, message: EmailMessage) -> Path:
    path.write_bytes(bytes(message))
    return path


def _base(subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "=?utf-8?q?Jos=C3=A9_Mu=C3=B1oz?= <jose@example.org>"  # RFC 2047, as mail clients write it
    message["To"] = "team@example.org"
    message["Subject"] = subject
    message["Date"] = "Wed, 02 Dec 2026 08:00:00 +0000"
    return message


def test_html_only_body_keeps_its_structure(tmp_path: Path) -> None:
    message = _base("Harbour report")
    message.set_content("<html><body><h2>Tides</h2><p>High tide at the quay is at 06:40 on Friday.</p>"
                        "<ul><li>bring boots</li><li>bring a torch</li></ul></body></html>", subtype="html")
    doc = convert(_write(tmp_path / "html.eml", message), SETTINGS)
    context = next(b for b in doc.blocks if b.text.startswith("From: "))
    assert context.text.splitlines()[0] == "From: José Muñoz <jose@example.org>"
    tide = next(b for b in doc.blocks if "06:40" in b.text)
    assert tide.heading_path == ("Harbour report", "Tides") and tide.page == 1
    assert any(b.block_type == "list" and "bring a torch" in b.text for b in doc.blocks)


def test_html_body_declaring_another_charset_keeps_its_letters(tmp_path: Path) -> None:
    """Mail clients declare the charset twice (MIME and <meta>); the body is decoded once, by the MIME one."""
    message = _base("Grüße")
    html = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"></head>'
            "<body><p>Grüße aus Köln – das Café öffnet um acht.</p></body></html>")
    message.set_content(html.encode("iso-8859-1", "replace").replace(b"?", "–".encode("cp1252")), maintype="text",
                        subtype="html", cte="quoted-printable")
    message.replace_header("Content-Type", 'text/html; charset="windows-1252"')
    doc = convert(_write(tmp_path / "latin.eml", message), SETTINGS)
    assert "Grüße aus Köln – das Café öffnet um acht." in [b.text for b in doc.blocks]


def test_pdf_attachment_is_read_as_a_pdf_and_images_are_skipped(tmp_path: Path) -> None:
    message = _base("Field guide attached")
    message.set_content("The field guide is attached.\n")
    message.add_attachment(make_pdf(tmp_path / "guide.pdf").read_bytes(), maintype="application",
                           subtype="pdf", filename="guide.pdf")
    message.add_attachment(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, maintype="image", subtype="png",
                           filename="logo.png")
    doc = convert(_write(tmp_path / "pdf.eml", message), SETTINGS)
    attached = [b for b in doc.blocks if b.heading_path[:2] == ("Field guide attached", "Attachment: guide.pdf")]
    assert any(PDF_PAGE_WORDS[1] in b.text for b in attached)
    assert all(b.page == 1 for b in attached)  # the message's page, whatever page of the PDF it was on
    assert not any("logo.png" in b.text for b in doc.blocks) and doc.warnings == ()


def test_forwarded_message_is_read_in_place(tmp_path: Path) -> None:
    inner = fx.mail_message(*fx.MAIL_MESSAGES[0])
    outer = _base("Fwd: Budget for the Lisbon workshop")
    outer.set_content("See the message below.\n")
    outer.add_attachment(inner)  # message/rfc822
    doc = convert(_write(tmp_path / "fwd.eml", outer), SETTINGS)
    fact = next(b for b in doc.blocks if fx.MAIL_MESSAGES[0][2] in b.text)
    assert fact.heading_path == ("Fwd: Budget for the Lisbon workshop", f"Attachment: {fx.MAIL_MESSAGES[0][1]}")
    assert any(b.text.startswith(f"From: {fx.MAIL_MESSAGES[0][0]}") for b in doc.blocks)


def test_cut_off_multipart_is_indexed_with_a_warning(tmp_path: Path) -> None:
    path = fx.make_eml(tmp_path / "whole.eml", ("agenda.txt", fx.MAIL_ATTACHMENT.encode(), "text/plain"))
    data = path.read_bytes()
    cut = tmp_path / "cut.eml"
    cut.write_bytes(data[: data.rindex(b"\n--")])  # the closing boundary is lost
    doc = convert(cut, SETTINGS)
    assert any(fx.MAIL_MESSAGES[0][2] in b.text for b in doc.blocks)
    assert any(fx.MAIL_ATTACHMENT in b.text for b in doc.blocks)
    assert doc.warnings == ("message: cut off (a MIME part never ends); indexed what is there",)
