"""DOCX, PPTX, HTML and Markdown through Docling's model-free backends.

These formats carry their own structure (styles, slide titles, tags),
so Docling's declarative backends read them without any ML model and give
us a typed document tree. We walk that tree ourselves instead of exporting
Markdown, so every block keeps its kind, its page or slide number and its
heading path. PDFs never come here (see `pdf.py`), nor do spreadsheets
(`spreadsheet.py`: their rows and header need more than a rendered page).
"""

from __future__ import annotations

import io
import logging
import re
import threading
from pathlib import Path
from typing import Any

from rag_system.config import Settings
from rag_system.ingestion.source_text import SourceText, keep_typography
from rag_system.ingestion.structure import BlockBuilder, join_inline, render_table
from rag_system.ingestion.types import Block, ConversionError, ConvertedDocument, check_page_limit, display_name

logger = logging.getLogger(__name__)

_CONVERTER: Any = None
_CONVERTER_LOCK = threading.Lock()
_HASH_RE = re.compile(r"\s*with hash [0-9a-f]+")
#: Content layers that are not document text (running headers, hidden/background shapes).
_SKIPPED_LAYERS = frozenset({"furniture", "background", "invisible"})
_SKIPPED_LABELS = frozenset({"page_header", "page_footer", "picture", "chart", "empty_value", "marker"})


def docling_converter() -> Any:
    """The per-process Docling `DocumentConverter`, restricted to model-free formats.

    Building one imports most of Docling (seconds), so it is created on first
    use and shared; converters are safe to call from several threads.
    """
    global _CONVERTER
    with _CONVERTER_LOCK:
        if _CONVERTER is None:
            from docling.datamodel.base_models import InputFormat
            from docling.document_converter import DocumentConverter

            keep_typography()  # before any HTML is read: quotes and highlights must match the page

            _CONVERTER = DocumentConverter(allowed_formats=[
                InputFormat.DOCX, InputFormat.PPTX, InputFormat.HTML, InputFormat.MD,
            ])
            logger.info("Docling converter ready (DOCX, PPTX, HTML, MD)")
        return _CONVERTER


def convert_office(path: Path, settings: Settings, file_type: str) -> ConvertedDocument:
    """Convert one DOCX/PPTX/HTML/MD file; Docling errors become `ConversionError`."""
    source = SourceText.of_html(path) if file_type == "html" else \
        SourceText.of_markdown(path) if file_type == "md" else None
    blocks, page_count, warnings = _docling_blocks(path, path, file_type, source)
    check_page_limit(path, page_count, {"pptx": "slides"}.get(file_type, "pages"), settings.max_pages)
    if not blocks:
        warnings.append("no text found")
    return ConvertedDocument(path=path, name=display_name(path), file_type=file_type, page_count=page_count,
                             blocks=tuple(blocks), warnings=tuple(warnings))


def html_blocks(data: bytes, name: str, path: Path) -> tuple[list[Block], list[str]]:
    """Blocks of an HTML part inside another file (an EPUB chapter, an HTML mail body), all on page 1.

    The same Docling path as an .html file, so a chapter or a mail keeps its
    headings, lists and tables; errors name `path`, the file the user has.
    """
    from docling.datamodel.base_models import DocumentStream

    stream = DocumentStream(name=name, stream=io.BytesIO(data))
    blocks, _, warnings = _docling_blocks(stream, path, "html", SourceText.of_html_bytes(data))
    return blocks, warnings


def _docling_blocks(source: Any, path: Path, file_type: str,
                    source_text: SourceText | None) -> tuple[list[Block], int, list[str]]:
    """(blocks, page count, warnings) of one Docling conversion."""
    from docling.datamodel.base_models import ConversionStatus

    label = file_type.upper()
    try:
        result = docling_converter().convert(source, raises_on_error=False)
    except Exception as exc:  # Docling and its parsers raise anything from KeyError to XMLSyntaxError
        raise ConversionError(path, f"could not read {label}: {_message(exc)}") from exc
    errors = [e.error_message for e in getattr(result, "errors", ())]
    if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
        detail = "; ".join(_HASH_RE.sub("", e) for e in errors) or f"Docling status {result.status.value}"
        raise ConversionError(path, f"damaged or unreadable {label} ({detail})")
    document = result.document
    mapper = _Mapper(document, file_type, source_text)
    mapper.walk(document.body)
    mapper.flush_list()
    page_count = max([len(document.pages), mapper.max_page, 1])
    return mapper.builder.blocks, page_count, [f"Docling: {e}" for e in errors]


