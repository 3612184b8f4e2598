"""One document out of an index: its chunks, full-text windows, window vectors and manifest record.

An index is not all-or-nothing: an outdated file can go on its own. The RAG API's writer thread
runs this (rag_system/api/jobs.py), so it never races a build. The rows go first, then the
manifest record (as a build removes a file), and the full-text indexes are brought up to date,
so the document is never retrieved — and so never cited — again. A document whose content is
also indexed under another path keeps its rows (that other file still needs them); only the
named path's record goes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from common.errors import DomainError
from rag_system.config import Settings
from rag_system.indexing.languages import fts_options
from rag_system.indexing.manifest import FileRecord, Manifest
from rag_system.indexing.sql import documents_where
from rag_system.indexing.store import ChunkTable, open_store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Removal:
    """What went: the manifest records, and the chunk count before and after."""

    index: str
    document_id: str
    paths: tuple[str, ...]  # the manifest records removed
    chunks_before: int
    chunks_after: int

    def to_json(self) -> dict[str, object]:
        return {"index": self.index, "document_id": self.document_id, "paths": list(self.paths),
                "chunks_removed": self.chunks_before - self.chunks_after, "chunks": self.chunks_after}


class DocumentNotFoundError(DomainError, LookupError):
    """The index has no document with that id (or not at that path)."""

    status, code = 404, "document_not_found"


def remove_document(index: str, document_id: str, settings: Settings, path: str | None = None) -> Removal:
    """Remove `document_id` (only its record at `path` when given) from `index`; 404s as DomainErrors."""
    db = open_store(settings)
    table = ChunkTable.open(db, index)  # IndexNotFoundError (404) for an unknown index
    manifest = Manifest.open_existing(db, index)
    records = manifest.records() if manifest is not None else {}
    targets = _targets(records, document_id, path)
    if not targets and table.count(documents_where([document_id])) == 0:
        raise DocumentNotFoundError(f"index {index!r} has no document {document_id!r}"
                                    + (f" at {path}" if path else ""))
    before = table.count()
    remaining = {r.document_id for p, r in records.items() if p not in targets}
    if document_id not in remaining:
        table.delete_documents([document_id])
    if manifest is not None and targets:
        manifest.remove(list(targets))
    table.refresh_fts(**fts_options(settings, table.sample_texts()), keep_versions_s=settings.keep_versions_s)
    if manifest is not None:
        manifest.compact(settings.keep_versions_s)
    after = table.count()
    log.info("removed document %s from %s: %d chunks, %d manifest records", document_id[:12], index,
             before - after, len(targets))
    return Removal(index, document_id, tuple(sorted(targets)), before, after)


def _targets(records: dict[str, FileRecord], document_id: str, path: str | None) -> dict[str, FileRecord]:
    found = {p: r for p, r in records.items() if r.document_id == document_id}
    if path is None:
        return found
    wanted = {path, str(Path(path).resolve())}
    return {p: r for p, r in found.items() if p in wanted}

