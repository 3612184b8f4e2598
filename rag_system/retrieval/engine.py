"""Retrieval as one call: open the index, run the first stage, then rerank.

The engine holds only shared, read-only things (the embedder, the store
connection, open table handles, a thread pool). Everything that varies per
request arrives in `RetrievalOptions`, so concurrent requests never see each
other's settings.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import replace
from typing import Any

from common.document_ids import file_id
from rag_system.config import Settings
from rag_system.embedding.base import Embedder
from rag_system.embedding.registry import embedder_named, name_for_model
from rag_system.indexing.store import ChunkTable, is_missing_file, open_store
from rag_system.retrieval.cross_encoder import rerank_scores
from rag_system.retrieval.first_stage import FirstStage
from rag_system.retrieval.rerank import load_reranker, select_reranked
from rag_system.retrieval.reranker_types import Reranker, RerankerLoadError, RerankerStatus
from rag_system.retrieval.row_maps import RowMaps
from rag_system.retrieval.types import RetrievalOptions, RetrievalResult


log = logging.getLogger(__name__)

#: Searches repeated when one result holds two versions of a document (see `mixed_versions`).
MIXED_RETRIES = 3


def mixed_versions(candidates: list[Any]) -> bool:
    """Whether chunks of two versions (content ids) of one source file are among the candidates."""
    seen: dict[str, str] = {}
    for candidate in candidates:
        try:
            source = str(json.loads(candidate.metadata or "{}").get("source_path") or candidate.document_name)
        except (ValueError, AttributeError):
            source = candidate.document_name
        version = file_id(candidate.document_id)  # a mailbox's messages are one version of one file
        if seen.setdefault(source, version) != version:
            return True
    return False


class RetrievalEngine:
    def __init__(self, settings: Settings, embedder: Embedder, db: Any | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.db = db if db is not None else open_store(settings, replica=True)
        self.first_stage = FirstStage(embedder)
        self._tables: dict[str, ChunkTable] = {}
        # Each open table's embedder, found once: looking it up reads the table's schema, a round
        # trip to LanceDB's loop thread on every question otherwise.
        self._embedders: dict[str, Embedder] = {}
        # Each open index's row-address maps (rag_system/retrieval/row_maps.py), dropped with its handle.
        self._maps: dict[str, RowMaps] = {}
        self._lock = threading.Lock()
        self._reranker: tuple[Reranker | None, RerankerStatus] | None = None

    def options(self, **overrides: Any) -> RetrievalOptions:
        """Request options: the settings' defaults plus this request's overrides."""
        s = self.settings
        base: dict[str, Any] = {"mode": s.retrieval_mode, "k": s.retrieval_k, "fusion": s.fusion, "rrf_k": s.rrf_k,
                "fts_weight": s.fts_weight, "vector_weight": s.vector_weight, "fts_exact": s.fts_exact,
                "query_focus": s.query_focus, "rerank": s.rerank, "rerank_depth": s.rerank_depth,
                "rerank_blend": s.rerank_blend,
                "min_score": s.reranker_min_score, "min_keep": s.reranker_min_keep,
                "top_k": s.reranker_top_k}
        base.update({k: v for k, v in overrides.items() if v is not None})
        return RetrievalOptions(**base)

    def table(self, index: str) -> ChunkTable:
        with self._lock:
            table = self._tables.get(index)
            if table is None:
                table = ChunkTable.open(self.db, index)
                embedder = self.embedder_for(table)
                table.check_identity(embedder.identity)
                self._tables[index], self._embedders[index] = table, embedder
            return table

    def embedder_for(self, table: ChunkTable) -> Embedder:
        """The embedder that built `table`: the engine's own, or another known one (loaded on first use).

        An index keeps the embedder it was built with (rag_system/embedding/
        registry.py), so one engine serves MiniLM and e5 indexes side by side;
        a model it does not know is left to the identity check to refuse.
        """
        model, _ = table.recorded_identity()
        if model == self.embedder.identity.model_id:
            return self.embedder
        name = name_for_model(model, self.settings)
        return embedder_named(self.settings, name) if name is not None else self.embedder

    def models_used(self, indexes: Any, reranked: bool) -> dict[str, Any]:
        """Which models a question used: each index's embedder and, when it ran, the reranker (what the
        web app and the answer's `models` say)."""
        rows = []
        for index in indexes:
            self.table(index)  # opens it (and finds its embedder) once
            with self._lock:
                embedder = self._embedders.get(index) or self.embedder
            rows.append({"index": index, "embedder": embedder.name, "model": embedder.identity.model_id})
        reranker = self._reranker[0] if reranked and self._reranker is not None else None
        return {"embedders": rows, "reranker": getattr(reranker, "model", None) or getattr(reranker, "name", None)}

    def forget(self, index: str) -> None:
        """Drop a cached handle (after the index is deleted or rebuilt elsewhere)."""
        with self._lock:
            self._tables.pop(index, None)
            self._embedders.pop(index, None)
            self._maps.pop(index, None)

    def settle(self, index: str, timeout_s: float = 60.0) -> None:
        """Wait until `index`'s row maps are made (benchmarks: the state after a server's first question)."""
        with self._lock:
            maps = self._maps.get(index)
        if maps is not None:
            maps.wait(timeout_s)

    def reranker(self) -> tuple[Reranker | None, RerankerStatus]:
        """The configured reranker, loaded on first use (never at start-up)."""
        with self._lock:
            if self._reranker is None:
                self._reranker = load_reranker(self.settings.reranker_model, models_dir=self.settings.models_dir)
            return self._reranker

    def retrieve(self, index: str, query: str, options: RetrievalOptions) -> RetrievalResult:
        result = self._first_stage(index, query, options)
        for _ in range(MIXED_RETRIES):
            if not mixed_versions(result.candidates):
                break
            # The legs read the table at two versions while a build replaced a document: ask again, so
            # one answer never quotes the old and the new version of a file side by side.
            log.info("index %s: a document changed during the search; searching again", index)
            result = self._first_stage(index, query, options)
        if options.rerank and result.candidates:
            result = self.rerank(result, options)
        result.models = self.models_used([index], result.final is not None)
        return result

    def _first_stage(self, index: str, query: str, options: RetrievalOptions) -> RetrievalResult:
        table = self.table(index)
        with self._lock:
            embedder = self._embedders.get(index)
            maps = self._maps.get(index)
            if maps is None and self.settings.row_maps:
                maps = self._maps[index] = RowMaps()
        embedder = embedder or self.embedder_for(table)
        try:
            return self.first_stage.search(table, query, options, embedder, maps)
        except (OSError, RuntimeError, ValueError) as exc:
            if not is_missing_file(exc):
                raise
            # A replica's handle may point at files the writer's cleanup removed: move on, retry once.
            log.info("index %s: %s; checking out the latest version and retrying", index, exc)
            table.checkout_latest()
            return self.first_stage.search(table, query, options, embedder, maps)

    def rerank(self, result: RetrievalResult, options: RetrievalOptions) -> RetrievalResult:
        """`result` reranked/selected (`final` set), as a new result; unchanged but for a warning if it cannot be."""
        reranker, status = self.reranker()
        if reranker is None:
            why = status.error or "no RERANKER_MODEL is configured"
            return replace(result, warnings=[*result.warnings, f"reranking skipped: {why}"])
        t0 = time.perf_counter()
        try:
            scores = rerank_scores(reranker, result.query, result.candidates, options.rerank_depth)
        except (RerankerLoadError, RuntimeError, ValueError) as exc:
            log.warning("reranker %s failed, keeping first-stage order: %s", reranker.name, exc)
            return replace(result, warnings=[*result.warnings,
                                             f"reranking failed ({type(exc).__name__}); first-stage order kept"])
        ranked = select_reranked(result.candidates, scores, options.min_score, options.min_keep, options.top_k,
                                 options.rerank_blend)
        return replace(result, reranked=ranked, final=[r.candidate for r in ranked if r.kept],
                       timings_ms={**result.timings_ms, "rerank_ms": (time.perf_counter() - t0) * 1000})
