"""Mail: one message (.eml) or a mailbox (.mbox), with attachments, through the stdlib `email` package.

Each message is a document (in a mailbox, part N of the file: `pages_are_documents`), a page
and a section: its heading is the subject ("Message 3: Re: Q3 budget" in a mailbox), its first block the From/To/Cc/Date/Subject
lines, so a chunk of the body still says who wrote it and when. The body is
the plain-text part when there is one, else the HTML part through the same
HTML path as an .html file. Every attachment is written to a private
temporary folder under its own name and converted by the same dispatch as
an uploaded file, so a PDF attached to a mail is read like a PDF; its blocks
sit on the message's page under "Attachment: <name>". An attachment that
cannot be read costs a warning, never the message.
"""

from __future__ import annotations

import codecs
import logging
import mailbox
import re
import tempfile
from collections.abc import Callable, Iterator
from email import policy
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.office import html_blocks
from rag_system.ingestion.structure import BlockBuilder, placed
from rag_system.ingestion.text import split_paragraphs
from rag_system.ingestion.types import ConversionError, ConvertedDocument, display_name

logger = logging.getLogger(__name__)

#: Header fields shown at the top of every message, in this order.
CONTEXT_FIELDS = ("From", "To", "Cc", "Date", "Subject")
#: Parts that carry no text a question could be about (inline images, signatures' logos, sounds).
_SKIPPED_MAINTYPES = frozenset({"image", "audio", "video"})
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+")
_HEADER_ERRORS = (ValueError, IndexError, TypeError, AttributeError, LookupError, UnicodeError)
#: How an attachment is converted: `dispatch.convert`, passed in by the dispatch that routed the mail here.
Convert = Callable[[Path, Settings], ConvertedDocument]


def convert_mail(path: Path, settings: Settings, file_type: str, convert: Convert) -> ConvertedDocument:
    """An .eml file (one message, page 1) or an .mbox file (message N on page N); attachments go
    through `convert`."""
    messages = list(_messages(path, file_type, settings))
    if not messages:
        raise ConversionError(path, f"no messages in this {file_type.upper()} file")
    builder = BlockBuilder()
    warnings: list[str] = []
    with tempfile.TemporaryDirectory(prefix="docent-mail-") as scratch:
        for number, message in enumerate(messages, start=1):
            where = f"message {number}" if file_type == "mbox" else "message"
            _Message(path, builder, settings, Path(scratch), warnings, where,
                     convert).add(message, number, file_type == "mbox")
    if not builder.blocks:
        warnings.append("no text found")
    return ConvertedDocument(path=path, name=display_name(path), file_type=file_type,
                             page_count=max(len(messages), 1), blocks=tuple(builder.blocks),
                             warnings=tuple(warnings), pages_are_documents=file_type == "mbox")


def _messages(path: Path, file_type: str, settings: Settings) -> Iterator[EmailMessage]:
    parse = BytesParser(policy=policy.default)
    if file_type == "eml":
        with path.open("rb") as handle:
            message = parse.parse(handle)
        yield message
        return
    box = mailbox.mbox(str(path), factory=None, create=False)
    try:
        for count, key in enumerate(box.iterkeys(), start=1):
            if count > settings.max_pages:
                raise ConversionError(path, f"too many messages (over {settings.max_pages}; the limit is set by "
                                            "DOCENT_MAX_PAGES)")
            yield parse.parsebytes(box.get_bytes(key))
    finally:
        box.close()


