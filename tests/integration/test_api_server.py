"""RAG API over real HTTP: health, models, metrics, errors, limits, auth, CORS, bind rule."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time

import pytest

from testkit import REPO_ROOT
from tests.integration.api_support import api_settings, build, fake_gateway, running_api, write_docs


@pytest.fixture(scope="module")
def api(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("api-server")
    with fake_gateway() as (gateway_url, _saved):
        settings = api_settings(root / "data", DOCENT_GATEWAY_URL=gateway_url)
        with running_api(settings, embedder) as api:
            docs = write_docs(api.uploads / "docs")
            job, _ = build(api, "srv", [str(docs)])
            assert job["state"] == "done"
            yield api


def test_health_reports_every_component(api):
    status, headers, body = api.call("GET", "/health")
    assert status == 200 and body["status"] == "ok"
    c = body["components"]
    assert set(c) == {"embedder", "reranker", "llm", "store", "jobs"}
    assert c["embedder"]["model"].endswith("all-MiniLM-L6-v2")
    assert c["llm"]["chosen"] in ("llamacpp", "extractive")
    assert {b["name"] for b in c["llm"]["backends"]} == {"ollama", "openai", "llamacpp", "extractive"}
    assert c["store"]["ok"] and c["store"]["indexes"] >= 1
    assert c["jobs"] == {"ok": True, "queued": 0, "running": 0}
    assert c["reranker"]["loaded"] is False
    assert headers["x-request-id"]


def test_models_lists_backends_and_default(api):
    status, _, body = api.call("GET", "/models")
    assert status == 200
    assert body["default"] in ("llamacpp", "extractive")
    assert {"name", "available", "model", "detail"} <= set(body["backends"][0])
    assert body["embedder"].endswith("all-MiniLM-L6-v2")


def test_metrics_count_requests_by_route_and_status(api):
    def count(text: str, route: str, status: str) -> int:
        for line in text.splitlines():
            if line.startswith(f'docent_rag_requests_total{{method="GET",route="{route}",status="{status}"}}'):
                return int(float(line.rsplit(" ", 1)[1]))
        return 0

    _, _, before = api.call("GET", "/metrics")
    api.call("GET", "/health")
    api.call("GET", "/health")
    api.call("GET", "/index/jobs/nope")
    # A request is counted after its answer is sent, on its own connection's thread: the next request
    # may be served first, so the count is read until it arrives (at most 5 s).
    deadline = time.monotonic() + 5.0
    while True:
        status, headers, after = api.call("GET", "/metrics")
        if count(after, "/index/jobs/{job_id}", "404") >= 1 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert count(after, "/health", "200") == count(before, "/health", "200") + 2
    assert count(after, "/index/jobs/{job_id}", "404") >= 1
    assert 'docent_rag_request_duration_seconds_bucket{le="+Inf",route="/health"}' in after
    assert 'docent_rag_index_chunks{index="srv"}' in after
    assert "docent_rag_index_jobs" in after


def test_unknown_route_and_wrong_method_are_json_errors(api):
    status, _, body = api.call("GET", "/nope")
    assert status == 404 and body["code"] == "not_found"
    status, headers, body = api.call("GET", "/chat")
    assert status == 405 and "POST" in headers["allow"]


@pytest.mark.parametrize("raw, code", [
    (b"{not json", "invalid_json"),
    (b'["a list"]', "invalid_body"),
    (b'{"index": "srv"}', "missing_query"),
    (b'{"query": "x", "index": "srv", "retrieval_mode": "semantic"}', "invalid_retrieval_mode"),
    (b'{"query": "x", "index": "srv", "retrievalMode": "bm25"}', "invalid_retrieval_mode"),
    (b'{"query": "x", "index": "srv", "filters": {"colour": "red"}}', "invalid_filters"),
    (b'{"query": "x", "index": "srv", "filters": {"page": {"gte": "two"}}}', "invalid_filters"),
    (b'{"query": "x", "index": "srv", "filters": "document_name = 1"}', "invalid_filters"),
    (b'{"query": "x", "index": "srv", "retrieval_k": "20"}', "invalid_option"),
    (b'{"query": "x", "index": "srv", "ai_rerank": "yes"}', "invalid_option"),
    (b'{"query": "x", "index": "srv", "backend": "gpt-17"}', "invalid_backend"),
    (b'{"query": "x", "index": "../etc"}', "invalid_index_name"),
    (b"[" * 100_000, "invalid_json"),
    (b'{"query": "\xff\xfe"}', "invalid_json"),
])
def test_bad_chat_bodies_are_400_with_a_code(api, raw, code):
    for path in ("/chat", "/chat/stream"):
        status, _, body = api.call("POST", path, raw=raw)
        assert status == 400, body
        assert body["code"] == code and body["message"]


def test_unknown_retrieval_mode_message_names_the_supported_modes(api):
    _, _, body = api.call("POST", "/retrieve", {"query": "x", "index": "srv", "retrieval_mode": "semantic"})
    assert "hybrid" in body["message"] and "semantic" in body["message"]


def test_oversized_body_is_413_without_being_read(api):
    conn = http.client.HTTPConnection(api.host, api.port, timeout=30)
    conn.putrequest("POST", "/chat")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(api.service.settings.max_body_bytes + 1))
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    assert resp.status == 413 and b"body_too_large" in body


def test_retrieve_accepts_camel_case_options(api):
    status, _, body = api.call("POST", "/retrieve", {"query": "annual leave", "tableName": "srv",
                                                     "retrievalK": 2, "retrievalMode": "fts_only"})
    assert status == 200, body
    assert body["index"] == "srv" and body["mode"] == "fts_only" and len(body["results"]) <= 2
    assert body["results"][0]["document_name"] == "leave-policy.txt"


def test_retrieve_unknown_index_is_404(api):
    status, _, body = api.call("POST", "/retrieve", {"query": "x", "index": "absent"})
    assert status == 404 and body["code"] == "index_not_found"


def test_request_id_is_echoed(api):
    _, headers, _ = api.call("GET", "/health", headers={"X-Request-Id": "abc-123"})
    assert headers["x-request-id"] == "abc-123"


def test_cors_preflight_allows_only_configured_origins(api):
    status, headers, _ = api.call("OPTIONS", "/chat/stream", headers={
        "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, authorization"})
    assert status == 204
    assert headers["access-control-allow-origin"] == "http://localhost:3000"
    assert "POST" in headers["access-control-allow-methods"]
    assert "authorization" in headers["access-control-allow-headers"].lower()
    status, headers, body = api.call("OPTIONS", "/chat/stream", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 403 and "access-control-allow-origin" not in headers
    _, headers, _ = api.call("GET", "/health", headers={"Origin": "http://127.0.0.1:3000"})
    assert headers["access-control-allow-origin"] == "http://127.0.0.1:3000"
    _, headers, _ = api.call("GET", "/health", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in headers


def test_token_is_required_on_every_route_but_health(tmp_path, embedder):
    settings = api_settings(tmp_path / "data", DOCENT_API_TOKEN="s3cret")
    with running_api(settings, embedder, token="s3cret") as api:
        assert api.call("GET", "/health", auth=False)[0] == 200
        for method, path in (("GET", "/models"), ("GET", "/metrics"), ("POST", "/chat"), ("POST", "/retrieve"),
                             ("POST", "/index"), ("GET", "/index/jobs/x"), ("DELETE", "/indexes/x")):
            status, headers, body = api.call(method, path, {"query": "x"}, auth=False)
            assert status == 401 and body["code"] == "unauthorized", (method, path)
            assert "bearer" in headers["www-authenticate"].lower()
        status, _, _ = api.call("GET", "/models", headers={"Authorization": "Bearer wrong"})
        assert status == 401
        assert api.call("GET", "/models")[0] == 200
        # Preflights carry no credentials, so they are answered without the token.
        status, _, _ = api.call("OPTIONS", "/chat", auth=False, headers={
            "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"})
        assert status == 204


def test_non_loopback_bind_without_token_refuses_to_start(tmp_path):
    env = {**os.environ, "DOCENT_DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("DOCENT_API_TOKEN", None)
    proc = subprocess.run([sys.executable, "-m", "rag_system", "api", "--host", "0.0.0.0", "--port", "0"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "DOCENT_API_TOKEN" in proc.stderr and "0.0.0.0" in proc.stderr


def test_health_is_503_when_the_index_writer_is_down(tmp_path, embedder):
    settings = api_settings(tmp_path / "data", DOCENT_CORS_ORIGINS="*,http://app.local:3000/")
    with running_api(settings, embedder) as api:
        assert api.service.cors_origins == frozenset({"http://app.local:3000"})
        assert api.call("GET", "/health")[0] == 200
        api.service.jobs.stop()
        status, _, body = api.call("GET", "/health")
        assert status == 503 and body["status"] == "unavailable"
        assert body["components"]["jobs"]["ok"] is False and body["components"]["embedder"]["ok"]


def test_truncated_body_is_400(api):
    import socket

    sock = socket.create_connection((api.host, api.port), timeout=30)
    sock.sendall(b"POST /chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                 b'{"query": ')
    sock.shutdown(socket.SHUT_WR)
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    sock.close()
    assert reply.startswith(b"HTTP/1.1 400") and b"incomplete_body" in reply
