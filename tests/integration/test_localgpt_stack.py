"""localGPT's client habits against both real services (extractive backend, so it runs anywhere).

What its client does, call by call: build an index and open the chat at once (the build is
asynchronous), stream a question straight from the RAG API with `session_id` and `table_name`
`text_pages_<id>`, save the streamed turn itself, reload the session, read index lists and the
index panel's metadata, use the plain "LLM chat" tile (`POST /chat`, `/chat/stream` on the
gateway) and send its options (`model`, `compose_sub_answers`, `ai_rerank`, ...).
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag_system.embedding.model_files import RERANKER_INT8, installed, models_root
from testkit.client import Client, read_events
from testkit.processes import GatewayProcess, RagApiProcess, linked_services

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:3999"
POLICY = ("# Leave policy\n\nEmployees accrue 25 days of annual leave per year.\n\n"
          "## Approval\n\nThe line manager approves leave requests within five working days.\n")
QUESTION = "How many days of annual leave do employees accrue?"


class Stack:
    def __init__(self, gateway: GatewayProcess, rag: RagApiProcess) -> None:
        self.gateway, self.rag = gateway, rag
        self.gw: Client = gateway.client
        self.api: Client = rag.client


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("lstack") / "data"
    with linked_services(data, {"DOCENT_CORS_ORIGINS": ORIGIN}, DOCENT_CORS_ORIGINS=ORIGIN) as (gateway, rag):
        yield Stack(gateway, rag)


def stream(port: int, path: str, body: dict[str, Any]) -> tuple[int, list[tuple[str, Any]], Any]:
    """POST an SSE route; (status, frames, error body when not 200)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    try:
        if resp.status != 200:
            return resp.status, [], json.loads(resp.read() or b"{}")
        assert resp.getheader("Content-Type", "").startswith("text/event-stream")
        return 200, list(read_events(resp)), None
    finally:
        conn.close()


def index_with(stack: Stack, name: str, files: list[tuple[str, bytes]]) -> str:
    iid = stack.gw.post("/indexes", {"name": name, "metadata": {}}).json["index_id"]
    assert stack.gw.upload(f"/indexes/{iid}/upload", files).status == 200
    return iid


LOCALGPT_FORM = {"latechunk": False, "doclingChunk": True, "retrievalMode": "hybrid", "windowSize": 2,
                 "enableEnrich": True, "batchSizeEmbed": 50}


def build(stack: Stack, iid: str, chunk_size: int = 512) -> str:
    """A build with the options localGPT's form sends, but asynchronous (`wait: false`); returns the job id."""
    reply = stack.gw.post(f"/indexes/{iid}/build", {"chunkSize": chunk_size, "windowSize": 2, "enableEnrich": True,
                                                    "batchSizeEmbed": 50, "wait": False})
    assert reply.status == 202, reply.body
    warned = " ".join(reply.json["warnings"])  # what Docent does not do is said, not dropped
    assert "enable_enrich is not applied" in warned and "window_size is not applied" in warned, warned
    return reply.json["job_id"]


