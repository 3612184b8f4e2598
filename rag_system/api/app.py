"""The service container: every long-lived object of the RAG API, built once.

Models load when the service is built (the embedder now; the chosen embedded
LLM in the background when `LLM_PRELOAD` is on; the reranker on first use),
never at import. Handlers only read from here; everything that varies per
request is built per request (`QueryPipeline.request`), so no request can
change another's options.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from rag_system.agent.pipeline import QueryPipeline
from rag_system.agent.types import Turn
from rag_system.api.access import ServiceAccess
from rag_system.api.gateway_client import TurnSaver, read_history
from rag_system.api.index_names import IndexNames
from rag_system.api.jobs import JobQueue
from rag_system.api.metrics import GaugeRows, Metrics
from rag_system.api.paths import AllowedRoots
from rag_system.api.sync_service import SyncService
from rag_system.config import Settings
from rag_system.generation.prompts import warm_up_messages
from rag_system.generation.registry import BackendRegistry
from rag_system.grounding.parser import ParserUnavailable, parser
from rag_system.embedding.base import Embedder
from rag_system.embedding.registry import shared_embedder
from rag_system.indexing.snapshot import StoreSnapshots
from rag_system.indexing.store import ChunkTable, list_indexes, open_store
from rag_system.retrieval.engine import RetrievalEngine

log = logging.getLogger(__name__)

INDEX_SIZES_TTL_S = 15.0


def _preload_parser() -> None:
    """Load the verifier's English parser now, so the first `/verify` (and the first checked answer)
    does not wait for spaCy; a failure is reported again, with its remedy, by the request that needs it."""
    try:
        parser()
    except (ParserUnavailable, ImportError, OSError, ValueError) as exc:
        log.warning("the verifier's English parser did not load: %s", exc)


def cors_origins(setting: str) -> frozenset[str]:
    """The allowed browser origins; `*` is never honoured (Documentation/operations.md)."""
    origins = {o.strip().rstrip("/") for o in setting.split(",") if o.strip()}
    if "*" in origins:
        log.warning("DOCENT_CORS_ORIGINS: '*' is ignored; list the frontend origins explicitly")
        origins.discard("*")
    return frozenset(origins)


class Service:
    def __init__(self, settings: Settings, *, embedder: Embedder | None = None) -> None:
        t0 = time.perf_counter()
        self.settings = settings
        self.started = time.time()
        self.embedder = embedder or shared_embedder(settings)
        self.db = open_store(settings, replica=True)
        self.engine = RetrievalEngine(settings, self.embedder, db=self.db)
        self.registry = BackendRegistry(settings)
        self.pipeline = QueryPipeline(settings, self.engine, self.registry)
        self.roots = AllowedRoots.from_settings(settings)
        self.metrics = Metrics()
        self.access = ServiceAccess(settings)
        self.saver = TurnSaver(settings.gateway_url, lambda: self.access.token)
        self.names = IndexNames(self.index_names, settings.gateway_url, lambda: self.access.token)
        self.jobs = JobQueue(settings, self.embedder, self.roots, on_changed=self.index_changed)
        self.sync = SyncService(settings, open_store(settings), self.jobs, self.roots)
        self.snapshots = StoreSnapshots(settings.resolved_lancedb_uri)  # POST /backup
        self.cors_origins = cors_origins(settings.cors_origins)
        self.llm_loading: dict[str, Any] = {"state": "not requested"}
        self._sizes: tuple[float, list[tuple[str, int]]] = (0.0, [])
        self._sizes_lock = threading.Lock()
        self._register_gauges()
        log.info("RAG API service built in %.1f s (store %s)", time.perf_counter() - t0,
                 settings.resolved_lancedb_uri)

    # -- life cycle -------------------------------------------------------------
    def start(self) -> None:
        self.jobs.start()
        if self.settings.role != "reader":  # only the writer syncs
            self.sync.start()
        self.saver.start()
        if self.settings.llm_preload:
            threading.Thread(target=self._preload_llm, name="docent-llm-preload", daemon=True).start()
        threading.Thread(target=_preload_parser, name="docent-parser-preload", daemon=True).start()

    def close(self) -> None:
        self.sync.stop()
        self.jobs.stop()
        self.saver.wait_idle(5.0)
        self.saver.stop()

    def _preload_llm(self) -> None:
        try:
            backend = self.registry.chain()[0]
            load = getattr(backend, "load", None)
            if load is None:
                self.llm_loading = {"state": "nothing to load", "backend": backend.name}
                return
            self.llm_loading = {"state": "loading", "backend": backend.name}
            load()
            backend.warm(warm_up_messages())
            self.llm_loading = {"state": "loaded", "backend": backend.name,
                                "prompt_tokens_per_s": round(backend.prompt_rate() or 0.0, 1)}
        except Exception as exc:  # the answer path reports the same failure per request
            log.warning("LLM preload failed: %s", exc)
            self.llm_loading = {"state": "failed", "error": str(exc)}

    # -- shared state changes ------------------------------------------------------
    def index_changed(self, index: str) -> None:
        """After a build or delete: forget table handles and cached answers for `index`."""
        self.engine.forget(index)
        self.pipeline.cache.invalidate_index(index)
        with self._sizes_lock:
            self._sizes = (0.0, [])

    # -- read-only views -----------------------------------------------------------
    def conversation(self, session_id: str, exclude_turn: str | None) -> tuple[tuple[Turn, ...], str | None, str]:
        """The session's last turns as the gateway holds them, a warning when it could not be asked, and
        the session's model (`model_used`).

        Without them a follow-up is answered as a question of its own, which is better than no answer.
        """
        limit = self.settings.memory_turns
        if limit == 0:
            return (), None, ""
        try:
            found, model = read_history(self.settings.gateway_url, self.access.token, session_id, limit, exclude_turn)
        except (OSError, ValueError) as exc:
            log.warning("conversation history of session %s unavailable: %s", session_id, exc)
            return (), ("the conversation history could not be read from the gateway; "
                        "this question was answered on its own"), ""
        turns = tuple(Turn(m["role"], m["content"], m.get("standalone") or None) for m in found
                      if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), str))
        return turns, None, model

    def index_names(self, fresh: bool = False) -> list[str]:
        return list_indexes(self.db) if fresh else [name for name, _ in self.index_sizes()]

    def index_sizes(self) -> list[tuple[str, int]]:
        """(index, chunk count) for every index. The names are listed each time (an index the CLI
        just built is there at once: with the whole list cached, the web app missed it for 15 s);
        counts, which open tables, are kept briefly."""
        names = list_indexes(self.db)
        with self._sizes_lock:
            at, cached = self._sizes
            known = dict(cached) if at and time.monotonic() - at < INDEX_SIZES_TTL_S else {}
        if known and all(name in known for name in names):
            return [(name, known[name]) for name in names]
        out: list[tuple[str, int]] = []
        for name in names:
            if name in known:
                out.append((name, known[name]))
                continue
            try:
                out.append((name, ChunkTable.open(self.db, name).count()))
            except Exception:  # a table dropped meanwhile
                continue
        with self._sizes_lock:
            self._sizes = (at if known else time.monotonic(), out)
        return out

    def store_status(self) -> dict[str, Any]:
        try:
            names = list_indexes(self.db)
        except Exception as exc:
            return {"ok": False, "uri": self.settings.resolved_lancedb_uri, "error": f"{type(exc).__name__}: {exc}"}
        return {"ok": True, "uri": self.settings.resolved_lancedb_uri, "indexes": len(names)}

    def reranker_status(self) -> dict[str, Any]:
        loaded = getattr(self.engine, "_reranker", None)
        if loaded is not None:
            return loaded[1].to_json()
        spec = self.settings.reranker_model
        return {"configured": spec, "loaded": False, "kind": "none" if not spec else "pending", "error": None,
                "detail": "disabled (RERANKER_MODEL is empty)" if not spec else "loads on first use"}

    def _register_gauges(self) -> None:
        def jobs() -> GaugeRows:
            live = self.jobs.counts()
            rows = [({"state": s}, float(n)) for s, n in live.items()]
            rows += [({"state": s}, float(n)) for s, n in self.jobs.finished_counts.items()]
            return rows

        def sizes() -> GaugeRows:
            return [({"index": name}, float(n)) for name, n in self.index_sizes()]

        def turns() -> GaugeRows:
            st = self.saver.stats
            return [({"result": "saved"}, st.saved), ({"result": "failed"}, st.failed),
                    ({"result": "dropped"}, st.dropped), ({"result": "retried"}, st.retries)]

        self.metrics.gauge("docent_rag_index_jobs", "gauge",
                           "Index jobs by state (queued/running now; done/failed/cancelled since start).", jobs)
        self.metrics.gauge("docent_rag_index_chunks", "gauge", "Chunks stored per index.", sizes)
        self.metrics.gauge("docent_rag_turns_saved_total", "counter",
                           "Chat turns posted to the gateway, by result.", turns)
        self.metrics.gauge("docent_rag_uptime_seconds", "gauge", "Seconds since the service started.",
                           lambda: [({}, round(time.time() - self.started, 1))])
