"""The turn record posted to the gateway, for complete, failed and cancelled turns."""

from __future__ import annotations

from common.errors import status_of
from rag_system.agent.pipeline import ChatRequest
from rag_system.api.options import parse_chat
from rag_system.api.turns import TurnRecorder
from rag_system.indexing.store import IndexNotFoundError
from rag_system.retrieval.types import RetrievalOptions

KEYS = {"turn_id", "question", "answer", "answer_source", "citations", "warnings", "source_documents", "steps",
        "token_usage", "timings_ms", "status", "error", "indexes", "options"}


def turn(**body) -> TurnRecorder:  # type: ignore[no-untyped-def]
    options = parse_chat({"query": "What is assumed?", "session_id": "s1", **body})
    return TurnRecorder(options, ChatRequest(options.query, options.indexes, RetrievalOptions()))


def test_complete_turn_carries_the_answer_and_steps_without_tokens():
    t = turn(turn_id="t-1")
    t.record("analyze", {"query": "q"})
    t.record("token", {"text": "A "})
    t.record("complete", {"answer": "A [1].", "answer_source": "llm", "citations": [{"n": 1}],
                          "source_documents": [{"n": 1}], "token_usage": {"total": {}}, "timings_ms": {"total_ms": 3},
                          "inspector": {"kind": "qa"}})
    record = t.record_for_gateway()
    assert set(record) == KEYS and record["turn_id"] == "t-1"
    assert record["status"] == "complete" and record["error"] is None and record["answer"] == "A [1]."
    assert [s["type"] for s in record["steps"]] == ["analyze", "first_token", "complete"]
    assert record["steps"][1]["data"]["at_ms"] >= 0
    # The answer is stored once, at the top level; the complete step keeps what only it carries.
    assert record["steps"][2]["data"] == {"inspector": {"kind": "qa"}}


def test_cancelled_turn_keeps_the_partial_text():
    t = turn()
    t.record("analyze", {})
    t.record("token", {"text": "Partial "})
    t.record("token", {"text": "answer"})
    t.cancelled()
    record = t.record_for_gateway()
    assert len(record["turn_id"]) == 32
    assert record["status"] == "cancelled" and record["answer"] == "Partial answer"
    assert [s["type"] for s in record["steps"]] == ["analyze", "first_token"]  # one marker, not one per token
    assert record["answer_source"] is None and record["error"]["code"] == "cancelled"
    assert record["timings_ms"]["total_ms"] >= 0


def test_a_turn_that_completed_stays_complete_when_the_client_leaves_late():
    t = turn()
    t.record("complete", {"answer": "Done.", "answer_source": "extractive"})
    t.cancelled()
    assert t.record_for_gateway()["status"] == "complete"


def test_failed_turn_records_the_error_as_a_step():
    t = turn()
    t.record("analyze", {})
    status, code = status_of(IndexNotFoundError("index 'x' does not exist"))
    t.failed(code, "index 'x' does not exist")
    record = t.record_for_gateway()
    assert status == 404 and record["status"] == "error" and record["error"]["code"] == "index_not_found"
    assert record["steps"][-1] == {"type": "error", "data": record["error"]}
