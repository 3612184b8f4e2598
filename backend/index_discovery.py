"""Indexes built outside the web app (`python -m rag_system index … --index contracts`) listed with the rest.

Why: a user's command-line work should show up in the browser. The RAG API
owns the tables; the gateway owns the list people see. So listing indexes
asks the RAG API which indexes it has and adopts the ones the gateway does
not know: a row whose id is the RAG API's name (so chat, links and deletion
work unchanged), named after it, `metadata.origin = "cli"` and its chunk
count. An adopted index whose table is gone is dropped from the list. When
the RAG API cannot be reached the list is what SQLite holds, as before.
"""

from __future__ import annotations

import logging
import sqlite3

from backend.app import App
from common.errors import ApiError

log = logging.getLogger(__name__)

ORIGIN_CLI = "cli"


def adopt_external_indexes(app: App, request_id: str | None = None) -> None:
    try:
        listed = app.rag.indexes(request_id)
    except ApiError as exc:
        log.info("index discovery skipped: %s", exc)
        return
    tables = {str(i["name"]): int(i.get("chunks") or 0) for i in listed if isinstance(i, dict) and i.get("name")}
    known = {ix["id"]: ix for ix in app.store.list_indexes()}
    for name, chunks in tables.items():
        current = known.get(name)
        if current is None:
            try:
                app.store.create_index(name, "Indexed from the command line",
                                       {"status": "ready", "origin": ORIGIN_CLI, "chunks": chunks}, index_id=name)
            except sqlite3.IntegrityError:
                pass  # adopted by a concurrent listing
        elif current["metadata"].get("origin") == ORIGIN_CLI and current["metadata"].get("chunks") != chunks:
            app.store.update_index_metadata(name, {"chunks": chunks})
    for iid, ix in known.items():
        if ix["metadata"].get("origin") == ORIGIN_CLI and iid not in tables and not ix["documents"]:
            app.store.delete_index(iid)  # its table was deleted outside the web app
