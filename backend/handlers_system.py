"""`GET /health`, `GET /models`, `GET /metrics`."""

from __future__ import annotations

from typing import Any

from backend.access import can_read_index
from backend.app import App
from backend.web import Request
from common.errors import ApiError
from common.http import Response


def health(app: App, req: Request) -> Response:
    """The gateway answers 200 while it can read its database; the RAG API's state is reported, not required."""
    rag: dict[str, Any] = {"url": app.config.rag_api_url}
    try:
        status, body = app.rag.health()
        rag.update(reachable=True, status=body.get("status", "ok" if status == 200 else "not_ready"),
                   components=body.get("components", {}))
        rag.update({k: body[k] for k in ("replicas", "writer") if k in body})  # scale-out: each replica's state
    except ApiError as err:
        rag.update(reachable=False, status="unavailable", error=err.message)
    ok = rag.get("status") == "ok"
    generation, ollama = _generation(app, req) if rag.get("reachable") else ([], False)
    stats = app.store.stats()
    # localGPT's client reads these names: whether Ollama answers, the models it can chat with, its counters
    legacy_stats = {"total_sessions": stats["sessions"], "total_messages": stats["messages"],
                    "most_used_model": app.store.most_used_model()}
    return Response.json({"status": "ok" if ok else "degraded", "service": "gateway",
                          "database_stats": {**stats, **legacy_stats}, "rag_api": rag,
                          "ollama_running": ollama, "available_models": generation})


def _generation(app: App, req: Request) -> tuple[list[str], bool]:
    """(the models that can answer, whether an Ollama backend is reachable); nothing when the RAG API cannot say."""
    try:
        data = app.rag.models(req.request_id)
    except ApiError:
        return [], False
    backends = [b for b in data.get("backends", []) if isinstance(b, dict)]
    generation = sorted({_label(b) for b in backends if b.get("available") and b.get("name") != "extractive"})
    return generation, any(b.get("name") == "ollama" and b.get("available") for b in backends)


def models(app: App, req: Request) -> Response:
    """The RAG API's `/models`, plus localGPT's `generation_models` / `embedding_models` lists."""
    data = app.rag.models(req.request_id)
    backends = [b for b in data.get("backends", []) if isinstance(b, dict)]
    generation = sorted({_label(b) for b in backends if b.get("available")})
    embedding = [data["embedder"]] if data.get("embedder") else []
    # The RAG API lists every index to the gateway (a service caller); a person sees only those they may read.
    indexes = [row for row in data.get("indexes", []) if isinstance(row, dict)
               and can_read_index(app.store, req.principal, str(row.get("index")))]
    return Response.json({**data, "indexes": indexes, "generation_models": generation,
                          "embedding_models": embedding})


def metrics(app: App, req: Request) -> Response:
    text, content_type = app.metrics.render(app.store.stats(), req.headers.get("Accept", ""))
    return Response(200, text, content_type=content_type)


def _label(backend: dict[str, Any]) -> str:
    """A backend's model name, or the backend's own name when it has no model (extractive)."""
    model = backend.get("model")
    return str(model) if model and model != "none" else str(backend.get("name"))
