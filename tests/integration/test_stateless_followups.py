"""A follow-up keeps its context when the RAG API restarts between turns, and across two replicas.

The RAG API keeps no conversation: the gateway sends a session's last messages with `/chat`, and a
turn streamed to the RAG API directly (as the browser does) with only a `session_id` is resolved
against what the RAG API reads back from the gateway (`GET /sessions/<id>/history`, service
token). Everything runs as real processes over real HTTP, with the extractive backend.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.client import Client, read_events
from testkit.docs import ANSWER_DOCS
from testkit.processes import GatewayProcess, RagApiProcess, free_port
from testkit.stack import wait_build

pytestmark = pytest.mark.slow

TOKEN = "followup-token-7c1e"
FIRST = "How much annual leave do employees accrue?"
FOLLOW_UP = "What about sick leave?"


def _start(*processes: GatewayProcess | RagApiProcess) -> None:
    for proc in processes:
        proc.start(wait_s=30 if isinstance(proc, GatewayProcess) else 240)


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GatewayProcess, RagApiProcess]]:
    data = tmp_path_factory.mktemp("followups") / "data"
    gw_port, rag_port = free_port(), free_port()
    gateway = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", token=TOKEN)
    rag = RagApiProcess(data, rag_port, gateway_url=gateway.url, token=TOKEN)
    try:
        _start(gateway, rag)
        yield gateway, rag
    finally:
        rag.stop()
        gateway.stop()


def _session_on_the_leave_policy(gw: Client) -> tuple[str, str]:
    iid = gw.post("/indexes", {"name": "Policies"}).json["index_id"]
    up = gw.upload(f"/indexes/{iid}/upload", [(name, text.encode()) for name, text in ANSWER_DOCS.items()])
    assert up.status == 200, up.body
    assert wait_build(gw, iid)["state"] == "done"
    sid = gw.post("/sessions", {"title": "Leave"}).json["session_id"]
    assert gw.post(f"/sessions/{sid}/indexes/{iid}").status == 200
    return sid, iid


def _ask(gw: Client, sid: str, message: str) -> dict[str, Any]:
    reply = gw.post(f"/sessions/{sid}/messages", {"message": message, "backend": "extractive"})
    assert reply.status == 200, reply.body
    return reply.json


def _resolved(result: dict[str, Any]) -> None:
    """The follow-up was read as a question about sick leave and answered from the leave policy."""
    assert "sick leave" in (result["standalone_query"] or "").lower(), result["standalone_query"]
    assert result["source_documents"][0]["document_name"].endswith("leave-policy.txt")
    assert "doctor" in result["answer"].lower()


def _stream(rag: RagApiProcess, body: dict[str, Any]) -> dict[str, Any]:
    """POST /chat/stream on the RAG API itself (the browser's path); the `complete` frame."""
    import http.client
    import json

    conn = http.client.HTTPConnection("127.0.0.1", rag.port, timeout=120)
    conn.request("POST", "/chat/stream", body=json.dumps(body),
                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    resp = conn.getresponse()
    assert resp.status == 200
    try:
        events = dict(read_events(resp))
    finally:
        conn.close()
    assert "complete" in events, events
    return events["complete"]


def _restart(rag: RagApiProcess) -> None:
    rag.stop()
    rag.proc = None
    rag.start(wait_s=240)


def test_a_follow_up_after_the_rag_api_restarts(single: tuple[GatewayProcess, RagApiProcess]) -> None:
    gateway, rag = single
    gw = gateway.client
    sid, iid = _session_on_the_leave_policy(gw)
    assert "25 days" in _ask(gw, sid, FIRST)["response"]

    _restart(rag)  # whatever the RAG API held in memory is gone
    _resolved(_ask(gw, sid, FOLLOW_UP)["result"])

    # The browser streams to the RAG API with only the session id: the RAG API reads the history.
    _restart(rag)
    done = _stream(rag, {"query": FOLLOW_UP, "index": iid, "session_id": sid, "backend": "extractive"})
    _resolved(done)
    # Without the session, the same words stay a question of their own.
    alone = _stream(rag, {"query": FOLLOW_UP, "index": iid, "backend": "extractive"})
    assert alone["standalone_query"] is None


def _chats(rag: RagApiProcess) -> int:
    text = rag.client.get("/metrics").body.decode()
    found = re.search(r'docent_rag_requests_total\{[^}]*route="/chat"[^}]*status="200"[^}]*\} (\d+)', text)
    return int(found.group(1)) if found else 0


def test_a_follow_up_answered_by_another_replica(tmp_path: Path) -> None:
    data = tmp_path / "data"
    gw_port, ports = free_port(), [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    gateway = GatewayProcess(data, port=gw_port, rag_url=",".join(urls), token=TOKEN, RAG_WRITER_URL=urls[0])
    replicas = [RagApiProcess(data, port, gateway_url=gateway.url, token=TOKEN,
                              DOCENT_ROLE="writer" if i == 0 else "reader", DOCENT_WRITER_URL=urls[0])
                for i, port in enumerate(ports)]
    try:
        _start(gateway, *replicas)
        gw = gateway.client
        sid, iid = _session_on_the_leave_policy(gw)
        before = [_chats(r) for r in replicas]
        assert "25 days" in _ask(gw, sid, FIRST)["response"]
        _resolved(_ask(gw, sid, FOLLOW_UP)["result"])
        assert [_chats(r) - b for r, b in zip(replicas, before, strict=True)] == [1, 1]  # one turn each
        # Streamed to the replica that did not answer the first turn, with only the session id.
        _resolved(_stream(replicas[1], {"query": FOLLOW_UP, "index": iid, "session_id": sid,
                                        "backend": "extractive"}))
    finally:
        for proc in (*replicas, gateway):
            proc.stop()
