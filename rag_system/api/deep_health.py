"""`GET /health?deep=1`: prove the query path works by running it, and time each part.

Why: the plain `/health` reports what is loaded; a process can have every
component "loaded" and still fail every query (a corrupt table, an embedder
that hangs, a backend that vanished). The deep check embeds a fixed probe
sentence, runs a one-row vector search on an existing index, and asks the
LLM registry for its current choice, timing each step. It is cheap (one
embedding, one row) so load balancers may call it, but it is opt-in.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag_system.api.app import Service

PROBE_QUERY = "health check probe"


def _timed(step: Any) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        out = step()
        ok = True
    except Exception as exc:  # report the failing part, keep probing the others
        out, ok = {"error": f"{type(exc).__name__}: {exc}"}, False
    return {"ok": ok, "ms": round((time.perf_counter() - t0) * 1000, 2), **out}


def probe(service: Service) -> dict[str, dict[str, Any]]:
    """Per component: ok, latency in ms, and what was probed."""
    vector: list[Any] = []

    def embed() -> dict[str, Any]:
        vector.append(service.embedder.embed([PROBE_QUERY])[0])
        return {"dimension": int(len(vector[0]))}

    def search() -> dict[str, Any]:
        from rag_system.indexing.store import list_indexes

        names = list_indexes(service.db)
        if not names:
            return {"index": None, "rows": 0, "detail": "no index yet: nothing to search"}
        if not vector:
            raise RuntimeError("no probe vector (the embedder failed)")
        table = service.engine.table(names[0])
        rows = (table.table.search(vector[0], vector_column_name="vector").distance_type("cosine")
                .select(["chunk_id", "_distance"]).limit(1).to_list())
        return {"index": names[0], "rows": len(rows)}

    def llm() -> dict[str, Any]:
        chosen = service.registry.chosen()
        return {"chosen": chosen.name, "available": chosen.available, "model": chosen.model}

    return {"embed": _timed(embed), "search": _timed(search), "llm": _timed(llm)}
