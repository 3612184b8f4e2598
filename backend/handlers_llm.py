"""localGPT's plain LLM chat: `POST /chat` and `POST /chat/stream` (its "LLM chat" tile).

No session and no index: the message, the conversation the client keeps, and a model name. The
gateway asks the RAG API with no index, so its routing answers directly and the configured model
writes the reply (`rag_system/agent/direct.py`): no citations, `answer_source: "direct"`, and a
plain "no language model is configured" on an extractive-only install. The stream is the RAG
API's, relayed frame by frame (with localGPT's `response` added to `complete`), so the browser
needs only the gateway's origin for this tile.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from backend.app import App
from backend.handlers_chat import message_of
from backend.web import Request
from common.errors import ApiError, error_body
from common.http import Response
from common.options import MAX_HISTORY, MAX_MODEL_CHARS
from common.sse import frame, read_frames

log = logging.getLogger(__name__)


def _payload(req: Request) -> dict[str, Any]:
    data = req.json()
    message = message_of(data)
    history = data.get("conversation_history") or []
    if not isinstance(history, list) or len(history) > MAX_HISTORY:
        raise ApiError(400, "invalid_field", f"'conversation_history' must be a list of at most {MAX_HISTORY} messages")
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or len(model) > MAX_MODEL_CHARS):
        raise ApiError(400, "invalid_field", "'model' must be a string")
    # The RAG API validates each history item (role, content) and answers a bad one with a 400.
    payload: dict[str, Any] = {"query": message, "indexes": [], "conversation_history": history}
    if model:
        payload["model"] = model
    return payload


def chat(app: App, req: Request) -> Response:
    payload = _payload(req)
    result = app.rag.chat(payload, req.request_id)
    answer = result.get("answer")
    if not isinstance(answer, str):
        raise ApiError(502, "rag_api_error", "the RAG API's /chat response has no answer")
    return Response.json({"response": answer, "model": result.get("model") or payload.get("model", ""),
                          "message_count": len(payload["conversation_history"]) + 2,
                          "answer_source": result.get("answer_source"), "backend": result.get("backend"),
                          "warnings": result.get("warnings", []), "token_usage": result.get("token_usage")})


def chat_stream(app: App, req: Request) -> Response:
    payload = _payload(req)
    upstream = app.rag.open_chat_stream(payload, req.request_id)  # a failure here is a JSON error
    return Response(200, _relay(upstream, req.request_id), content_type="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _relay(upstream: Any, request_id: str) -> Iterator[bytes]:
    """The RAG API's frames as they come; a stream that breaks ends with one `error` frame."""
    ended = False
    try:
        for event, data in read_frames(upstream):
            if event == "complete":
                data = {**data, "response": data.get("answer", "")}
            ended = event in ("complete", "error")
            yield frame(event, data)
            if ended:
                return
    except (OSError, ValueError) as exc:
        log.warning("relayed chat stream broke (request %s): %s", request_id, exc)
    finally:
        upstream.close()
    if not ended:
        yield frame("error", error_body("rag_api_error", "the RAG API ended the stream without an answer"))