class _Message:
    """Adds one message (headers, body, attachments) to the builder on its page."""

    def __init__(self, path: Path, builder: BlockBuilder, settings: Settings, scratch: Path,
                 warnings: list[str], where: str, convert: Convert) -> None:
        self.path = path
        self.builder = builder
        self.settings = settings
        self.scratch = scratch
        self.warnings = warnings
        self.where = where
        self.convert = convert

    def add(self, message: Message, page: int, numbered: bool, level: int = 1) -> None:
        subject = header(message, "Subject") or "(no subject)"
        if level == 1:
            self.builder.headings.reset()
            self.builder.heading(f"Message {page}: {subject}" if numbered else subject, page, level)
        lines = [f"{name}: {value}" for name in CONTEXT_FIELDS if (value := header(message, name))]
        self.builder.add("\n".join(lines), page)
        self._body(message, page)
        if any(type(d).__name__ in ("CloseBoundaryNotFoundDefect", "StartBoundaryNotFoundDefect")
               for d in _defects(message)):
            self.warnings.append(f"{self.where}: cut off (a MIME part never ends); indexed what is there")
        if message.is_multipart():
            for index, part in enumerate(_attachments(message), start=1):
                self._attachment(part, index, page, level)

    def _body(self, message: Message, page: int) -> None:
        body: Message | None = message.get_body(("plain", "html")) if isinstance(message, EmailMessage) else None
        if body is None and not message.is_multipart() and message.get_content_maintype() == "text":
            body = message
        if body is None:
            return
        text = _text(body)
        if body.get_content_subtype() == "html":
            try:
                # The BOM says UTF-8 before any <meta charset> can: the text is decoded already, and a
                # declared iso-8859-1 would otherwise turn "Grüße" into "GrÃ¼Ãe".
                blocks, _ = html_blocks(codecs.BOM_UTF8 + text.encode("utf-8"), "body.html", self.path)
            except ConversionError as exc:  # an unreadable HTML body costs that body, not the mailbox
                self.warnings.append(f"{self.where}: HTML body: {exc.reason}")
                return
            self.builder.blocks.extend(placed(blocks, page, self.builder.headings.path))
            return
        for paragraph in split_paragraphs(text.replace("\r\n", "\n")):
            self.builder.add(paragraph, page)

    def _attachment(self, part: Message, index: int, page: int, level: int) -> None:
        name = _filename(part, index)
        label = f"{self.where}, attachment {name}"
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload(0) if part.is_multipart() else None
            if isinstance(inner, Message):
                self.builder.heading(f"Attachment: {header(inner, 'Subject') or name}", page, level + 1)
                self.add(inner, page, False, level + 1)
            return
        if part.get_content_maintype() in _SKIPPED_MAINTYPES:
            logger.debug("%s: skipped (%s)", label, part.get_content_type())
            return
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes) or not data:
            if part.get_filename():  # a named file that arrived empty; nameless empty parts are MIME noise
                self.warnings.append(f"{label}: empty")
            return
        target = self.scratch / f"{page}-{index}" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        try:
            document = self.convert(target, self.settings)
        except ConversionError as exc:
            self.warnings.append(f"{label}: {exc.reason}")
            return
        self.builder.heading(f"Attachment: {name}", page, level + 1)
        self.builder.blocks.extend(placed(document.blocks, page, self.builder.headings.path))
        self.warnings.extend(f"{label}: {note}" for note in document.warnings)


def header(message: Message, name: str) -> str:
    """A header's text, RFC 2047 words decoded; a header the parser chokes on is shown as written."""
    try:
        value = message.get(name)
        text = "" if value is None else str(value)
    except _HEADER_ERRORS:
        raw = next((v for k, v in message.raw_items() if k.lower() == name.lower()), "")
        try:
            text = str(make_header(decode_header(str(raw))))
        except _HEADER_ERRORS:
            text = str(raw)
    return " ".join(text.split())


def _text(part: Message) -> str:
    try:
        content = part.get_content() if isinstance(part, EmailMessage) else None
    except _HEADER_ERRORS:  # an unknown charset: read the bytes as UTF-8, replacing what does not fit
        content = None
    if isinstance(content, str):
        return content
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes):
        return ""
    try:
        return data.decode(part.get_content_charset() or "utf-8", "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def _attachments(message: Message) -> list[Message]:
    if isinstance(message, EmailMessage):
        return list(message.iter_attachments())
    return []


def _filename(part: Message, index: int) -> str:
    try:
        name = part.get_filename() or ""
    except _HEADER_ERRORS:
        name = ""
    name = _UNSAFE_NAME.sub("_", Path(name.replace("\\", "/")).name).strip(" .")[:120]
    if name:
        return name
    extension = {"application/pdf": ".pdf", "text/plain": ".txt", "text/html": ".html",
                 "text/csv": ".csv", "message/rfc822": ".eml"}.get(part.get_content_type(), ".bin")
    return f"attachment-{index}{extension}"


def _defects(message: Message) -> list[object]:
    found = list(getattr(message, "defects", ()))
    if message.is_multipart():
        for part in message.walk():
            found.extend(getattr(part, "defects", ()))
    return found
