"""`/health`, `/models`, `/metrics`: what the service is running on and whether it is ready."""

from __future__ import annotations

import logging
from typing import Any

from common.http import Response
from rag_system.api.messages import Request
from rag_system.api.access import Caller
from rag_system.indexing.embedder_choice import index_embedders
from rag_system.embedding.registry import listing as embedder_listing

log = logging.getLogger(__name__)


def _safe(part: str, compute: Any) -> dict[str, Any]:
    try:
        return compute()
    except Exception as exc:  # one broken component must not hide the others
        log.warning("health: %s check failed: %s", part, exc)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def health(request: Request) -> Response:
    service = request.service
    embedder = service.embedder

    def llm() -> dict[str, Any]:
        return {"ok": True, "chosen": service.registry.chosen().name,
                "configured": service.settings.llm_backend,
                "backends": [s.to_json() for s in service.registry.statuses()],
                "preload": dict(service.llm_loading)}

    def jobs() -> dict[str, Any]:
        return {"ok": service.jobs.alive, **service.jobs.counts()}

    components = {
        "embedder": {"ok": True, "model": embedder.identity.model_id, "dimension": embedder.dimension,
                     "precision": embedder.precision},
        "reranker": _safe("reranker", service.reranker_status),
        "llm": _safe("llm", llm),
        "store": _safe("store", service.store_status),
        "jobs": _safe("jobs", jobs),
    }
    # The extractive backend always answers, so an LLM problem degrades answers but never readiness.
    ready = all(components[c].get("ok") for c in ("embedder", "store", "jobs"))
    body: dict[str, Any] = {"role": service.settings.role, "components": components}
    if request.query.get("deep", ["0"])[-1].lower() in ("1", "true", "yes"):
        from rag_system.api.deep_health import probe

        body["deep"] = probe(service)
        ready = ready and body["deep"]["embed"]["ok"] and body["deep"]["search"]["ok"]
    return Response(200 if ready else 503, {"status": "ok" if ready else "unavailable", **body})


def models(request: Request) -> Response:
    service = request.service
    statuses = service.registry.statuses()
    backends = [{"name": s.name, "available": s.available, "model": s.model, "detail": s.detail,
                 "context_window": s.context_window} for s in statuses]
    return Response(200, {
        "backends": backends, "default": service.registry.chosen().name,
        "embedder": service.embedder.identity.model_id,
        "reranker": service.settings.reranker_model or None,
        # The names of the product we replace, for clients that read them.
        "generation_models": sorted({s.model for s in statuses if s.available and s.model and s.name != "extractive"}),
        "embedding_models": [service.embedder.identity.model_id],
        # Per-index choice (POST /index {"embedder": name}); "default" marks the one new indexes get.
        "embedders": embedder_listing(service.settings),
        **index_models(service, request.caller),
    })


def index_models(service: Any, caller: Caller) -> dict[str, Any]:
    """Which embedder each index the caller may read was built with, and the reranker a question may use."""
    settings = service.settings
    return {"indexes": [row for row in index_embedders(service.engine.db, settings)
                        if caller.may_read(str(row["index"]))],
            "rerank": {"model": settings.reranker_model or None, "default": settings.rerank,
                       "depth": settings.rerank_depth}}


def metrics(request: Request) -> Response:
    text, content_type = request.service.metrics.render(request.headers.get("Accept", ""))
    return Response(200, text, content_type=content_type)
