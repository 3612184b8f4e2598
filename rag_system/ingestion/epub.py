"""EPUB e-books: the spine's chapters, in reading order, each a page through the HTML path.

An EPUB is a ZIP of XHTML chapters plus an OPF package file that gives
their reading order (the spine) and a table of contents. Each chapter goes
through the same Docling HTML conversion as an .html file, so headings,
lists and tables come out the same; the chapter's number in reading order
is its page, and a chapter that has no heading of its own gets its title
from the table of contents, so every citation names its chapter.
"""

from __future__ import annotations

import logging
import posixpath
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from rag_system.config import Settings
from rag_system.ingestion.office import html_blocks
from rag_system.ingestion.structure import placed
from rag_system.ingestion.types import Block, ConversionError, ConvertedDocument, check_page_limit, display_name
from rag_system.ingestion.zipxml import local_name, open_zip, parse_xml, read_part

logger = logging.getLogger(__name__)

_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html"})
_LABEL = "EPUB"


def convert_epub(path: Path, settings: Settings) -> ConvertedDocument:
    """Every spine chapter with text becomes a page (1, 2, ... in reading order)."""
    with open_zip(path, _LABEL) as archive:
        opf_name = _package_path(archive, path)
        opf = parse_xml(read_part(archive, opf_name, path, _LABEL), path, _LABEL, opf_name)
        base = posixpath.dirname(opf_name)
        manifest = _manifest(opf, base)
        chapters = [manifest[idref] for idref in _spine(opf) if idref in manifest]
        chapters = [(name, media, props) for name, media, props in chapters
                    if media in _CHAPTER_TYPES and "nav" not in props]
        if not chapters:
            raise ConversionError(path, "damaged EPUB (its spine lists no chapters)")
        check_page_limit(path, len(chapters), "chapters", settings.max_pages)
        titles = _toc_titles(archive, path, opf, manifest)
        blocks: list[Block] = []
        warnings: list[str] = []
        page = 0
        for name, _, _ in chapters:
            data = _chapter(archive, name, path, warnings)
            if data is None:
                continue
            chapter, notes = html_blocks(data, posixpath.basename(name) + ".html", path)
            warnings.extend(f"{name}: {note}" for note in notes)
            if not chapter:
                continue
            page += 1
            blocks.extend(_titled(chapter, page, titles.get(name, "")))
    if not blocks:
        warnings.append("no text found")
    return ConvertedDocument(path=path, name=display_name(path), file_type="epub", page_count=max(page, 1),
                             blocks=tuple(blocks), warnings=tuple(warnings))


def _titled(chapter: list[Block], page: int, title: str) -> list[Block]:
    """The chapter on its page; under its table-of-contents title when it has no heading of its own."""
    if not title or any(block.block_type == "heading" for block in chapter):
        return placed(chapter, page)
    heading = Block(text=title, page=page, block_type="heading", heading_path=(title,))
    return [heading, *placed(chapter, page, (title,))]


def _chapter(archive: zipfile.ZipFile, name: str, path: Path, warnings: list[str]) -> bytes | None:
    try:
        return read_part(archive, name, path, _LABEL)
    except ConversionError as exc:  # one missing chapter should not lose the book
        warnings.append(exc.reason)
        return None


def _package_path(archive: zipfile.ZipFile, path: Path) -> str:
    """The OPF file named by META-INF/container.xml."""
    container = parse_xml(read_part(archive, "META-INF/container.xml", path, _LABEL), path, _LABEL,
                          "META-INF/container.xml")
    for element in container.iter():
        if local_name(element) == "rootfile" and element.get("full-path"):
            return str(element.get("full-path")).lstrip("/")
    raise ConversionError(path, "damaged EPUB (META-INF/container.xml names no package file)")


def _manifest(opf: Any, base: str) -> dict[str, tuple[str, str, str]]:
    """id -> (member name in the ZIP, media type, properties)."""
    out: dict[str, tuple[str, str, str]] = {}
    for element in opf.iter():
        if local_name(element) == "item" and element.get("id") and element.get("href"):
            href = unquote(str(element.get("href")).split("#", 1)[0])
            out[str(element.get("id"))] = (posixpath.normpath(posixpath.join(base, href)),
                                           str(element.get("media-type") or ""), str(element.get("properties") or ""))
    return out


def _spine(opf: Any) -> list[str]:
    return [str(e.get("idref")) for e in opf.iter() if local_name(e) == "itemref" and e.get("idref")]


def _toc_titles(archive: zipfile.ZipFile, path: Path, opf: Any,
                manifest: dict[str, tuple[str, str, str]]) -> dict[str, str]:
    """Chapter member name -> its first title in the table of contents (EPUB 3 nav, else EPUB 2 NCX)."""
    nav = next((item for item in manifest.values() if "nav" in item[2].split()), None)
    spine = next((e for e in opf.iter() if local_name(e) == "spine"), None)
    ncx = manifest.get(str(spine.get("toc"))) if spine is not None and spine.get("toc") else None
    ncx = ncx or next((item for item in manifest.values() if item[1] == "application/x-dtbncx+xml"), None)
    source = nav or ncx
    if source is None:
        return {}
    try:
        root = parse_xml(read_part(archive, source[0], path, _LABEL), path, _LABEL, source[0])
    except ConversionError as exc:  # a broken table of contents costs the titles, not the book
        logger.info("%s: table of contents unreadable: %s", path.name, exc.reason)
        return {}
    base = posixpath.dirname(source[0])
    titles: dict[str, str] = {}
    for target, text in (_nav_links(root) if source is nav else _ncx_points(root)):
        name = posixpath.normpath(posixpath.join(base, unquote(target.split("#", 1)[0])))
        if text and name not in titles:
            titles[name] = text
    return titles


def _nav_links(root: Any) -> list[tuple[str, str]]:
    return [(str(a.get("href") or ""), " ".join("".join(a.itertext()).split()))
            for a in root.iter() if local_name(a) == "a" and a.get("href")]


def _ncx_points(root: Any) -> list[tuple[str, str]]:
    out = []
    for point in root.iter():
        if local_name(point) != "navPoint":
            continue
        label = next((e for e in point if local_name(e) == "navLabel"), None)
        content = next((e for e in point if local_name(e) == "content"), None)
        if label is not None and content is not None and content.get("src"):
            out.append((str(content.get("src")), " ".join("".join(label.itertext()).split())))
    return out
