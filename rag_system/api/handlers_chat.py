"""`/chat`, `/chat/stream` and `/retrieve`: thin wrappers around the query pipeline.

Both chat routes share one code path (`QueryPipeline.run` with an `emit`
callback); `/chat` collects the events, `/chat/stream` writes them as SSE.
A stream always starts once the body is valid, so failures found while
answering (an index that does not exist, an embedder mismatch) arrive as
one terminal `error` frame; `/chat` answers them with the matching 4xx.
"""

from __future__ import annotations

import logging
from typing import Any

from common.errors import ApiError, error_body, status_of
from common.http import Response
from common.sse import SSEStream
from rag_system.api.building import building_warnings
from rag_system.api.model_choice import model_warnings, with_session_model
from rag_system.api.messages import Request, Stream
from rag_system.api.options import ChatOptions, parse_chat, parse_retrieve
from rag_system.api.turns import TurnRecorder
from rag_system.generation.synthesis import Cancelled
from rag_system.retrieval.inspector import retrieval_trace

log = logging.getLogger(__name__)


def _prepare(request: Request) -> tuple[ChatOptions, TurnRecorder]:
    service = request.service
    options = parse_chat(service.names.resolve_body(request.json(), request.caller.may_read))
    request.caller.require_indexes(options.indexes)  # before anything is retrieved
    request.caller.require_session(options.session_id)
    history, warning, model = (options.history, None, "") if options.history is not None else ((), None, "")
    if options.history is None and options.session_id:
        history, warning, model = service.conversation(options.session_id, options.turn_id)
    chosen = with_session_model(options.pipeline, model)
    warnings = [*options.warnings, *building_warnings(service.jobs, options.indexes, service.index_sizes),
                *model_warnings(service.registry, chosen.get("model"))]
    if warning:
        warnings.append(warning)
    pipeline = service.pipeline
    try:
        chat_request = pipeline.request(options.query, options.indexes, session_id=options.session_id,
                                        history=history, warnings=tuple(warnings), **chosen)
    except ValueError as exc:
        raise ApiError(400, "invalid_option", str(exc)) from exc
    log.debug("chat %s: %d indexes, options %s", request.request_id, len(options.indexes), options.pipeline)
    return options, TurnRecorder(options, chat_request)


def _save(request: Request, turn: TurnRecorder) -> None:
    if turn.options.session_id:
        request.service.saver.submit(turn.options.session_id, turn.record_for_gateway())


def _error_message(exc: BaseException, status: int, request_id: str) -> str:
    if status >= 500:
        return f"internal error; quote request id {request_id} when reporting it"
    return str(exc)


def chat(request: Request) -> Response:
    options, turn = _prepare(request)
    try:
        response = request.service.pipeline.run(turn.request, turn.record, None)
    except Exception as exc:
        status, code = status_of(exc)
        if status >= 500:
            log.exception("chat failed", extra={"request_id": request.request_id})
        turn.failed(code, _error_message(exc, status, request.request_id))
        _save(request, turn)
        raise
    payload = turn.complete if turn.complete is not None else response.to_json()
    steps = [s for s in turn.steps if s["type"] != "complete"]  # the complete event is the payload itself
    payload = dict(payload, turn_id=turn.turn_id, steps=steps)
    _save(request, turn)
    return Response(200, payload)


def chat_stream(request: Request) -> Stream:
    options, turn = _prepare(request)
    pipeline = request.service.pipeline

    def run(sse: SSEStream) -> None:
        def emit(event: str, data: dict[str, Any]) -> None:
            turn.record(event, data)
            if event == "complete":
                sse.send(event, dict(data, turn_id=turn.turn_id))
                return
            if not sse.send(event, data) or sse.cancel.is_set():
                raise Cancelled()

        try:
            pipeline.run(turn.request, emit, sse.cancel)
            if turn.complete is None:  # defensive: the pipeline always ends with `complete`
                raise RuntimeError("the pipeline ended without a complete event")
        except Cancelled:
            turn.cancelled()
            log.info("chat stream cancelled by the client", extra={"request_id": request.request_id})
        except Exception as exc:
            status, code = status_of(exc)
            if status >= 500:
                log.exception("chat stream failed", extra={"request_id": request.request_id})
            error = turn.failed(code, _error_message(exc, status, request.request_id))
            sse.send("error", error_body(error["code"], error["message"], turn_id=turn.turn_id))
        finally:
            if sse.cancel.is_set() and turn.status == "running":
                turn.cancelled()
            _save(request, turn)

    return Stream(run)


def retrieve(request: Request) -> Response:
    options = parse_retrieve(request.service.names.resolve_body(request.json(), request.caller.may_read))
    request.caller.require_indexes([options.index])
    engine = request.service.engine
    result = engine.retrieve(options.index, options.query, engine.options(**options.retrieval))
    return Response(200, {"index": options.index, **result.to_json(), "inspector": retrieval_trace(result, options.index)})