def wait_rag_job(stack: Stack, job_id: str, timeout_s: float = 300) -> dict[str, Any]:
    """Follow the job on the RAG API itself, so the gateway learns the end only from its lists."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = stack.api.get(f"/index/jobs/{job_id}").json
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish")


@pytest.fixture(scope="module")
def ready(stack: Stack) -> str:
    iid = index_with(stack, "Handbook", [("policy.md", POLICY.encode())])
    job = wait_rag_job(stack, build(stack, iid))
    assert job["state"] == "done", job
    return iid


def test_lists_refresh_a_finished_build(stack: Stack, ready: str) -> None:
    listed = {i["id"]: i for i in stack.gw.get("/indexes").json["indexes"]}
    assert listed[ready]["metadata"]["status"] == "ready"  # not "building": the list asked the RAG API
    sid = stack.gw.post("/sessions", {"title": "New Chat"}).json["session_id"]
    stack.gw.post(f"/sessions/{sid}/indexes/{ready}")
    linked = stack.gw.get(f"/sessions/{sid}/indexes").json["indexes"][-1]
    meta = linked["metadata"]
    assert meta["status"] == "ready" and meta["total_chunks"] >= 1 and meta["retrieval_mode"] == "hybrid"
    assert isinstance(meta["embedding_model"], str) and meta["embedding_model"]
    assert meta["chunk_size"] == 512 and meta["vector_dimensions"] > 0
    small = index_with(stack, "Small chunks", [("policy.md", POLICY.encode())])
    assert wait_rag_job(stack, build(stack, small, chunk_size=96))["summary"]["chunk_size"] == 96
    assert stack.gw.get(f"/indexes/{small}").json["metadata"]["chunk_size"] == 96  # applied, not just recorded


def test_localgpt_build_call_answers_when_the_index_is_ready(stack: Stack) -> None:
    iid = index_with(stack, "Form build", [("policy.md", POLICY.encode())])
    reply = stack.gw.post(f"/indexes/{iid}/build", {**LOCALGPT_FORM, "chunkSize": 256})
    assert reply.status == 200, reply.body  # localGPT's client opens the chat right after this call
    assert reply.json["status"] == "ready" and reply.json["job"]["state"] == "done"
    assert reply.json["index"]["metadata"]["chunk_size"] == 256 and reply.json["response"]
    assert any("enable_enrich" in w for w in reply.json["warnings"])


def test_streamed_turn_saved_by_both_is_one_turn_that_reloads_with_steps(stack: Stack, ready: str) -> None:
    sid = stack.gw.post("/sessions", {"title": "New Chat", "model": "extractive"}).json["session_id"]
    stack.gw.post(f"/sessions/{sid}/indexes/{ready}")
    status, events, _ = stream(stack.rag.port, "/chat/stream", {
        "query": QUESTION, "session_id": sid, "table_name": f"text_pages_{ready}", "model": "extractive",
        "ai_rerank": True, "compose_sub_answers": True, "provence_prune": True})
    assert status == 200
    kinds = [k for k, _ in events]
    done = events[-1][1]
    assert kinds[-1] == "complete" and "25 days" in done["answer"], kinds
    assert done["backend"] == "extractive"  # `model: "extractive"` picked the backend
    # ai_rerank runs the default reranker (the model files' cross-encoder); without its files there is no
    # rerank phase that did not run, and a warning says so
    reranks = installed(RERANKER_INT8, models_root())
    assert ("rerank_done" in kinds) == reranks and ("rerank_skipped" in kinds) != reranks, kinds
    assert any("reranking skipped" in w for w in done["warnings"]) != reranks, done["warnings"]
    assert any("compose_sub_answers" in w for w in done["warnings"]), done["warnings"]
    usage = done["token_usage"]["total"]
    assert {"prompt_tokens", "output_tokens", "calls", "total_tokens"} <= set(usage) and "by_stage" in done["token_usage"]
    saved = stack.gw.post(f"/sessions/{sid}/messages/save", {
        "user_message": QUESTION, "assistant_message": done["answer"],
        "source_documents": done["source_documents"], "steps": None})
    assert saved.status in (200, 201), saved.body
    assert saved.json["session"]["id"] == saved.json["session"]["id"] == sid
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the RAG API saves in the background: wait until it has
        messages = stack.gw.get(f"/sessions/{sid}").json["messages"]
        if messages and messages[-1]["metadata"].get("events"):
            break
        time.sleep(0.2)
    assert len(messages) == 2, [(m["sender"], m["content"], m["metadata"].get("saved_by")) for m in messages]
    steps = messages[1]["metadata"]["steps"]
    final = next(s for s in steps if s["key"] == "final")
    assert "25 days" in final["details"]["answer"]
    assert final["details"]["source_documents"][0]["document_name"] == "policy.md"
    assert stack.gw.get(f"/sessions/{sid}").json["session"]["message_count"] == 2


def test_a_question_on_an_index_still_building_says_so(stack: Stack, ready: str, tmp_path: Path) -> None:
    big = "\n\n".join(f"Section {n}. The ledger entry {n} records {n * 7} crates of tin." for n in range(1500))
    slow = index_with(stack, "Ledger", [(f"ledger{n}.txt", (big + f" {n}").encode()) for n in range(2)])
    waiting = index_with(stack, "Waiting", [("policy.md", POLICY.encode())])
    first, second = build(stack, slow), build(stack, waiting)  # the second waits behind the first
    reply = stack.api.post("/chat", {"query": QUESTION, "table_name": f"text_pages_{waiting}"})
    assert reply.status == 409, reply.body
    assert reply.json["code"] == "index_building" and "still being indexed" in reply.json["error"]
    status, _, body = stream(stack.rag.port, "/chat/stream", {"query": QUESTION, "table_name": waiting})
    assert status == 409 and isinstance(body["error"], str) and "still being indexed" in body["error"]
    sid = stack.gw.post("/sessions", {}).json["session_id"]
    stack.gw.post(f"/sessions/{sid}/indexes/{waiting}")
    through_gateway = stack.gw.post(f"/sessions/{sid}/messages", {"message": QUESTION})
    assert through_gateway.status == 409 and "still being indexed" in through_gateway.json["error"]
    for job in (first, second):
        assert wait_rag_job(stack, job)["state"] == "done"
    answered = stack.api.post("/chat", {"query": QUESTION, "table_name": waiting})
    assert answered.status == 200 and "25 days" in answered.json["answer"]


def test_llm_chat_tile_answers_through_the_gateway(stack: Stack) -> None:
    preflight = http.client.HTTPConnection("127.0.0.1", stack.gateway.port, timeout=30)
    preflight.request("OPTIONS", "/chat/stream", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
    pre = preflight.getresponse()
    assert pre.status == 204 and pre.getheader("Access-Control-Allow-Origin") == ORIGIN
    preflight.close()
    reply = stack.gw.post("/chat", {"message": "What is the capital of France?", "conversation_history": [],
                                    "model": "qwen3.5:9b"})
    assert reply.status == 200, reply.body
    body = reply.json
    assert body["answer_source"] == "direct" and "No language model is configured" in body["response"]
    assert body["message_count"] == 2 and any("qwen3.5:9b" in w for w in body["warnings"])
    status, events, _ = stream(stack.gateway.port, "/chat/stream", {"message": "hello", "conversation_history": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]})
    assert status == 200 and events[-1][0] == "complete", events
    assert events[-1][1]["response"] == events[-1][1]["answer"] and events[-1][1]["citations"] == []
    bad = stack.gw.post("/chat", {"message": ""})
    assert bad.status == 400 and isinstance(bad.json["error"], str)
    status, _, body = stream(stack.gateway.port, "/chat/stream", {"message": "x", "conversation_history": [{"r": 1}]})
    assert status == 400 and isinstance(body["error"], str)
