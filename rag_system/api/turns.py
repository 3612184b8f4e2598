"""One chat turn as it happens: its steps, streamed text, outcome, and the record saved to the gateway.

The saved record is the contract's body for `POST /sessions/<id>/messages/save`:
`turn_id, question, answer, answer_source, citations, warnings, source_documents, steps,
token_usage, timings_ms, status (complete|error|cancelled), error`.
`steps` are the pipeline's events in order, except `token`; the first token
adds one `first_token {"at_ms"}` step instead, so a reloaded answer can show
that the writing phase was reached (a cancelled turn has no `complete`). The
`complete` step keeps only what the record does not already carry at its top
level (the inspector, route, backend...), so no answer is stored twice.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from rag_system.agent.pipeline import ChatRequest
from rag_system.api.options import ChatOptions

#: Fields of the `complete` event that the saved record holds at its top level.
_SAVED_AT_TOP = frozenset({"answer", "response", "answer_source", "citations", "source_documents",
                           "token_usage", "timings_ms"})


class TurnRecorder:
    """The API's record of the exchange in progress; `agent.types.Turn` is one message of the history."""

    def __init__(self, options: ChatOptions, request: ChatRequest) -> None:
        self.options = options
        self.request = request
        self.turn_id = options.turn_id or uuid.uuid4().hex
        self.steps: list[dict[str, Any]] = []
        self.tokens: list[str] = []
        self.complete: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.status = "running"
        self.started = time.perf_counter()

    def record(self, event: str, data: dict[str, Any]) -> None:
        if event == "token":
            if not self.tokens:
                at_ms = round((time.perf_counter() - self.started) * 1000, 1)
                self.steps.append({"type": "first_token", "data": {"at_ms": at_ms}})
            self.tokens.append(str(data.get("text", "")))
            return
        if event == "sources":  # the record holds them once (source_documents); the step says when
            self.steps.append({"type": event, "data": {"count": len(data.get("source_documents", []))}})
            return
        if event != "complete":
            self.steps.append({"type": event, "data": data})
            return
        self.steps.append({"type": event, "data": {k: v for k, v in data.items() if k not in _SAVED_AT_TOP}})
        self.complete = data
        self.status = "complete"

    def failed(self, code: str, message: str) -> dict[str, Any]:
        self.error = {"code": code, "message": message}
        self.steps.append({"type": "error", "data": self.error})
        self.status = "error"
        return self.error

    def cancelled(self) -> None:
        if self.status != "complete":  # it finished before we noticed: keep the whole answer
            self.status = "cancelled"
            self.error = {"code": "cancelled", "message": "the client disconnected before the answer was complete"}

    def record_for_gateway(self) -> dict[str, Any]:
        done = self.complete if self.status == "complete" else None
        elapsed = {"total_ms": round((time.perf_counter() - self.started) * 1000, 1)}
        return {
            "turn_id": self.turn_id,
            "question": self.options.query,
            "answer": done["answer"] if done else "".join(self.tokens),
            "answer_source": done.get("answer_source") if done else None,
            "citations": done.get("citations", []) if done else [],
            "warnings": done.get("warnings", []) if done else [],  # what was not done as asked (a skipped rerank)
            "source_documents": done.get("source_documents", []) if done else [],
            "steps": self.steps,
            "token_usage": done.get("token_usage", {}) if done else {},
            "timings_ms": done.get("timings_ms", elapsed) if done else elapsed,
            "status": self.status,
            "error": None if self.status == "complete" else self.error,
            # what was searched and how, kept with the turn (a rating's evaluation row replays it)
            "indexes": list(self.options.indexes),
            "options": dict(self.options.pipeline),
        }
