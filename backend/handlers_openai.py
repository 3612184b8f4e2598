"""An OpenAI-compatible door: `GET /v1/models` and `POST /v1/chat/completions` on the gateway.

RAGFlow, AnythingLLM and Open WebUI users point their tools at an OpenAI base URL. Here the
model name picks what is searched: `docent/<index name or id>` (one index), `docent` (no
index: general chat with the configured model). The answer is the RAG API's checked answer,
with its `[n]` markers in the text and its citations in the `docent` extension field of the
completion (and of a stream's last chunk). A stream sends the model's tokens as deltas as the RAG
API produces them; the checks run on the whole answer, so when they repair or replace what was
streamed, a last delta says so and carries the checked answer (and `docent.answer` holds it),
since an OpenAI stream cannot take text back. An extractive answer is produced whole and is
sent whole. Auth is the gateway's bearer token, as for every route.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from backend.access import can_read_index
from backend.app import App
from backend.principal import Principal
from backend.handlers_chat import display_names
from backend.openai_sources import sources, sources_text, url_annotations
from backend.web import Request, public_base
from common.errors import ApiError, DomainError
from common.http import Response
from common.options import MAX_HISTORY, MAX_QUERY_CHARS, MAX_TOKENS
from common.sse import read_frames

PREFIX = "docent"
_EXTENSION = ("citations", "source_documents", "answer_source", "validation", "warnings", "refusal_reason",
              "confidence", "backend", "turn_id", "route")


def openai_error(err: DomainError) -> Response:
    """OpenAI's error shape for the door's routes (its clients read `error.message`): the same status and code."""
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}.get(
        err.status, "api_error")
    body = {"error": {"message": str(err.to_json().get("message") or err), "type": kind, "code": err.code,
                      "param": None}}
    return Response(err.status, body, headers=dict(err.headers))


def list_models(app: App, req: Request) -> Response:
    created = int(time.time())
    models = [{"id": PREFIX, "object": "model", "created": created, "owned_by": "docent",
               "description": "general chat with the configured model (no documents)"}]
    for index in app.store.list_indexes():
        if not can_read_index(app.store, req.principal, index["id"]):
            continue
        models.append({"id": f"{PREFIX}/{index['name']}", "object": "model", "created": created,
                       "owned_by": "docent", "index_id": index["id"],
                       "status": index["metadata"].get("status")})
    return Response.json({"object": "list", "data": models})


def _indexes(app: App, model: str, who: Principal) -> list[str]:
    if model == PREFIX:
        return []
    if not model.startswith(f"{PREFIX}/") or not model[len(PREFIX) + 1:].strip():
        raise ApiError(404, "model_not_found", f"model {model!r} does not exist; use 'docent' or "
                       "'docent/<index name>' (GET /v1/models lists them)")
    wanted = model[len(PREFIX) + 1:].strip()
    mine = [i for i in app.store.list_indexes() if can_read_index(app.store, who, i["id"])]
    found = [i for i in mine if i["id"] == wanted]
    found = found or [i for i in mine if i["name"].casefold() == wanted.casefold()]
    if not found:
        raise ApiError(404, "model_not_found", f"no index named {wanted!r}; GET /v1/models lists the models")
    if len(found) > 1:
        raise ApiError(400, "ambiguous_model", f"{len(found)} indexes are named {wanted!r}; use "
                       f"'docent/<id>' with one of {', '.join(i['id'] for i in found)}")
    return [found[0]["id"]]


def _payload(app: App, data: dict[str, Any], who: Principal) -> tuple[dict[str, Any], str]:
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "invalid_field", "'model' must be a string such as 'docent/<index name>'")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "invalid_field", "'messages' must be a non-empty list of {role, content}")
    turns: list[dict[str, str]] = []
    for item in messages:
        role = item.get("role") if isinstance(item, dict) else None
        content = _text(item.get("content")) if isinstance(item, dict) else None
        if role not in ("system", "user", "assistant", "developer") or content is None:
            raise ApiError(400, "invalid_field", "each message must be {role: system|user|assistant, content: text}")
        if role in ("user", "assistant"):
            turns.append({"role": role, "content": content})
    if not turns or turns[-1]["role"] != "user" or not turns[-1]["content"].strip():
        raise ApiError(400, "invalid_field", "the last message must be the user's question")
    if len(turns[-1]["content"]) > MAX_QUERY_CHARS:
        raise ApiError(400, "invalid_field", f"the question is longer than {MAX_QUERY_CHARS} characters")
    payload: dict[str, Any] = {"query": turns[-1]["content"], "indexes": _indexes(app, model, who),
                               "conversation_history": turns[:-1][-MAX_HISTORY:]}
    if isinstance(data.get("backend"), str):  # Docent's extension (`extra_body`): the RAG API checks the name
        payload["backend"] = data["backend"]
    max_tokens = data.get("max_tokens", data.get("max_completion_tokens"))
    if isinstance(max_tokens, int) and MAX_TOKENS.accepts(max_tokens):
        payload["max_tokens"] = max_tokens
    return payload, model


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(p for p in parts if isinstance(p, str)) if parts else None
    return None


def _extension(result: dict[str, Any], ignored_system: bool, base_url: str) -> dict[str, Any]:
    ext = {k: result.get(k) for k in _EXTENSION if k in result}
    ext["sources"] = sources(result.get("citations") or [], base_url)
    if ignored_system:
        ext["warnings"] = [*(ext.get("warnings") or []),
                           "system messages are not used: Docent's answering rules are fixed (it cites its sources)"]
    return ext


def _usage(result: dict[str, Any]) -> dict[str, int]:
    total = (result.get("token_usage") or {}).get("total") or {}
    prompt, completion = int(total.get("prompt", 0) or 0), int(total.get("completion", 0) or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def chat_completions(app: App, req: Request) -> Response:
    data = req.json()
    payload, model = _payload(app, data, req.principal)
    audit = {"indexes": payload["indexes"]}
    system = any(isinstance(m, dict) and m.get("role") in ("system", "developer") for m in data["messages"])
    created, cid = int(time.time()), f"chatcmpl-{uuid.uuid4().hex}"
    base = public_base(req)
    if data.get("stream") is True:
        upstream = app.rag.open_chat_stream(payload, req.request_id)
        return Response(200, _stream(upstream, cid, created, model, system, base), content_type="text/event-stream",
                        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}, audit=audit)
    result = display_names(app.rag.chat(payload, req.request_id))
    citations = result.get("citations") or []
    content = result.get("answer", "") + sources_text(citations)
    message = {"role": "assistant", "content": content, "annotations": url_annotations(content, citations, base)}
    return Response.json({
        "id": cid, "object": "chat.completion", "created": created, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(result), PREFIX: _extension(result, system, base)}, audit=audit)


def _chunk(cid: str, created: int, model: str, delta: dict[str, Any], finish: str | None,
           **extra: Any) -> bytes:
    body = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


def _stream(upstream: Any, cid: str, created: int, model: str, system: bool, base: str) -> Iterator[bytes]:
    """OpenAI's chunk stream: the role, a delta per token, the checked answer if it differs, the sources list
    (with the annotations of the checked answer's markers), then usage and citations."""
    streamed: list[str] = []
    try:
        yield _chunk(cid, created, model, {"role": "assistant", "content": ""}, None)
        for event, data in read_frames(upstream):
            if event == "error":
                message = data.get("message") or data.get("error") or "the answer could not be produced"
                yield f"data: {json.dumps({'error': {'message': message, 'code': data.get('code')}})}\n\n".encode()
                break
            if event == "token" and isinstance(data.get("text"), str) and data["text"]:
                streamed.append(data["text"])
                yield _chunk(cid, created, model, {"content": data["text"]}, None)
                continue
            if event != "complete":
                continue
            result = display_names(data)
            answer, citations = result.get("answer", ""), result.get("citations") or []
            tail, ext = _after_tokens("".join(streamed), answer), _extension(result, system, base)
            ext["answer"] = answer  # the checked answer, whatever the deltas said
            if streamed and tail:
                ext["streamed_draft_replaced"] = True
                ext["warnings"] = [*(ext.get("warnings") or []), "the streamed draft did not pass Docent's checks "
                                   f"as written ({result.get('answer_source')}): the checked answer follows it"]
            if tail:
                yield _chunk(cid, created, model, {"content": tail}, None)
            listed = sources_text(citations)
            if listed:  # the markers of the checked answer (the last text before the list) get their annotations
                content = "".join(streamed) + tail + listed
                start = len(content) - len(listed) - len(answer) if tail or not streamed else 0
                yield _chunk(cid, created, model, {"content": listed,
                                                   "annotations": url_annotations(content, citations, base, max(start, 0))},
                             None)
            yield _chunk(cid, created, model, {}, "stop", usage=_usage(result), **{PREFIX: ext})
            break
    except (OSError, ValueError):
        message = "the RAG API ended the stream without an answer"
        yield f"data: {json.dumps({'error': {'message': message, 'code': 'rag_api_error'}})}\n\n".encode()
    finally:
        upstream.close()
    yield b"data: [DONE]\n\n"


def _after_tokens(streamed: str, answer: str) -> str:
    """What still has to be sent once the checked `answer` is known: nothing when the tokens already
    said it (up to spacing), the whole answer when nothing was streamed, else the checked answer after
    a line that says the draft above was not kept."""
    if not streamed:
        return answer
    if " ".join(streamed.split()) == " ".join(answer.split()):
        return ""
    return f"\n\n---\nChecked answer (the draft above was not kept as written):\n\n{answer}"
