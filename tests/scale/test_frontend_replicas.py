"""The web app can stream from any query replica: `DOCENT_RAG_PUBLIC_URL` may list several."""

from __future__ import annotations

import http.client
import json
import threading

import pytest

from frontend.server import ConfigError, content_security_policy, load_config, make_server

READERS = "http://127.0.0.1:8101, http://127.0.0.1:8102/"


def test_each_page_load_gets_one_of_the_replicas():
    cfg = load_config(port=0, env={"DOCENT_RAG_PUBLIC_URL": READERS})
    assert cfg.rag_urls == ("http://127.0.0.1:8101", "http://127.0.0.1:8102")
    assert cfg.rag_url == "http://127.0.0.1:8101"
    csp = content_security_policy(cfg)
    assert "connect-src 'self' http://127.0.0.1:8000 http://127.0.0.1:8101 http://127.0.0.1:8102;" in csp

    server = make_server(cfg)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seen = set()
    try:
        for _ in range(40):
            conn = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
            conn.request("GET", "/config.json")
            seen.add(json.loads(conn.getresponse().read())["ragUrl"])
            conn.close()
    finally:
        server.shutdown()
        server.server_close()
    assert seen == set(cfg.rag_urls)


def test_one_url_is_unchanged_and_bad_entries_are_named():
    assert load_config(env={}).public()["ragUrl"] == "http://127.0.0.1:8001"
    with pytest.raises(ConfigError, match="DOCENT_RAG_PUBLIC_URL"):
        load_config(env={"DOCENT_RAG_PUBLIC_URL": "http://a:1,b:2"})
