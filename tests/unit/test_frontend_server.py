"""The web app's static server: /config.json from the environment, /health, static files, no escapes."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator

import pytest

from frontend.server import ConfigError, FrontendConfig, content_security_policy, load_config, make_server


def test_config_defaults_and_overrides() -> None:
    cfg = load_config(env={})
    assert (cfg.host, cfg.port, cfg.gateway_url, cfg.rag_url, cfg.api_token) == (
        "127.0.0.1", 3000, "http://127.0.0.1:8000", "http://127.0.0.1:8001", "")
    assert cfg.public() == {"gatewayUrl": "http://127.0.0.1:8000", "ragUrl": "http://127.0.0.1:8001"}
    cfg = load_config(port=0, env={"DOCENT_GATEWAY_PUBLIC_URL": "https://docent.example/api/", "FRONTEND_PORT": "9",
                                   "DOCENT_RAG_PUBLIC_URL": "http://10.0.0.2:8001", "DOCENT_FRONTEND_API_TOKEN": "t0k"})
    assert cfg.port == 0 and cfg.gateway_url == "https://docent.example/api"
    assert cfg.public()["apiToken"] == "t0k"
    assert load_config(env={"FRONTEND_PORT": "3100"}).port == 3100


@pytest.mark.parametrize("env", [{"FRONTEND_PORT": "web"}, {"FRONTEND_PORT": "70000"},
                                 {"DOCENT_GATEWAY_PUBLIC_URL": "ftp://x"}, {"DOCENT_RAG_PUBLIC_URL": "localhost:8001"}])
def test_bad_settings_name_the_variable(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=next(iter(env))):
        load_config(env=env)


def test_csp_allows_only_the_two_services() -> None:
    csp = content_security_policy(FrontendConfig(gateway_url="http://gw:8000/x", rag_url="https://rag"))
    assert "script-src 'self';" in csp and "unsafe" not in csp
    assert "connect-src 'self' http://gw:8000 https://rag" in csp


@pytest.fixture()
def server() -> Iterator[tuple[str, int]]:
    srv = make_server(FrontendConfig(port=0, gateway_url="http://127.0.0.1:8100", rag_url="http://127.0.0.1:8101"))
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_address[:2]
    srv.shutdown()
    srv.server_close()


def get(addr: tuple[str, int], path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(*addr, timeout=10)
    conn.request(method, path)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body


def test_serves_config_health_and_app(server: tuple[str, int]) -> None:
    status, headers, body = get(server, "/config.json")
    assert status == 200 and json.loads(body) == {"gatewayUrl": "http://127.0.0.1:8100", "ragUrl": "http://127.0.0.1:8101"}
    assert headers["cache-control"] == "no-store"
    status, _, body = get(server, "/health")
    assert status == 200 and json.loads(body)["service"] == "frontend"
    status, headers, body = get(server, "/")
    assert status == 200 and b'<script type="module" src="/js/main.js">' in body
    assert "connect-src 'self' http://127.0.0.1:8100 http://127.0.0.1:8101" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    status, headers, _ = get(server, "/js/main.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert get(server, "/chat/0123")[0] == 200  # SPA fallback for app routes
    assert get(server, "/js/nothing.js")[0] == 404


def test_no_inline_handlers_in_the_app() -> None:
    from frontend.server import STATIC

    for path in STATIC.rglob("*"):
        if path.suffix in (".html", ".js"):
            text = path.read_text()
            assert " onclick=" not in text and " onload=" not in text and "<script>" not in text, path
            assert "innerHTML = " not in text or path.name == "markdown.js", path  # only sanitised output


def test_never_serves_outside_static(server: tuple[str, int]) -> None:
    for path in ("/../server.py", "/%2e%2e/server.py", "/..%2fserver.py", "/vendor/../server.py",
                 "/vendor/marked/package.json", "/node_modules/marked/lib/marked.esm.js"):
        status, _, body = get(server, path)
        assert status in (404, 200) and b"ThreadingHTTPServer" not in body, path
        if status == 200:
            assert b"<!doctype html>" in body  # only the SPA shell ever comes back
    assert get(server, "/", method="POST")[0] == 405
