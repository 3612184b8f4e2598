"""`model` on a chat request: a model a backend serves here, or a warning that says what answered instead.

localGPT's clients send a model name with every question (`qwen3.5:9b` by default). Ollama and
OpenAI-compatible servers take it per request; the embedded llama.cpp backend has one model. A
name no available backend serves is not an error (the question still deserves an answer) but it
is never ignored silently: the answer's `warnings` say which model was asked for and that the
configured one answered.
"""

from __future__ import annotations

from typing import Any

from rag_system.generation.registry import AUTO_ORDER, BackendRegistry

#: Backends that pass `model` on to their server, so any name the server knows works.
PER_REQUEST_MODEL = ("ollama", "openai")


def model_warnings(registry: BackendRegistry, model: str | None) -> list[str]:
    if not model:
        return []
    statuses = [s for s in registry.statuses() if s.available]
    if any(s.model == model or s.name in PER_REQUEST_MODEL for s in statuses):
        return []
    serving = next((f"{s.name} ({s.model})" if s.model else s.name for s in statuses if s.name != "extractive"),
                   "the extractive backend (no language model is configured)")
    return [f"model {model!r} is not served here; the answer comes from {serving}"]


def with_session_model(pipeline: dict[str, Any], model: str) -> dict[str, Any]:
    """The request's options with its conversation's model (`model_used`, set when the session was made)
    when the request names no model and no backend itself: a session keeps answering with its model."""
    if not model or pipeline.get("model") or pipeline.get("backend"):
        return pipeline
    return {**pipeline, "backend": model} if model in AUTO_ORDER else {**pipeline, "model": model}
