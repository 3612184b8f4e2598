"""Retrieval as one call: open the index, run the first stage, then rerank.

The engine holds only shared, read-only things (the embedder, the store
connection, open table handles, a thread pool). Everything that varies per
request arrives in `RetrievalOptions`, so concurrent requests never see each
other's settings.
"""

from __future__ import annotations

import threading
from typing import Any

from rag_system.config import Settings
from rag_system.indexing.embedder import Embedder
from rag_system.indexing.store import ChunkTable, connect
from rag_system.retrieval.first_stage import FirstStage
from rag_system.retrieval.types import RetrievalOptions, RetrievalResult


class RetrievalEngine:
    def __init__(self, settings: Settings, embedder: Embedder, db: Any | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.db = db if db is not None else connect(settings.resolved_lancedb_uri, read_consistency_s=0)
        self.first_stage = FirstStage(embedder)
        self._tables: dict[str, ChunkTable] = {}
        self._lock = threading.Lock()

    def options(self, **overrides: Any) -> RetrievalOptions:
        """Request options: the settings' defaults plus this request's overrides."""
        s = self.settings
        base = {"mode": s.retrieval_mode, "k": s.retrieval_k, "fusion": s.fusion, "rrf_k": s.rrf_k,
                "fts_weight": s.fts_weight, "vector_weight": s.vector_weight}
        base.update({k: v for k, v in overrides.items() if v is not None})
        return RetrievalOptions(**base)

    def table(self, index: str) -> ChunkTable:
        with self._lock:
            table = self._tables.get(index)
            if table is None:
                table = ChunkTable.open(self.db, index, self.embedder.identity)
                self._tables[index] = table
            return table

    def forget(self, index: str) -> None:
        """Drop a cached handle (after the index is deleted or rebuilt elsewhere)."""
        with self._lock:
            self._tables.pop(index, None)

    def retrieve(self, index: str, query: str, options: RetrievalOptions) -> RetrievalResult:
        return self.first_stage.search(self.table(index), query, options)
