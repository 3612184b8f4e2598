"""localGPT's client against the gateway alone: the shapes it reads on reload and after a streamed turn.

localGPT's client renders a reloaded answer from `metadata.steps` (its own step objects), saves
every streamed turn itself with `{user_message, assistant_message, source_documents, steps}` and
reads `{session, user_message_id, ai_message_id}` back, and shows `error` as a string. Docent's
web app reads its own events from `metadata.events`. A real gateway, no RAG API.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from testkit.client import Client
from testkit.processes import GatewayProcess

SOURCES = [{"chunk_id": "c1", "document_id": "d" * 64, "document_name": f"{'d' * 64}_policy.txt", "text": "x"}]
EVENTS = [{"type": "analyze", "data": {}}, {"type": "retrieval_started", "data": {"k": 20}},
          {"type": "retrieval_done", "data": {"count": 3}},
          {"type": "retrieval_retry", "data": {"kept": "original", "original_evidence_score": 0.2}},
          {"type": "first_token", "data": {"at_ms": 12.0}}, {"type": "complete", "data": {"inspector": {"k": 1}}}]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    gw = GatewayProcess(tmp_path_factory.mktemp("lgw") / "data")
    gw.start(wait_s=30)
    yield gw
    gw.stop()


@pytest.fixture()
def client(gateway: GatewayProcess) -> Client:
    return gateway.client


def _session(client: Client) -> str:
    return client.post("/sessions", {"title": "New Chat", "model": "qwen3.5:9b"}).json["session_id"]


def _rag_save(client: Client, sid: str, question: str, answer: str) -> dict:
    turn = {"turn_id": uuid.uuid4().hex, "question": question, "answer": answer, "answer_source": "extractive",
            "citations": [{"n": 1, "chunk_id": "c1"}], "source_documents": SOURCES, "steps": EVENTS,
            "token_usage": {"stages": {}, "total": {"prompt": 0, "completion": 0}}, "timings_ms": {},
            "status": "complete", "error": None}
    reply = client.post(f"/sessions/{sid}/messages/save", turn)
    assert reply.status == 201, reply.body
    return reply.json


def _client_save(client: Client, sid: str, question: str, answer: str, steps: list | None = None):
    return client.post(f"/sessions/{sid}/messages/save", {
        "user_message": question, "assistant_message": answer, "source_documents": SOURCES, "steps": steps})


def test_a_reloaded_answer_has_localgpt_steps_and_docent_events(client: Client) -> None:
    sid = _session(client)
    _rag_save(client, sid, "What is the leave policy?", "Twenty days [1].")
    bot = client.get(f"/sessions/{sid}").json["messages"][1]
    meta = bot["metadata"]
    assert [e["type"] for e in meta["events"]] == [e["type"] for e in EVENTS]  # Docent's web app replays these
    steps = meta["steps"]
    assert all({"key", "label", "status", "details"} <= set(s) for s in steps), steps
    assert [s["key"] for s in steps] == ["analyze", "retrieval", "retry", "final"]
    assert all(s["status"] == "done" for s in steps)
    final = steps[-1]["details"]
    assert final["answer"] == "Twenty days [1]." and final["source_documents"][0]["document_name"] == "policy.txt"
    assert "undefined" not in steps[2]["details"] and "0.2" in steps[2]["details"]


def test_localgpt_save_after_the_rag_api_saved_matches_the_turn(client: Client) -> None:
    sid = _session(client)
    first = _rag_save(client, sid, "How long is notice?", "Thirty days [1].")
    own_steps = [{"key": "final", "label": "Final answer", "status": "done",
                  "details": {"answer": "Thirty days [1].", "source_documents": SOURCES}}]
    reply = _client_save(client, sid, "How long is notice?", "Thirty days [1].", own_steps)
    assert reply.status == 200, reply.body
    body = reply.json
    assert body["session"]["id"] == sid and body["session"]["message_count"] == 2
    assert (body["user_message_id"], body["ai_message_id"]) == (first["user_message_id"], first["ai_message_id"])
    messages = client.get(f"/sessions/{sid}").json["messages"]
    assert len(messages) == 2  # stored once
    assert messages[1]["metadata"]["steps"] == own_steps and messages[1]["metadata"]["events"]


def test_localgpt_save_first_then_the_rag_api_save_is_one_turn(client: Client) -> None:
    sid = _session(client)
    reply = _client_save(client, sid, "Who approves leave?", "The manager [1].")
    assert reply.status == 201, reply.body
    assert reply.json["session"]["title"] == "Who approves leave?" and reply.json["session"]["message_count"] == 2
    turn = {"turn_id": uuid.uuid4().hex, "question": "Who approves leave?", "answer": "The manager [1].",
            "steps": EVENTS, "citations": [{"n": 1}], "status": "complete"}
    second = client.post(f"/sessions/{sid}/messages/save", turn)
    assert second.status == 200 and second.json["duplicate"] is True
    assert second.json["ai_message_id"] == reply.json["ai_message_id"]
    messages = client.get(f"/sessions/{sid}").json["messages"]
    assert len(messages) == 2
    meta = messages[1]["metadata"]
    assert meta["citations"] == [{"n": 1}] and meta["events"] and meta["steps"][-1]["key"] == "final"
    assert meta["source_documents"][0]["document_name"] == "policy.txt"
    # a different turn with the same question is a new turn
    assert _client_save(client, sid, "Who approves leave?", "HR does.").status == 201
    assert len(client.get(f"/sessions/{sid}").json["messages"]) == 4


def test_localgpt_save_rejects_a_bad_body_with_a_string_error(client: Client) -> None:
    sid = _session(client)
    reply = client.post(f"/sessions/{sid}/messages/save", {"user_message": "", "assistant_message": "x"})
    assert reply.status == 400
    assert isinstance(reply.json["error"], str) and "user_message" in reply.json["error"]
    assert reply.json["code"] == "invalid_field" and reply.json["message"] == reply.json["error"]
    missing = client.post("/sessions/nope/messages/save", {"user_message": "q", "assistant_message": "a"})
    assert missing.status == 404 and isinstance(missing.json["error"], str) and missing.json["code"]


def test_every_error_is_a_string_next_to_its_code(client: Client) -> None:
    for reply in (client.get("/sessions/missing"), client.get("/nowhere"), client.post("/indexes", {"name": 3}),
                  client.call("PUT", "/sessions")):
        assert reply.status >= 400
        assert isinstance(reply.json["error"], str) and reply.json["error"], reply.body
        assert isinstance(reply.json["code"], str) and reply.json["code"], reply.body
        assert "[object" not in reply.json["error"]


def test_sessions_cleanup_removes_only_empty_sessions(client: Client) -> None:
    empty, used = _session(client), _session(client)
    _client_save(client, used, "Kept?", "Yes.")
    reply = client.get("/sessions/cleanup")
    assert reply.status == 200, reply.body
    assert empty in reply.json["deleted"] and used not in reply.json["deleted"]
    assert reply.json["cleanup_count"] == len(reply.json["deleted"])
    assert client.get(f"/sessions/{empty}").status == 404 and client.get(f"/sessions/{used}").status == 200
    assert client.get("/sessions/cleanup").json["cleanup_count"] == 0


def test_health_has_localgpt_fields_when_the_rag_api_is_down(client: Client) -> None:
    _session(client)
    body = client.get("/health").json
    assert body["ollama_running"] is False and body["available_models"] == []
    stats = body["database_stats"]
    assert stats["total_sessions"] == stats["sessions"] and stats["most_used_model"] == "qwen3.5:9b"


def test_the_same_question_and_answer_twice_are_two_turns_in_either_order(client: Client) -> None:
    sid = _session(client)
    for _ in range(2):  # the client's save first, then the RAG API's
        assert _client_save(client, sid, "Same?", "Same.").status == 201
        again = client.post(f"/sessions/{sid}/messages/save", {"turn_id": uuid.uuid4().hex, "question": "Same?",
                                                               "answer": "Same.", "steps": EVENTS})
        assert again.status == 200 and again.json["duplicate"] is True
    for _ in range(2):  # the RAG API's first, then the client's
        _rag_save(client, sid, "Same?", "Same.")
        assert _client_save(client, sid, "Same?", "Same.").status == 200
    messages = client.get(f"/sessions/{sid}").json["messages"]
    assert len(messages) == 8 and all(m["metadata"].get("events") for m in messages[1::2])


def _client_plan(answer: str) -> list[dict]:
    """The steps localGPT's client saves after a streamed turn: its whole fixed plan, every step ticked
    done at `complete` (session-chat.tsx), whatever ran."""
    details = {"decompose": [], "retrieval": "Retrieval complete.", "retry": "", "rerank": "Reranking results...",
               "expand": "Context expansion complete.", "answer": "Answering sub-queries...", "synthesize": ""}
    labels = {"analyze": "Analyzing user question", "decompose": "Generating sub-queries",
              "retrieval": "Retrieving context", "retry": "Rechecking weak evidence", "rerank": "Reranking results",
              "expand": "Expanding context window", "answer": "Answering sub-queries",
              "synthesize": "Putting everything together"}
    steps = [{"key": k, "label": label, "status": "done", "details": details.get(k, "")} for k, label in labels.items()]
    return [*steps, {"key": "final", "label": "Final answer", "status": "done",
                     "details": {"answer": answer, "source_documents": SOURCES}}]


def test_a_rerank_that_did_not_run_is_shown_as_skipped_with_a_warning(client: Client) -> None:
    """localGPT's default `ai_rerank: true` on an install without a reranker: the RAG API emits
    `rerank_skipped` and a warning; the reloaded steps (the client's own, or derived) must not tick a
    rerank, nor the phases that never ran, and the warning is there for the client to read."""
    why = "no RERANKER_MODEL is configured"
    events = [{"type": "analyze", "data": {}}, {"type": "retrieval_started", "data": {}},
              {"type": "retrieval_done", "data": {"count": 3}}, {"type": "rerank_skipped", "data": {"reason": why}},
              {"type": "context_expand_started", "data": {}}, {"type": "context_expand_done", "data": {"count": 3}},
              {"type": "complete", "data": {}}]
    for client_saves in (True, False):
        sid = _session(client)
        question, answer = f"Who approves leave ({client_saves})?", "The manager [1]."
        turn = {"turn_id": uuid.uuid4().hex, "question": question, "answer": answer, "answer_source": "extractive",
                "source_documents": SOURCES, "steps": events, "status": "complete", "error": None,
                "warnings": [f"reranking skipped: {why}"]}
        assert client.post(f"/sessions/{sid}/messages/save", turn).status == 201
        if client_saves:
            assert _client_save(client, sid, question, answer, _client_plan(answer)).status == 200
        meta = client.get(f"/sessions/{sid}").json["messages"][1]["metadata"]
        steps = {s["key"]: s for s in meta["steps"]}
        assert list(steps) == (["analyze", "retrieval", "rerank", "expand", "synthesize", "final"] if client_saves
                               else ["analyze", "retrieval", "rerank", "expand", "final"]), meta["steps"]
        assert steps["rerank"]["label"] == "Reranking skipped" and why in steps["rerank"]["details"]
        assert "complete" not in steps["rerank"]["details"].lower()
        assert any("reranking skipped" in w for w in meta["warnings"]), meta
