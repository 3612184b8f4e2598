"""One file made ready to embed: converted and chunked, or failed with a reason, or held.

Apart from builder.py because two builds run it: the single-process build on its
conversion thread (`build_stages.Ahead`), and each task of a distributed build on a
Ray worker (`ray_tasks.py`), which must chunk exactly as the single process does so
both make the same chunk ids.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from rag_system.chunking.chunk import Chunk
from rag_system.chunking.chunker import ChunkerOptions
from rag_system.chunking.parts import chunk_file
from rag_system.config import Settings
from rag_system.embedding.base import Embedder
from rag_system.indexing.events import BuildEvent, EventSink
from rag_system.indexing.manifest import FileRecord
from rag_system.indexing.objects import ObjectChangedError, fetched
from rag_system.indexing.plan import SourceFile
from rag_system.ingestion import convert
from rag_system.ingestion.types import ConversionError, ConvertedDocument

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prepared:
    source: SourceFile
    previous: FileRecord | None
    document: ConvertedDocument | None
    chunks: list[Chunk]
    error: str | None
    seconds: float
    document_ids: tuple[str, ...] = ()  # per chunk: the file's id, or its part's (a mailbox's message)
    held: bool = False  # written to while it was read: not indexed now (`prepare_file`)


def file_stamp(path: Path) -> tuple[int, int] | None:
    """(size, mtime in ns), None for a file that is gone."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


@contextmanager
def _readable(source: SourceFile, settings: Settings) -> Iterator[Path]:
    """The file to convert: a local file as it is, an object fetched (and checked against its hash)."""
    if not source.uri:
        yield source.path
        return
    with fetched(source.uri, settings, expected_sha256=source.document_id) as path:
        yield path


def _convert(source: SourceFile, settings: Settings, converted: dict[str, ConvertedDocument] | None
             ) -> ConvertedDocument:
    document = (converted or {}).pop(source.key, None)
    if document is None:
        with _readable(source, settings) as path:
            document = convert(path, settings)
    return replace(document, uri=source.uri) if source.uri else document


def prepare_file(source: SourceFile, previous: FileRecord | None, settings: Settings,
                 embedder: Embedder, options: ChunkerOptions, on_event: EventSink,
                 converted: dict[str, ConvertedDocument] | None = None,
                 stamp: tuple[int, int] | None = None) -> Prepared:
    """Convert and chunk one file; failures become a reason, never an exception.

    `stamp`: its (size, mtime) before its bytes were hashed. A file written to since is *held*, not
    indexed: hash and text may be of two versions, or of half of one (an editor writing in two steps,
    the second after the sync's settle check), and a reader would see half a document. An object
    is held when the bytes fetched no longer have the planned hash. `converted`: by `SourceFile.key`.
    """
    t0 = time.perf_counter()
    path = source.key
    on_event(BuildEvent("file_started", path, {"size": source.size}))
    try:
        try:
            document = _convert(source, settings, converted)
        except ObjectChangedError:
            on_event(BuildEvent("file_held", path, {"reason": "the object changed since the build was planned"}))
            return Prepared(source, previous, None, [], None, time.perf_counter() - t0, held=True)
        on_event(BuildEvent("file_converted", path, {
            "pages": document.page_count, "blocks": len(document.blocks),
            "ocr_engine": document.ocr_engine, "ocr_pages": list(document.ocr_pages),
            "warnings": list(document.warnings),
        }))
        chunks, ids = chunk_file(document, source.document_id, embedder.count_tokens_batch, options)
        if not chunks:
            raise ConversionError(source.path, "no text found (the file has no extractable text)")
        if stamp is not None and not source.uri and file_stamp(source.path) != stamp:
            on_event(BuildEvent("file_held", path, {"reason": "the file changed while it was read"}))
            return Prepared(source, previous, None, [], None, time.perf_counter() - t0, held=True)
        on_event(BuildEvent("file_chunked", path, {"chunks": len(chunks)}))
        return Prepared(source, previous, document, chunks, None, time.perf_counter() - t0, tuple(ids))
    except ConversionError as exc:
        reason = exc.reason
    except Exception as exc:  # a converter library failing on hostile input
        log.warning("conversion of %s failed unexpectedly", path, exc_info=True)
        reason = f"could not read the file ({type(exc).__name__}: {exc})"
    return Prepared(source, previous, None, [], reason, time.perf_counter() - t0)
