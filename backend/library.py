"""What the index and session routes share: stored uploads, builds started, files removed.

Domain operations, not handlers, so neither route module imports the other.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from backend.app import App
from backend.build_options import read_build_options
from backend.uploads import is_within, save_uploads
from backend.web import Request, not_found
from common.errors import ApiError

log = logging.getLogger(__name__)


def index_or_404(app: App, index_id: str) -> dict[str, Any]:
    index = app.store.get_index(index_id)
    if index is None:
        raise not_found("index", index_id)
    return index


def store_uploads(app: App, req: Request, *, index_id: str | None = None,
                  session_id: str | None = None) -> list[dict[str, Any]]:
    owner = index_id or session_id
    assert owner is not None
    stored = save_uploads(req.rfile, req.headers.get("Content-Type"), req.content_length,
                          app.config.uploads_dir, owner, app.config.max_upload_bytes)
    out: list[dict[str, Any]] = []
    for item in stored:
        doc = app.store.add_document(filename=item.filename, stored_path=item.stored_path, sha256=item.sha256,
                                     size=item.size, index_id=index_id, session_id=session_id)
        app.metrics.uploaded(item.size)
        out.append({"filename": item.filename, "stored_path": item.stored_path, "document_id": doc["id"],
                    "sha256": item.sha256, "size": item.size})
    return out


def start_build(app: App, index_id: str, options: dict[str, Any], request_id: str) -> dict[str, Any]:
    """Ask the RAG API to (incrementally) index every uploaded file of the index; returns its job."""
    index = index_or_404(app, index_id)
    replaced = [d for d in index["documents"] if d.get("replaced")]
    paths = [d["stored_path"] for d in index["documents"] if not d.get("replaced")]
    if not paths:
        raise ApiError(400, "no_documents", "the index has no documents: upload files first")
    embedder = (options or {}).get("embedder") or index["metadata"].get("embedder")
    if embedder is not None and not isinstance(embedder, str):
        raise ApiError(400, "invalid_field", "'embedder' must be a string")
    legacy = read_build_options(options or {})
    result = app.rag.start_index(index_id, paths, request_id, embedder or None, chunk_size=legacy.chunk_size,
                                 embedding_model=None if embedder else legacy.embedding_model,
                                 remove_paths=[d["stored_path"] for d in replaced])
    if replaced:  # the build drops their chunks: the rows and files of the older uploads go now
        remove_files(app, app.store.remove_documents([d["id"] for d in replaced]))
    result["warnings"] = [*legacy.warnings, *(result.get("warnings") or [])]
    job_id = result.get("job_id")
    if not isinstance(job_id, str) or not job_id:
        raise ApiError(502, "rag_api_error", "the RAG API accepted the build but returned no job id")
    app.store.add_job(job_id, index_id, "queued")
    updates: dict[str, Any] = {"status": "building", "last_job_id": job_id}
    if options:
        updates["build_options"] = options
    if legacy.applied:
        updates["applied_options"] = legacy.applied
    app.store.update_index_metadata(index_id, updates)
    app.store.set_documents_status(index_id, "indexing")
    return result


def remove_files(app: App, paths: list[str]) -> int:
    """Delete stored uploads, never anything outside the upload root; empty owner folders go too."""
    root = app.config.uploads_dir
    removed = 0
    folders: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not is_within(path, root):
            log.warning("not deleting %s: outside the upload folder", path)
            continue
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            pass
        folders.add(path.parent)
    for folder in folders:
        try:
            if folder.resolve() != root.resolve():
                folder.rmdir()
        except OSError:
            pass  # not empty: other documents still live there
    return removed
