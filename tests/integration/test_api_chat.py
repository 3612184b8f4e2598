"""Chat over real HTTP: SSE event order, one terminal event, saved turns, disconnects, isolation."""

from __future__ import annotations

import socket
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from testkit.client import read_events
from tests.integration.api_support import (
    QUESTION,
    SAVE_KEYS,
    api_settings,
    build,
    fake_gateway,
    running_api,
    write_docs,
)

TERMINAL = ("complete", "error")


@pytest.fixture(scope="module")
def env(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("api-chat")
    with fake_gateway() as (gateway_url, saved):
        settings = api_settings(root / "data", DOCENT_GATEWAY_URL=gateway_url, DOCENT_API_TOKEN="tok",
                                DOCENT_SSE_HEARTBEAT_S="0.3")
        with running_api(settings, embedder, token="tok") as api:
            docs = write_docs(api.uploads / "docs")
            job, _ = build(api, "kb", [str(docs)])
            assert job["state"] == "done"
            yield api, saved


def names(events):  # type: ignore[no-untyped-def]
    return [e for e, _ in events]


def one_terminal(events):  # type: ignore[no-untyped-def]
    terminal = [e for e in names(events) if e in TERMINAL]
    assert len(terminal) == 1 and names(events)[-1] == terminal[0], names(events)
    return events[-1]


def test_direct_answer_stream_order(env):
    api, _ = env
    events = api.stream("/chat/stream", {"query": "hello", "index": "kb", "backend": "extractive"})
    assert names(events) == ["analyze", "direct_answer", "complete"]
    assert events[-1][1]["answer_source"] == "direct"


def test_retrieved_answer_stream_order(env):
    api, _ = env
    events = api.stream("/chat/stream", {"query": QUESTION, "index": "kb", "backend": "extractive"})
    order = names(events)
    assert order[:3] == ["analyze", "retrieval_started", "retrieval_done"]
    _, payload = one_terminal(events)
    assert order[-1] == "complete" and "token" not in order
    assert payload["answer_source"] == "extractive" and payload["citations"]
    assert payload["citations"][0]["document_name"] == "quic-transport.txt"
    assert {"answer", "answer_source", "citations", "source_documents", "token_usage", "timings_ms", "route",
            "backend", "model", "validation", "refusal_reason", "sub_queries", "warnings", "cached",
            "evidence_score"} <= set(payload)


def test_refusal_stream_order(env):
    api, _ = env
    events = api.stream("/chat/stream", {"query": "What is the capital of Mongolia?", "index": "kb",
                                         "backend": "extractive"})
    order = names(events)
    assert order[:3] == ["analyze", "retrieval_started", "retrieval_done"]
    assert order.index("refusal") < order.index("complete")
    _, payload = one_terminal(events)
    assert payload["answer_source"] == "refusal" and payload["citations"] == []


def test_missing_index_is_an_error_frame_on_the_stream_and_404_on_chat(env):
    api, _ = env
    events = api.stream("/chat/stream", {"query": QUESTION, "index": "absent", "backend": "extractive"})
    assert names(events) == ["analyze", "retrieval_started", "error"]
    assert events[-1][1]["code"] == "index_not_found" and "absent" in events[-1][1]["message"]
    status, _, body = api.call("POST", "/chat", {"query": QUESTION, "index": "absent", "backend": "extractive"})
    assert status == 404 and body["code"] == "index_not_found"


def test_chat_returns_the_complete_object_and_saves_the_turn(env):
    api, saved = env
    turn_id = uuid.uuid4().hex
    status, _, body = api.call("POST", "/chat", {"query": QUESTION, "index": "kb", "backend": "extractive",
                                                 "sessionId": "sess-1", "turnId": turn_id})
    assert status == 200 and body["answer_source"] == "extractive" and body["turn_id"] == turn_id
    turn = saved.wait_for(turn_id)
    assert turn["path"] == "/sessions/sess-1/messages/save" and turn["auth"] == "Bearer tok"
    record = turn["body"]
    assert set(record) == SAVE_KEYS
    assert record["status"] == "complete" and record["error"] is None
    assert record["question"] == QUESTION and record["answer"] == body["answer"]
    assert record["citations"] == body["citations"]
    assert [s["type"] for s in record["steps"]][0] == "analyze"
    assert all(s["type"] != "token" for s in record["steps"])


def test_stream_saves_the_turn_and_failures_too(env):
    api, saved = env
    events = api.stream("/chat/stream", {"query": QUESTION, "index": "kb", "backend": "extractive",
                                         "session_id": "sess-2"})
    turn_id = events[-1][1]["turn_id"]
    record = saved.wait_for(turn_id)["body"]
    assert record["status"] == "complete" and record["answer"] == events[-1][1]["answer"]
    events = api.stream("/chat/stream", {"query": QUESTION, "index": "absent", "backend": "extractive",
                                         "session_id": "sess-2"})
    record = saved.wait_for(events[-1][1]["turn_id"])["body"]
    assert record["status"] == "error" and record["error"]["code"] == "index_not_found"


def test_a_follow_up_is_resolved_from_the_history_the_gateway_holds(env):
    api, saved = env
    ask = {"index": "kb", "backend": "extractive", "session_id": "mem-1"}
    _, _, first = api.call("POST", "/chat", {"query": "How much annual leave do employees accrue?", **ask})
    saved.wait_for(first["turn_id"])  # the RAG API keeps no history: it reads the saved turn back
    status, _, body = api.call("POST", "/chat", {"query": "What about sick leave?", **ask})
    assert status == 200 and body["standalone_query"] and "sick leave" in body["standalone_query"].lower()
    assert body["source_documents"][0]["document_name"] == "leave-policy.txt"
    # Another session has no history: the same follow-up stays as it was asked.
    status, _, other = api.call("POST", "/chat", {**ask, "query": "What about sick leave?", "session_id": "mem-2"})
    assert other["standalone_query"] is None


def test_a_request_can_carry_its_history_as_localgpt_sends_it(env):
    api, _ = env
    history = [{"role": "user", "content": "How much annual leave do employees accrue?"},
               {"role": "assistant", "content": "Employees accrue 25 days of annual leave [1]."}]
    status, _, body = api.call("POST", "/chat", {"query": "What about sick leave?", "index": "kb",
                                                 "backend": "extractive", "conversation_history": history})
    assert status == 200 and "sick leave" in (body["standalone_query"] or "").lower()
    for bad in ([{"role": "system", "content": "x"}], [{"role": "user"}], "not a list", [["user", "x"]]):
        status, _, err = api.call("POST", "/chat", {"query": "What about sick leave?", "index": "kb",
                                                    "conversation_history": bad})
        assert status == 400 and err["code"] == "invalid_option", bad


def test_client_disconnect_mid_stream_stops_and_saves_the_turn(env):
    api, saved = env
    turn_id = uuid.uuid4().hex
    sock, reader = api.open_raw("/chat/stream", {
        "query": "How much annual leave do employees accrue and how often should hydrangeas be watered?",
        "index": "kb", "backend": "extractive", "session_id": "sess-3", "turn_id": turn_id})
    first = next(read_events(reader))
    assert first[0] == "analyze"
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    record = saved.wait_for(turn_id)["body"]
    # Extractive answers are fast: the run may have finished before the disconnect was seen.
    assert record["status"] in ("cancelled", "complete")
    if record["status"] == "cancelled":
        assert record["error"]["code"] == "cancelled"
    status, _, body = api.call("GET", "/health")
    assert status == 200  # the service is unaffected


def test_concurrent_requests_keep_their_own_options(env):
    api, _ = env

    def retrieve(k: int) -> tuple[int, int]:
        status, _, body = api.call("POST", "/retrieve", {"query": "leave policy days", "index": "kb",
                                                         "retrieval_k": k, "retrieval_mode": "vector_only"})
        assert status == 200
        return k, len(body["results"])

    def chat(mode: str) -> tuple[str, str]:
        events = api.stream("/chat/stream", {"query": QUESTION, "index": "kb", "backend": "extractive",
                                             "retrieval_mode": mode})
        started = [d for e, d in events if e == "retrieval_started"][0]
        return mode, started["mode"]

    with ThreadPoolExecutor(8) as pool:
        ks = list(pool.map(retrieve, [1, 2, 3, 1, 2, 3]))
        modes = list(pool.map(chat, ["fts_only", "vector_only", "hybrid", "fts_only"]))
    assert all(n == k for k, n in ks)
    assert all(asked == used for asked, used in modes)


@pytest.mark.slow
def test_embedded_llm_streams_tokens_and_a_disconnect_cancels_it(env):
    api, saved = env
    events = api.stream("/chat/stream", {"query": QUESTION, "index": "kb", "backend": "llamacpp"})
    order = names(events)
    _, payload = one_terminal(events)
    assert order[-1] == "complete", events[-1]
    if payload["backend"] != "llamacpp":
        pytest.skip(f"embedded model unavailable: {payload.get('fallbacks')}")
    assert "token" in order
    assert order.index("retrieval_done") < order.index("token") < order.index("citations") < order.index("complete")
    assert payload["validation"]["valid"] and payload["answer_source"] in ("llm", "llm_repaired", "extractive")

    turn_id = uuid.uuid4().hex
    sock, reader = api.open_raw("/chat/stream", {"query": QUESTION,
                                                 "index": "kb", "backend": "llamacpp", "session_id": "sess-llm",
                                                 "turn_id": turn_id})
    for event, _ in read_events(reader):
        if event == "generation_started":  # the model is reading: the person leaves before any sentence
            break
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    record = saved.wait_for(turn_id, timeout=120)["body"]
    assert record["status"] == "cancelled" and record["error"]["code"] == "cancelled"
    # only checked sentences are ever streamed and saved: none was, so the cancelled turn keeps no text
    assert record["answer_source"] is None and record["answer"] == ""
