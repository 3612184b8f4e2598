"""Legacy PowerPoint 97-2003 (.ppt): the slides' text read from the binary records with olefile.

The text of a .ppt lives in the "PowerPoint Document" stream as a tree of
records ([MS-PPT] 2.3): each record has an 8-byte header (version and
instance, type, length), containers nest records, and text sits in
TextCharsAtom (UTF-16) or TextBytesAtom (Latin-1) records preceded by a
TextHeaderAtom that says whether it is a title. PowerPoint itself keeps
placeholder text in the document's SlideListWithText (one run per slide,
started by a SlidePersistAtom); other writers (LibreOffice) keep it in the
shapes of each Slide container. Both are read, in order, and joined per
slide, so each slide is a page with its title as the heading. Masters and
handouts are template text ("Click to edit Master title style") and are
skipped, and so are speaker notes (tying a notes page to its slide needs
the persist directory; a .pptx keeps them). catppt (catdoc) reads only the first layout and found no text in
LibreOffice's files, hence this reader.
"""

from __future__ import annotations

import struct
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.structure import BlockBuilder
from rag_system.ingestion.types import ConversionError, ConvertedDocument, check_page_limit

_DOCUMENT = 0x03E8
_SLIDE = 0x03EE
_NOTES = 0x03F0
_MAIN_MASTER = 0x03F8
_SLIDE_LIST = 0x0FF0
_SLIDE_PERSIST = 0x03F3
_TEXT_HEADER = 0x0F9F
_TEXT_CHARS = 0x0FA0
_TEXT_BYTES = 0x0FA8
_SKIPPED = frozenset({_MAIN_MASTER, _NOTES, 0x0FC9, 0x1006})  # masters, notes pages, handout, environment
#: TextHeaderAtom types that are titles (title, centred title).
_TITLE_TYPES = frozenset({0, 6})
_MAX_DEPTH = 32
_TITLE_CHARS = 120

Run = tuple[bool, str]  # (is a title, text)


def convert_ppt(path: Path, settings: Settings) -> ConvertedDocument:
    """Each slide a page; its title (or first line) a heading, its other text paragraphs."""
    stream = _stream(path)
    listed, drawn = _Reader(stream, path).slides()
    count = max(len(listed), len(drawn))
    check_page_limit(path, count, "slides", settings.max_pages)
    builder = BlockBuilder()
    for index in range(count):
        runs = (listed[index] if index < len(listed) else []) + (drawn[index] if index < len(drawn) else [])
        builder.headings.reset()
        if runs and not any(is_title for is_title, _ in runs) and _title_like(runs[0][1]):
            runs[0] = (True, runs[0][1])  # a slide's shapes without placeholder types: its first line is the title
        seen: set[str] = set()
        for is_title, text in runs:
            key = " ".join(text.split())
            if not key or key in seen:  # the same placeholder text can be in both places
                continue
            seen.add(key)
            if is_title:
                builder.heading(text, index + 1, 1)
            else:
                builder.add(text, index + 1)
    return builder.document(path, "ppt", count)


def _title_like(text: str) -> bool:
    return "\n" not in text.strip() and 0 < len(text.strip()) <= _TITLE_CHARS


def _stream(path: Path) -> bytes:
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            if not ole.exists("PowerPoint Document"):
                raise ConversionError(path, "not a valid PPT (no PowerPoint Document stream); "
                                            "open it and save it as .pptx")
            return ole.openstream("PowerPoint Document").read()
    except (OSError, ValueError, IndexError, TypeError, RecursionError, EOFError) as exc:
        raise ConversionError(path, f"damaged or unreadable PPT ({exc}); open it and save it as .pptx") from exc


class _Reader:
    """Walks the record tree once, collecting text runs per slide from both places they live."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data = data
        self.path = path
        self.listed: list[list[Run]] = []  # SlideListWithText, one list per SlidePersistAtom
        self.drawn: list[list[Run]] = []  # one list per Slide container
        self._title = False

    def slides(self) -> tuple[list[list[Run]], list[list[Run]]]:
        self._walk(0, len(self.data), 0, None)
        return self.listed, self.drawn

    def _walk(self, start: int, end: int, depth: int, target: list[list[Run]] | None) -> None:
        if depth > _MAX_DEPTH:
            raise ConversionError(self.path, "damaged PPT (records nested too deeply)")
        at = start
        while at + 8 <= end:
            ver_inst, kind, length = struct.unpack_from("<HHI", self.data, at)
            body, at = at + 8, at + 8 + length
            if at > end:
                if depth == 0:
                    break  # a cut-off last record: keep what was read before it
                raise ConversionError(self.path, "damaged PPT (a record runs past its container)")
            if kind in _SKIPPED:
                continue
            if kind == _SLIDE_LIST:
                instance = ver_inst >> 4
                self._walk(body, at, depth + 1, self.listed if instance == 0 else None)
            elif kind == _SLIDE:
                self.drawn.append([])
                self._walk(body, at, depth + 1, self.drawn)
            elif kind == _SLIDE_PERSIST and target is self.listed:
                self.listed.append([])
            elif kind == _TEXT_HEADER and length >= 4:
                self._title = struct.unpack_from("<I", self.data, body)[0] in _TITLE_TYPES
            elif kind in (_TEXT_CHARS, _TEXT_BYTES) and target:
                raw = self.data[body:at]
                text = raw.decode("utf-16-le", "replace") if kind == _TEXT_CHARS else raw.decode("latin-1")
                target[-1].append((self._title, text.replace("\r", "\n").replace("\x0b", "\n")))
                self._title = False
            elif ver_inst & 0x0F == 0x0F:  # a container: its children are records too
                self._walk(body, at, depth + 1, target)
