"""The gateway over real HTTP, on its own (the RAG API is not running here).

Everything the gateway does without the RAG API: sessions, uploads,
documents, page images, errors, auth, CORS, request ids, logging, the
internal turn save, and 502/504 when the RAG API is down or slow.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.client import Client, multipart_body
from testkit.docs import PDF_PAGE_WORDS, make_pdf
from testkit.processes import GatewayProcess, base_env, free_port

ORIGIN = "http://app.test:3000"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("gw") / "data"
    gw = GatewayProcess(data, DOCENT_MAX_UPLOAD_MB="1", DOCENT_CORS_ORIGINS=ORIGIN)
    gw.start(wait_s=30)
    yield gw
    gw.stop()


@pytest.fixture()
def client(gateway: GatewayProcess) -> Client:
    return gateway.client


def new_session(client: Client, title: str | None = None) -> str:
    reply = client.post("/sessions", {"title": title} if title else {})
    assert reply.status == 201
    return reply.json["session_id"]


def new_index(client: Client, name: str = "Manuals") -> str:
    reply = client.post("/indexes", {"name": name, "description": "test"})
    assert reply.status == 201
    return reply.json["index_id"]


def test_health_reports_the_rag_api_down(client: Client) -> None:
    reply = client.get("/health")
    assert reply.status == 200
    body = reply.json
    assert body["status"] == "degraded" and body["rag_api"]["reachable"] is False
    assert "RAG API" in body["rag_api"]["error"]


def test_session_lifecycle(client: Client) -> None:
    sid = new_session(client, "Quarterly review")
    sessions = client.get("/sessions").json
    assert sid in [s["id"] for s in sessions["sessions"]] and sessions["total"] >= 1
    got = client.get(f"/sessions/{sid}").json
    assert got["messages"] == []
    assert set(got["session"]) == {"id", "title", "created_at", "updated_at", "model_used", "message_count"}
    renamed = client.post(f"/sessions/{sid}/rename", {"title": "Renamed"})
    assert renamed.status == 200 and renamed.json["session"]["title"] == "Renamed"
    assert client.delete(f"/sessions/{sid}").json["deleted"] is True
    assert client.get(f"/sessions/{sid}").status == 404
    assert client.delete(f"/sessions/{sid}").json["code"] == "session_not_found"


@pytest.mark.parametrize(("method", "path", "raw"), [
    ("POST", "/sessions", b"{not json"),
    ("POST", "/sessions", b"[1, 2]"),
    ("POST", "/sessions/{sid}/rename", b""),
    ("POST", "/sessions/{sid}/rename", b'{"title": ""}'),
    ("POST", "/sessions/{sid}/rename", b'{"title": 5}'),
    ("POST", "/sessions/{sid}/messages", b""),
    ("POST", "/sessions/{sid}/messages", b'{"message": ""}'),
    ("POST", "/sessions/{sid}/messages", b'{"message": ["x"]}'),
    ("POST", "/sessions/{sid}/messages", b'{"message": "hi", "retrievalK": "five"}'),
    ("POST", "/sessions/{sid}/messages", b"\xff\xfe"),
    ("POST", "/sessions/{sid}/messages/save", b'{"question": "q"}'),
    ("POST", "/sessions/{sid}/messages/save", b'{"turn_id": "../x", "question": "q"}'),
    ("POST", "/sessions/{sid}/messages/save", b'{"turn_id": "t1", "question": "q", "status": "weird"}'),
    ("POST", "/sessions/{sid}/messages/save", b'{"turn_id": "t1", "question": "q", "citations": {}}'),
    ("POST", "/indexes", b""),
    ("POST", "/indexes", b'{"name": "  "}'),
    ("POST", "/indexes", b'{"name": "x", "metadata": []}'),
    ("POST", "/indexes/{iid}/build", b"{oops"),
    ("POST", "/indexes/{iid}/build", b""),  # no documents yet
    ("POST", "/sessions/{sid}/upload", b""),
    ("POST", "/indexes/{iid}/upload", b"not multipart"),
])
def test_bad_bodies_are_400_never_500(client: Client, method: str, path: str, raw: bytes) -> None:
    sid, iid = new_session(client), new_index(client)
    reply = client.call(method, path.format(sid=sid, iid=iid), raw=raw,
                        headers={"Content-Type": "application/json"})
    assert reply.status in (400, 415), reply.body
    error = reply.json
    assert set(error) >= {"code", "message"} and error["message"]


def test_unknown_routes_and_methods(client: Client) -> None:
    assert client.get("/nope").json["code"] == "not_found"
    reply = client.call("PUT", "/sessions")
    assert reply.status == 405 and sorted(reply.json["allowed"]) == ["GET", "POST"]


def test_index_uploads_files_and_pages(client: Client, tmp_path: Path) -> None:
    iid = new_index(client)
    pdf = make_pdf(tmp_path / "guide.pdf").read_bytes()
    reply = client.upload(f"/indexes/{iid}/upload", [("guide.pdf", pdf), ("notes.md", b"# Notes\nhello"),
                                                     ("../../escape.txt", b"plain text")])
    assert reply.status == 200, reply.body
    uploaded = reply.json["uploaded_files"]
    assert [u["filename"] for u in uploaded] == ["guide.pdf", "notes.md", "escape.txt"]
    for u in uploaded:
        path = Path(u["stored_path"])
        assert path.parent.name == iid and path.name == f"{u['sha256']}_{u['filename']}"
        assert path.parent.parent.name == "uploads"
    index = client.get(f"/indexes/{iid}").json
    assert index["id"] == iid and index["vector_table_name"] == f"idx_{iid}"
    assert sorted(d["filename"] for d in index["documents"]) == ["escape.txt", "guide.pdf", "notes.md"]
    assert iid in [i["id"] for i in client.get("/indexes").json["indexes"]]

    pdf_doc = uploaded[0]
    original = client.get(f"/documents/{pdf_doc['document_id']}/file")
    assert original.status == 200 and original.body == pdf
    assert original.headers["content-type"] == "application/pdf"
    assert original.headers["content-disposition"].startswith('inline; filename="guide.pdf"; filename*=')
    md = client.get(f"/documents/{uploaded[1]['document_id']}/file?download=1")
    assert md.headers["content-disposition"].startswith("attachment;")

    plain = client.get(f"/documents/{pdf_doc['sha256']}/pages/2.png")  # citations carry the sha256
    assert plain.status == 200 and plain.body.startswith(b"\x89PNG")
    lit = client.get(f"/documents/{pdf_doc['document_id']}/pages/2.png?highlight={PDF_PAGE_WORDS[1]}")
    assert lit.status == 200 and lit.body.startswith(b"\x89PNG") and lit.body != plain.body
    again = client.get(f"/documents/{pdf_doc['document_id']}/pages/2.png?highlight={PDF_PAGE_WORDS[1]}")
    assert again.body == lit.body  # served from the cache
    assert client.get(f"/documents/{pdf_doc['document_id']}/pages/9.png").json["code"] == "page_not_found"
    assert client.get(f"/documents/{pdf_doc['document_id']}/pages/0.png").status == 400
    assert client.get(f"/documents/{uploaded[1]['document_id']}/pages/1.png").status == 415
    assert client.get("/documents/unknown/file").status == 404


def test_upload_limits(client: Client) -> None:
    iid = new_index(client)
    too_big = client.upload(f"/indexes/{iid}/upload", [("big.txt", b"x" * (1024 * 1024 + 10))])
    assert too_big.status == 413 and too_big.json["code"] == "upload_too_large"
    wrong = client.upload(f"/indexes/{iid}/upload", [("tool.exe", b"MZ")])
    assert wrong.status == 415
    none = client.upload(f"/indexes/{iid}/upload", [("a.txt", b"x")], field="other")
    assert none.status == 400 and none.json["code"] == "no_files"
    assert client.get(f"/indexes/{iid}").json["documents"] == []


def test_session_uploads_and_delete(client: Client, gateway: GatewayProcess) -> None:
    sid = new_session(client)
    reply = client.upload(f"/sessions/{sid}/upload", [("a.txt", b"alpha"), ("b.md", b"beta")])
    assert reply.status == 200
    paths = [Path(u["stored_path"]) for u in reply.json["uploaded_files"]]
    docs = client.get(f"/sessions/{sid}/documents").json
    assert docs["files"] == ["a.txt", "b.md"] and docs["file_count"] == 2
    assert all(p.is_file() for p in paths)
    assert client.delete(f"/sessions/{sid}").status == 200
    assert not any(p.exists() for p in paths) and not paths[0].parent.exists()


def test_rag_api_down_is_502_and_the_question_is_kept(client: Client, gateway: GatewayProcess) -> None:
    sid = new_session(client)
    secret = f"zanzibar{uuid.uuid4().hex[:8]}"
    reply = client.post(f"/sessions/{sid}/messages", {"message": f"what does {secret} mean?"},
                        headers={"X-Request-ID": "req-502-test"})
    assert reply.status == 502
    assert reply.json["code"] == "rag_api_unavailable" and "RAG API" in reply.json["message"]
    assert reply.headers["x-request-id"] == "req-502-test"
    history = client.get(f"/sessions/{sid}").json["messages"]
    assert [m["sender"] for m in history] == ["user"]
    assert client.get("/models").status == 502
    # One JSON access line per request, with the request id, and never the message text. The line is
    # written once the response has gone out (it counts the bytes sent), so a loaded machine can
    # answer the client before the server thread has logged it: wait for it, up to 10 s.
    deadline = time.monotonic() + 10
    while True:
        log = gateway.log()
        lines = [json.loads(line) for line in log.splitlines() if line.startswith("{") and "request_id" in line]
        mine = [entry for entry in lines if entry["request_id"] == "req-502-test"]
        if mine or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(mine) == 1 and mine[0]["status"] == 502 and mine[0]["route"] == "/sessions/{session_id}/messages"
    assert secret not in log


def test_build_and_delete_need_the_rag_api(client: Client) -> None:
    iid = new_index(client)
    client.upload(f"/indexes/{iid}/upload", [("a.txt", b"alpha")])
    assert client.post(f"/indexes/{iid}/build").status == 502
    assert client.delete(f"/indexes/{iid}").status == 502
    assert client.get(f"/indexes/{iid}").status == 200  # nothing deleted while the table may still exist


def test_link_index_and_list(client: Client) -> None:
    sid, iid = new_session(client), new_index(client)
    assert client.post(f"/sessions/{sid}/indexes/{iid}").json["linked"] is True
    assert client.post(f"/sessions/{sid}/indexes/{iid}").status == 200  # idempotent
    assert [i["id"] for i in client.get(f"/sessions/{sid}/indexes").json["indexes"]] == [iid]
    assert client.post(f"/sessions/{sid}/indexes/missing").status == 404


def test_save_turn_is_idempotent(client: Client) -> None:
    sid = new_session(client)
    turn = {"turn_id": uuid.uuid4().hex, "question": "q?", "answer": "a [1]", "answer_source": "extractive",
            "citations": [{"n": 1, "document_id": "d", "page_start": 2}], "source_documents": [], "steps": [],
            "token_usage": {}, "timings_ms": {}, "status": "complete", "error": None}
    first = client.post(f"/sessions/{sid}/messages/save", turn)
    second = client.post(f"/sessions/{sid}/messages/save", turn)
    assert (first.status, first.json["saved"]) == (201, True)
    assert (second.status, second.json["duplicate"]) == (200, True)
    msgs = client.get(f"/sessions/{sid}").json["messages"]
    assert [(m["sender"], m["content"]) for m in msgs] == [("user", "q?"), ("assistant", "a [1]")]
    assert msgs[1]["metadata"]["citations"][0]["page_start"] == 2
    cancelled = dict(turn, turn_id=uuid.uuid4().hex, answer="", status="cancelled")
    assert client.post(f"/sessions/{sid}/messages/save", cancelled).status == 201
    assert client.get(f"/sessions/{sid}").json["messages"][-1]["metadata"]["status"] == "cancelled"
    other = new_session(client)
    assert client.post(f"/sessions/{other}/messages/save", turn).status == 409
    assert client.post("/sessions/nope/messages/save", turn).status == 404


def test_parallel_saves_store_every_turn_once_in_order(client: Client) -> None:
    sessions = [new_session(client) for _ in range(20)]
    errors: list[str] = []

    def post_turns(sid: str) -> None:
        for n in range(5):
            turn = {"turn_id": f"{sid}-{n}", "question": f"q{n}", "answer": f"a{n}", "status": "complete"}
            for _ in range(2):  # every save is retried once
                reply = client.post(f"/sessions/{sid}/messages/save", turn)
                if reply.status not in (200, 201):
                    errors.append(f"{reply.status} {reply.body[:200]!r}")

    threads = [threading.Thread(target=post_turns, args=(sid,)) for sid in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for sid in sessions:
        contents = [m["content"] for m in client.get(f"/sessions/{sid}").json["messages"]]
        assert contents == [x for n in range(5) for x in (f"q{n}", f"a{n}")]


def test_cors(client: Client) -> None:
    ok = client.call("OPTIONS", "/sessions", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
    assert ok.status == 204 and ok.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in ok.headers["access-control-allow-methods"]
    bad = client.call("OPTIONS", "/sessions", headers={"Origin": "http://evil.test"})
    assert bad.status == 403 and "access-control-allow-origin" not in bad.headers
    assert client.get("/sessions", headers={"Origin": ORIGIN}).headers["access-control-allow-origin"] == ORIGIN
    assert "access-control-allow-origin" not in client.get("/sessions", headers={"Origin": "http://evil.test"}).headers


def test_metrics(client: Client) -> None:
    client.get("/sessions")
    text = client.get("/metrics").body.decode()
    assert 'docent_gateway_requests_total{method="GET",route="/sessions",status="200"}' in text
    assert "docent_gateway_request_seconds_bucket" in text and 'docent_gateway_store_rows{table="sessions"}' in text


def test_connection_survives_an_error_with_an_unread_body(gateway: GatewayProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=10)
    body, ctype = multipart_body([("a.txt", b"x")])
    conn.request("POST", "/indexes/missing/upload", body=body, headers={"Content-Type": ctype})
    first = conn.getresponse()
    first.read()
    assert first.status == 404
    conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=10)
    for _ in range(3):  # keep-alive works for ordinary requests
        conn.request("GET", "/sessions")
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 200
    conn.close()


def test_auth_with_a_token(tmp_path: Path) -> None:
    gw = GatewayProcess(tmp_path / "data", token="s3cret")
    gw.start(wait_s=30)
    try:
        anon = Client(gw.url)
        assert anon.get("/health").status == 200
        assert anon.get("/sessions").status == 401
        assert anon.get("/sessions").json["code"] == "unauthorized"
        assert Client(gw.url, "wrong").get("/sessions").status == 401
        assert anon.post("/sessions/x/messages/save", {"turn_id": "t", "question": "q"}).status == 401
        assert gw.client.get("/sessions").status == 200
    finally:
        gw.stop()


def test_non_loopback_bind_without_token_refuses_to_start(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "backend", "--host", "0.0.0.0", "--port", str(free_port())],
                          env=base_env(tmp_path / "data"), capture_output=True, timeout=60, text=True)
    assert proc.returncode == 2 and "DOCENT_API_TOKEN" in proc.stderr


def test_slow_rag_api_is_504(tmp_path: Path) -> None:
    # A listener that accepts connections and never answers: a RAG API stuck on a request.
    sink = socket.socket()
    sink.bind(("127.0.0.1", 0))
    sink.listen(16)
    gw = GatewayProcess(tmp_path / "data", rag_url=f"http://127.0.0.1:{sink.getsockname()[1]}",
                        RAG_API_TIMEOUT="1")
    gw.start(wait_s=30)
    try:
        sid = new_session(gw.client)
        reply = gw.client.post(f"/sessions/{sid}/messages", {"message": "what is the budget?"})
        assert reply.status == 504
        assert reply.json["code"] == "rag_api_timeout" and "RAG API" in reply.json["message"]
    finally:
        gw.stop()
        sink.close()


def test_protocol_errors_are_json(gateway: GatewayProcess) -> None:
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        sock.sendall(b"BREW /sessions HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501") and json.loads(body)["code"] == "method_not_implemented"
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        sock.sendall(b"garbage\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    # A request line without a version is HTTP/0.9 to the stdlib: the body comes without a status line.
    assert b'"code": "bad_request"' in data and b'"error": "' in data


def test_a_retried_message_with_an_answered_turn_id_is_not_asked_again(client: Client) -> None:
    sid = new_session(client)
    turn = {"turn_id": "retry-turn-1", "question": "what is the budget?", "answer": "12 million [1]",
            "citations": [{"n": 1, "document_name": "b.pdf"}], "status": "complete", "answer_source": "extractive"}
    assert client.post(f"/sessions/{sid}/messages/save", turn).status == 201
    # The RAG API is down here, so a 200 proves the stored answer was returned without asking it again.
    reply = client.post(f"/sessions/{sid}/messages", {"message": "what is the budget?", "turnId": "retry-turn-1"})
    assert reply.status == 200, reply.body
    assert reply.json["response"] == "12 million [1]" and reply.json["citations"][0]["document_name"] == "b.pdf"
    assert len(client.get(f"/sessions/{sid}").json["messages"]) == 2


def test_expect_100_continue_refuses_an_oversized_upload_before_the_body(gateway: GatewayProcess) -> None:
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        sock.sendall(b"POST /indexes/x/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                     b"Content-Length: 50000000\r\nExpect: 100-continue\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):  # the server answers and closes without waiting for the body
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and json.loads(body)["code"] == "body_too_large"
