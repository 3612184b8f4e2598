"""Pure parts of the RAG API: routing, metrics text, SSE frames and liveness, bind rule, turn records."""

from __future__ import annotations

import json
import socket
import time

import pytest

from common.errors import ApiError
from common.http import RouteTable
from common.net import is_loopback
from common.sse import SSEStream, frame
from rag_system.api.metrics import Metrics
from rag_system.api.routes import ROUTES
from rag_system.api.server import check_bind
from rag_system.config import ConfigError


def test_router_matches_patterns_and_reports_405_and_404():
    router = RouteTable(ROUTES)
    route, params = router.match("GET", "/index/jobs/abc123/events")
    assert route.pattern == "/index/jobs/{job_id}/events" and params == {"job_id": "abc123"}
    assert router.match("DELETE", "/indexes/x")[1] == {"name": "x"}
    with pytest.raises(ApiError) as info:
        router.match("PUT", "/chat")
    assert info.value.status == 405 and info.value.headers["Allow"] == "POST"
    with pytest.raises(ApiError) as info:
        router.match("GET", "/index/jobs/a/b/c")
    assert info.value.status == 404
    assert router.match("GET", "/health")[0].public


def test_metrics_text_has_counts_histograms_and_gauges():
    m = Metrics()
    m.observe("/chat", "POST", 200, 0.02)
    m.observe("/chat", "POST", 200, 3.0)
    m.observe("/chat", "POST", 400, 0.001)
    m.gauge("docent_x", "gauge", "a gauge", lambda: [({"index": 'a"b'}, 3.0)])
    m.gauge("docent_broken", "gauge", "fails", lambda: 1 / 0)
    text = m.render()[0].decode()
    assert 'docent_rag_requests_total{method="POST",route="/chat",status="200"} 2' in text
    assert 'docent_rag_request_duration_seconds_bucket{le="0.025",route="/chat"} 2' in text
    assert 'docent_rag_request_duration_seconds_bucket{le="+Inf",route="/chat"} 3' in text
    assert 'docent_rag_request_duration_seconds_count{route="/chat"} 3' in text
    assert 'docent_x{index="a\\"b"} 3' in text
    assert "docent_broken unavailable" in text
    assert 'docent_rag_requests_total{method="POST",route="/chat",status="400"} 1' in text


def test_sse_frame_format():
    raw = frame("token", {"text": "hé"})
    assert raw.startswith(b"data: ") and raw.endswith(b"\n\n")
    assert json.loads(raw[6:]) == {"type": "token", "data": {"text": "hé"}}


def test_sse_heartbeat_and_disconnect_detection():
    server, client = socket.socketpair()
    try:
        stream = SSEStream(server.makefile("wb", buffering=0), server, heartbeat_s=0.1).start()
        assert stream.send("analyze", {"q": 1})
        time.sleep(0.8)
        client.settimeout(2)
        received = client.recv(65536)
        assert b'"type":"analyze"' in received and b": heartbeat\n\n" in received
        client.close()
        deadline = time.monotonic() + 3
        while not stream.cancel.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stream.cancel.is_set()
        assert stream.send("token", {"text": "x"}) is False
        stream.close()
    finally:
        server.close()


@pytest.mark.parametrize("host, token, ok", [
    ("127.0.0.1", "", True), ("localhost", "", True), ("::1", "", True), ("127.0.0.2", "", True),
    ("0.0.0.0", "", False), ("", "", False), ("192.168.1.5", "", False), ("0.0.0.0", "t", True),
])
def test_bind_rule(host, token, ok):
    if not token:
        assert is_loopback(host) == ok
    if ok:
        check_bind(host, token)
    else:
        with pytest.raises(ConfigError, match="DOCENT_API_TOKEN"):
            check_bind(host, token)


def test_json_logs_carry_extra_fields_and_keep_questions_out(capsys):
    import logging

    from common import logs

    previous = logging.getLogger().handlers[:], logging.getLogger().level
    try:
        logs.configure(logging.INFO)
        logging.getLogger("rag_system.api.access").info("request", extra={"route": "/chat", "status": 200})
        # The agent logs rewritten questions only at DEBUG (see agent/followup.py).
        logging.getLogger("rag_system.agent.followup").debug("memory: discarded LLM rewrite %r", "my private question")
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    finally:
        logging.getLogger().handlers[:] = previous[0]
        logging.getLogger().setLevel(previous[1])
    assert lines == [{**lines[0], "msg": "request", "route": "/chat", "status": 200, "level": "info"}]
    assert "private" not in json.dumps(lines)