def _message(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


class _Mapper:
    """Depth-first walk over a DoclingDocument that emits our blocks in order."""

    def __init__(self, document: Any, file_type: str, source: SourceText | None = None) -> None:
        self.document = document
        self.file_type = file_type
        self.source = source  # the file's own text, for the spacing between inline pieces
        self.builder = BlockBuilder()
        self.max_page = 0
        self._page = 1
        self._list_lines: list[str] = []
        self._list_page = 1

    def walk(self, node: Any, list_depth: int = 0) -> None:
        for child in self._children(node):
            self._visit(child, list_depth)

    def _visit(self, item: Any, list_depth: int) -> None:
        from docling_core.types.doc import (
            CodeItem, GroupItem, ListItem, PictureItem, SectionHeaderItem, TableItem, TitleItem,
        )

        label = _label(item)
        is_list_group = isinstance(item, GroupItem) and label in ("list", "ordered_list")
        if not isinstance(item, ListItem) and not is_list_group:
            self.flush_list()
        if isinstance(item, GroupItem) and label == "inline":
            self._set_page(item)
            self.builder.add(self._join(self._inline_parts(item)), self._page)
        elif isinstance(item, GroupItem):
            self.walk(item, list_depth + 1 if is_list_group else list_depth)
        elif isinstance(item, ListItem):
            self._set_page(item)
            if not self._list_lines:
                self._list_page = self._page
            marker = str(getattr(item, "marker", "") or "-").strip() or "-"
            text, rest = self._own_text(item)
            self._list_lines.append("  " * max(list_depth - 1, 0) + f"{marker} {text}".rstrip())
            for child in rest:  # nested lists hang below their item
                self._visit(child, list_depth)
        elif isinstance(item, TitleItem):
            self._set_page(item)
            text, rest = self._own_text(item)
            self.builder.heading(text, self._page, 0)
            for child in rest:  # Docling nests a section's content under its heading
                self._visit(child, list_depth)
        elif isinstance(item, SectionHeaderItem):
            self._set_page(item)
            text, rest = self._own_text(item)
            self.builder.heading(text, self._page, max(int(getattr(item, "level", 1) or 1), 1))
            for child in rest:
                self._visit(child, list_depth)
        elif isinstance(item, TableItem):
            self._set_page(item)
            self._captions(item)
            self.builder.add(_table_text(item), self._page, "table")
        elif isinstance(item, CodeItem):
            self._set_page(item)
            self.builder.add(item.text, self._page, "code")
        elif isinstance(item, PictureItem) or label in _SKIPPED_LABELS:
            self.walk(item)  # captions and any text placed on a picture
        else:
            self._set_page(item)
            text = getattr(item, "text", "")
            if isinstance(text, str) and text.strip():
                self.builder.add(self._respaced(text), self._page)
            self.walk(item, list_depth)

    def _respaced(self, text: str) -> str:
        return self.source.respace(text) if self.source is not None else text

    def _join(self, parts: list[str]) -> str:
        """Inline pieces joined as the source spaced them (`SourceText`), else by `join_inline`'s rules."""
        joined = self.source.join(parts) if self.source is not None else None
        return joined if joined is not None else join_inline(parts)

    def _own_text(self, item: Any) -> tuple[str, list[Any]]:
        """An item's text and its remaining children.

        Docling's Markdown backend leaves `text` empty on a heading or list item
        with inline formatting ("## Run `docent`") and puts the runs in an
        inline-group child; that group is the item's own text. When `text` is
        set (HTML), an inline child is a following paragraph and stays a child.
        """
        from docling_core.types.doc import GroupItem

        children = self._children(item)
        text = str(getattr(item, "text", "") or "").strip()
        if text:
            return self._respaced(text), children
        own = [c for c in children if isinstance(c, GroupItem) and _label(c) == "inline"]
        rest = [c for c in children if all(c is not group for group in own)]
        return self._join([self._join(self._inline_parts(group)) for group in own]), rest

    def _children(self, node: Any) -> list[Any]:
        children = [ref.resolve(self.document) for ref in getattr(node, "children", ())]
        return [child for child in children if _layer(child) not in _SKIPPED_LAYERS]

    def flush_list(self) -> None:
        if self._list_lines:
            self.builder.add("\n".join(self._list_lines), self._list_page, "list")
            self._list_lines = []

    def _set_page(self, item: Any) -> None:
        """Page/slide number from Docling's provenance; slides start a fresh heading context."""
        provs = getattr(item, "prov", None) or []
        if not provs and not hasattr(item, "prov"):
            for ref in getattr(item, "children", ()):
                provs = getattr(ref.resolve(self.document), "prov", None) or []
                if provs:
                    break
        if not provs:
            return
        page = int(provs[0].page_no)
        if page != self._page and self.file_type == "pptx":
            self.flush_list()
            self.builder.headings.reset()
        self._page = page
        self.max_page = max(self.max_page, page)

    def _inline_parts(self, group: Any) -> list[str]:
        parts: list[str] = []
        for ref in getattr(group, "children", ()):
            child = ref.resolve(self.document)
            text = getattr(child, "text", None)
            if isinstance(text, str) and text:
                parts.append(text)
            elif getattr(child, "children", None):
                parts.append(self._join(self._inline_parts(child)))
        return parts

    def _captions(self, item: Any) -> None:
        for ref in getattr(item, "captions", ()) or ():
            caption = ref.resolve(self.document)
            text = getattr(caption, "text", "")
            if text:
                self.builder.add(text, self._page)


def _table_text(item: Any) -> str:
    grid = item.data.grid if getattr(item, "data", None) is not None else []
    return render_table([cell.text for cell in row] for row in grid)


def _label(item: Any) -> str:
    label = getattr(item, "label", "")
    return str(getattr(label, "value", label))


def _layer(item: Any) -> str:
    layer = getattr(item, "content_layer", "body")
    return str(getattr(layer, "value", layer))
