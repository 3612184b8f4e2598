"""The issue's Must show: the gateway and a real RAG API, both running, over real HTTP.

create index -> upload 3 files -> build (following progress) -> session -> link
-> ask (RAG) -> ask "hello" (direct) -> the history has every turn with its
citations -> a chat streamed straight from the RAG API, the client gone before
`complete`, is in the history anyway -> delete the index: its table and files
are gone. And 20 sessions chatting in parallel while a build runs: every
message stored exactly once, in order per session.

The RAG API runs with the extractive backend (no LLM), so answers are
verbatim, cited sentences and the tests run anywhere.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from testkit.client import Client
from testkit.docs import make_pdf
from testkit.processes import GatewayProcess, RagApiProcess, free_port, linked_services

pytestmark = pytest.mark.slow

MD_TEXT = ("# Zephyr turbine\n\nThe zephyr turbine produces 42 kilowatts at a wind speed of 12 metres per second.\n\n"
           "## Maintenance\n\nThe zephyr turbine gearbox is inspected every 18 months by a certified engineer.\n")
TXT_TEXT = ("Harbour tide log.\n\nThe quillwort harbour records its highest tide in March, at 6.4 metres.\n"
            "Boats leave the quillwort harbour only at high water.\n")


class Stack:
    def __init__(self, data: Path, gateway: GatewayProcess, rag: RagApiProcess) -> None:
        self.data, self.gateway, self.rag = data, gateway, rag
        self.gw: Client = gateway.client


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("stack") / "data"
    with linked_services(data) as (gateway, rag):
        yield Stack(data, gateway, rag)


def build_and_wait(gw: Client, index_id: str, timeout_s: float = 300) -> tuple[dict[str, Any], list[dict]]:
    started = gw.post(f"/indexes/{index_id}/build")
    assert started.status == 202, started.body
    job_id = started.json["job_id"]
    seen: list[dict] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = gw.get(f"/indexes/{index_id}/jobs/{job_id}")
        assert job.status == 200, job.body
        seen.append(job.json)
        if job.json["state"] in ("done", "failed", "cancelled"):
            return job.json, seen
        time.sleep(0.2)
    raise AssertionError(f"build {job_id} did not finish in {timeout_s} s; last: {seen[-1]}")


def wait_for_turn(gw: Client, session_id: str, turn_id: str, timeout_s: float = 60) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        messages = gw.get(f"/sessions/{session_id}").json["messages"]
        mine = [m for m in messages if m["turn_id"] == turn_id]
        if len(mine) == 2:
            return mine
        time.sleep(0.25)
    raise AssertionError(f"turn {turn_id} never reached the gateway's history")


def stream_and_hang_up(rag_port: int, body: dict[str, Any]) -> str:
    """POST /chat/stream on the RAG API, read the first frame, close the connection; returns that frame."""
    conn = http.client.HTTPConnection("127.0.0.1", rag_port, timeout=60)
    conn.request("POST", "/chat/stream", body=json.dumps(body), headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Content-Type", "").startswith("text/event-stream")
    first = ""
    while not first.startswith("data:"):
        first = resp.fp.readline().decode()
    resp.close()  # the browser tab closes mid-answer: the socket goes with the response
    conn.close()
    return first


def test_must_show_flow(stack: Stack, tmp_path: Path) -> None:
    gw = stack.gw
    # create index -> upload 3 files
    iid = gw.post("/indexes", {"name": "Field guides", "description": "three small documents"}).json["index_id"]
    pdf = make_pdf(tmp_path / "guide.pdf").read_bytes()
    uploaded = gw.upload(f"/indexes/{iid}/upload", [("guide.pdf", pdf), ("turbine.md", MD_TEXT.encode()),
                                                    ("harbour.txt", TXT_TEXT.encode())])
    assert uploaded.status == 200, uploaded.body
    stored = [Path(u["stored_path"]) for u in uploaded.json["uploaded_files"]]
    assert all(p.is_file() and p.parent.name == iid for p in stored)

    # build, following progress
    job, seen = build_and_wait(gw, iid)
    assert job["state"] == "done", job
    assert job["progress"]["total"] == 3 and job["progress"]["done"] == 3
    assert all(0 <= s["progress"]["done"] <= s["progress"]["total"] for s in seen)
    index = gw.get(f"/indexes/{iid}").json
    assert index["metadata"]["status"] == "ready"
    assert {d["status"] for d in index["documents"]} == {"indexed"}
    pages = {d["filename"]: d["page_count"] for d in index["documents"]}
    assert pages["guide.pdf"] == 3 and pages["turbine.md"] >= 1 and pages["harbour.txt"] >= 1, pages
    assert index["page_count"] == sum(pages.values()) and all(d["error"] is None for d in index["documents"])

    # session -> link
    sid = gw.post("/sessions", {}).json["session_id"]
    assert gw.post(f"/sessions/{sid}/indexes/{iid}").status == 200
    # unlink (idempotent) and link again
    assert gw.delete(f"/sessions/{sid}/indexes/{iid}").json["unlinked"] is True
    assert gw.get(f"/sessions/{sid}/indexes").json["indexes"] == []
    again = gw.delete(f"/sessions/{sid}/indexes/{iid}")
    assert again.status == 200 and again.json["unlinked"] is False
    assert gw.delete(f"/sessions/{sid}/indexes/nosuchindex").status == 404
    assert gw.post(f"/sessions/{sid}/indexes/{iid}").status == 200

    # ask (RAG)
    rag = gw.post(f"/sessions/{sid}/messages", {"message": "How many kilowatts does the zephyr turbine produce?"})
    assert rag.status == 200, rag.body
    assert rag.json["used_rag"] is True and rag.json["gate"]["reason"] == "document_question"
    assert rag.json["answer_source"] != "refusal" and "42" in rag.json["response"]
    assert rag.json["citations"], rag.json
    assert any(c["document_name"] == "turbine.md" for c in rag.json["citations"]), rag.json["citations"]

    # a citation of the PDF opens as a highlighted page image
    pdf_answer = gw.post(f"/sessions/{sid}/messages", {"message": "Which page of the guide mentions the bluejay?",
                                                       "forceRag": True})
    assert pdf_answer.status == 200, pdf_answer.body
    pdf_sha = hashlib.sha256(pdf).hexdigest()
    cited = [c for c in pdf_answer.json["citations"] if c["document_id"] == pdf_sha]
    assert cited, pdf_answer.json["citations"]
    page = gw.get(f"/documents/{pdf_sha}/pages/{cited[0]['page_start']}.png?highlight={quote(cited[0]['quote'])}")
    assert page.status == 200 and page.body.startswith(b"\x89PNG")

    # ask "hello" (direct)
    hello = gw.post(f"/sessions/{sid}/messages", {"message": "hello"})
    assert hello.status == 200, hello.body
    assert hello.json["used_rag"] is False and hello.json["answer_source"] == "direct"
    assert hello.json["citations"] == [] and hello.json["response"]

    # the history has every turn, with citations; the RAG API's own saves add nothing
    time.sleep(1.5)
    messages = gw.get(f"/sessions/{sid}").json["messages"]
    assert [m["sender"] for m in messages] == ["user", "assistant"] * 3
    assert [m["content"] for m in messages[::2]] == ["How many kilowatts does the zephyr turbine produce?",
                                                      "Which page of the guide mentions the bluejay?", "hello"]
    assert messages[1]["metadata"]["citations"] and messages[3]["metadata"]["citations"]
    assert messages[1]["metadata"]["citations"] == rag.json["citations"]
    assert messages[5]["metadata"]["answer_source"] == "direct"
    assert gw.get(f"/sessions/{sid}").json["session"]["message_count"] == 6

    # stream straight from the RAG API and hang up before `complete`: the turn is saved anyway
    turn_id = uuid.uuid4().hex
    question = "When is the zephyr turbine gearbox inspected?"
    first = stream_and_hang_up(stack.rag.port, {"query": question, "session_id": sid, "indexes": [iid],
                                                "turn_id": turn_id})
    assert json.loads(first[5:])["type"] != "complete"
    user, bot = wait_for_turn(gw, sid, turn_id)
    assert (user["sender"], user["content"]) == ("user", question)
    assert bot["sender"] == "assistant" and bot["metadata"]["status"] in ("complete", "cancelled")
    assert len(gw.get(f"/sessions/{sid}").json["messages"]) == 8

    # delete the index: its table and files are gone
    deleted = gw.delete(f"/indexes/{iid}")
    assert deleted.status == 200, deleted.body
    assert deleted.json["table_deleted"] is True and deleted.json["files_removed"] == 3
    assert gw.get(f"/indexes/{iid}").status == 404
    assert gw.get(f"/sessions/{sid}/indexes").json["indexes"] == []
    assert not any(p.exists() for p in stored) and not (stack.data / "uploads" / iid).exists()
    rag_indexes = stack.rag.client.get("/indexes")
    assert rag_indexes.status == 200 and iid not in json.dumps(rag_indexes.json)
    assert not list((stack.data / "lancedb").glob(f"*{iid}*"))
    assert stack.rag.client.call("DELETE", f"/indexes/{iid}").status == 404
    # the history outlives the index
    assert len(gw.get(f"/sessions/{sid}").json["messages"]) == 8


def test_twenty_sessions_chat_while_a_build_runs(stack: Stack, tmp_path: Path) -> None:
    gw = stack.gw
    ready = gw.post("/indexes", {"name": "ready"}).json["index_id"]
    gw.upload(f"/indexes/{ready}/upload", [("turbine.md", MD_TEXT.encode()), ("harbour.txt", TXT_TEXT.encode())])
    assert build_and_wait(gw, ready)[0]["state"] == "done"

    sessions = [gw.post("/sessions", {"title": f"s{n}"}).json["session_id"] for n in range(20)]
    for sid in sessions:
        gw.post(f"/sessions/{sid}/indexes/{ready}")
    busy = gw.post("/indexes", {"name": "busy"}).json["index_id"]
    files = [(f"report-{n}.txt", (f"Report {n}. " + " ".join(f"The widget batch {n}-{k} passed inspection "
                                                               f"number {k * n}." for k in range(300))).encode())
             for n in range(8)]
    files.append(("guide.pdf", make_pdf(tmp_path / "guide.pdf", pages=6).read_bytes()))
    assert gw.upload(f"/indexes/{busy}/upload", files).status == 200
    build = gw.post(f"/indexes/{busy}/build")
    assert build.status == 202
    job_id = build.json["job_id"]

    questions = ["hello", "How many kilowatts does the zephyr turbine produce?",
                 "When is the highest tide in the quillwort harbour?", "thanks"]
    failures: list[str] = []
    start = threading.Barrier(len(sessions))
    state_at_start = gw.get(f"/indexes/{busy}/jobs/{job_id}").json["state"]

    def chat(sid: str) -> None:
        start.wait()
        for q in questions:
            reply = gw.post(f"/sessions/{sid}/messages", {"message": q}, timeout=300)
            if reply.status != 200:
                failures.append(f"{sid} {q!r}: {reply.status} {reply.body[:300]!r}")

    threads = [threading.Thread(target=chat, args=(sid,)) for sid in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert state_at_start in ("queued", "running")

    time.sleep(1.5)  # let the RAG API's own saves of these turns arrive: they must change nothing
    for sid in sessions:
        messages = gw.get(f"/sessions/{sid}").json["messages"]
        assert [m["sender"] for m in messages] == ["user", "assistant"] * len(questions), sid
        assert [m["content"] for m in messages[::2]] == questions
        assert len({m["turn_id"] for m in messages}) == len(questions)
        assert all(m["content"] for m in messages[1::2])
    job = gw.get(f"/indexes/{busy}/jobs/{job_id}").json
    deadline = time.monotonic() + 300
    while job["state"] not in ("done", "failed") and time.monotonic() < deadline:
        time.sleep(0.5)
        job = gw.get(f"/indexes/{busy}/jobs/{job_id}").json
    assert job["state"] == "done", job


def test_health_and_models_through_the_gateway(stack: Stack) -> None:
    health = stack.gw.get("/health").json
    assert health["status"] == "ok" and health["rag_api"]["reachable"] is True
    assert "llm" in health["rag_api"]["components"]
    models = stack.gw.get("/models")
    assert models.status == 200, models.body
    assert models.json["default"] == "extractive" and "extractive" in models.json["generation_models"]
    assert models.json["embedding_models"]


def test_session_uploads_become_a_linked_index(stack: Stack) -> None:
    gw = stack.gw
    sid = gw.post("/sessions", {"title": "Harbour questions"}).json["session_id"]
    assert gw.upload(f"/sessions/{sid}/upload", [("harbour.txt", TXT_TEXT.encode())]).status == 200
    started = gw.post(f"/sessions/{sid}/index")
    assert started.status == 202, started.body
    iid, job_id = started.json["index_id"], started.json["job_id"]
    assert [i["id"] for i in gw.get(f"/sessions/{sid}/indexes").json["indexes"]] == [iid]
    deadline = time.monotonic() + 300
    job = gw.get(f"/indexes/{iid}/jobs/{job_id}").json
    while job["state"] not in ("done", "failed") and time.monotonic() < deadline:
        time.sleep(0.2)
        job = gw.get(f"/indexes/{iid}/jobs/{job_id}").json
    assert job["state"] == "done", job
    docs = gw.get(f"/sessions/{sid}/documents").json
    assert docs["files"] == ["harbour.txt"] and docs["documents"][0]["index_id"] == iid
    answer = gw.post(f"/sessions/{sid}/messages", {"message": "When is the highest tide in the quillwort harbour?"})
    assert answer.status == 200 and answer.json["used_rag"] is True, answer.body
    assert [c["document_name"] for c in answer.json["citations"]][:1] == ["harbour.txt"]
    # Tasks pass through the gateway: a cited summary of the named document, saved like any turn.
    summary = gw.post(f"/sessions/{sid}/messages", {"message": "Summarize the harbour notes",
                                                    "task": "summary", "documents": ["harbour.txt"]})
    assert summary.status == 200 and summary.json["used_rag"] is True, summary.body
    assert {c["document_name"] for c in summary.json["citations"]} == {"harbour.txt"}, summary.body
    bad = gw.post(f"/sessions/{sid}/messages", {"message": "Summarize it", "task": "poem"})
    assert bad.status == 400 and "task" in bad.body.decode(), bad.body
    assert gw.delete(f"/indexes/{iid}").status == 200


def test_both_services_with_a_token(tmp_path: Path) -> None:
    """One token on both sides: the gateway sends it to the RAG API, the RAG API sends it with its saves."""
    token = uuid.uuid4().hex
    data = tmp_path / "data"
    gw_port, rag_port = free_port(), free_port()
    gateway = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", token=token)
    rag = RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", token=token)
    gateway.start(wait_s=30)
    try:
        rag.start(wait_s=240)
        gw = gateway.client
        assert Client(gateway.url).get("/sessions").status == 401
        sid = gw.post("/sessions", {}).json["session_id"]
        hello = gw.post(f"/sessions/{sid}/messages", {"message": "hi there"})
        assert hello.status == 200 and hello.json["answer_source"] == "direct", hello.body
        turn_id = uuid.uuid4().hex
        saved = rag.client.post("/chat", {"query": "who are you?", "session_id": sid, "turn_id": turn_id})
        assert saved.status == 200, saved.body
        user, bot = wait_for_turn(gw, sid, turn_id)  # the RAG API's save passed the gateway's auth
        assert user["content"] == "who are you?" and bot["metadata"]["saved_by"] == "rag_api"
        anon_save = Client(gateway.url).post(f"/sessions/{sid}/messages/save",
                                             {"turn_id": uuid.uuid4().hex, "question": "q", "answer": "a"})
        assert anon_save.status == 401
        wrong = GatewayProcess(tmp_path / "other", rag_url=f"http://127.0.0.1:{rag_port}", token="not-the-token")
        wrong.start(wait_s=30)
        try:
            sid2 = wrong.client.post("/sessions", {}).json["session_id"]
            refused = wrong.client.post(f"/sessions/{sid2}/messages", {"message": "hello"})
            assert refused.status == 502 and refused.json["code"] == "rag_api_unauthorized"
        finally:
            wrong.stop()
    finally:
        rag.stop()
        gateway.stop()
