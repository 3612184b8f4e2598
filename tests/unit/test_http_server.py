"""`common.server`: the request loop both services share, on a toy service (no gateway, no RAG API)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator

import pytest

from common.errors import ApiError
from common.http import Response, Route, RouteTable
from common.server import JsonHTTPServer, JsonRequestHandler

ORIGIN = "http://app.test"


def _boom(params: dict[str, str]) -> Response:
    raise RuntimeError("a bug")


def _busy(params: dict[str, str]) -> Response:
    raise ApiError(503, "busy", "try again")


ROUTES = RouteTable([Route("GET", "/items/{name}", lambda params: Response.json({"name": params["name"]})),
                     Route("POST", "/items", lambda params: Response.json({"ok": True})),
                     Route("GET", "/boom", _boom), Route("GET", "/busy", _busy),
                     Route("GET", "/file", lambda params: Response(200, iter([b"a", b"b"]), "text/plain"))])


class ToyHandler(JsonRequestHandler):
    service_name = "toy"
    observed: list[tuple[str, str, int]] = []

    def handle_route(self, route: Route, params: dict[str, str]) -> object:
        return route.handler(params)

    def observe(self, route_label: str, method: str, status: int, seconds: float) -> None:
        self.observed.append((route_label, method, status))


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = JsonHTTPServer(("127.0.0.1", 0), ToyHandler)
    server.router, server.cors_origins, server.body_limit = ROUTES, (ORIGIN,), 100
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _raw(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


def test_answers_errors_and_bugs_in_json_with_the_request_id(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/items/a%20b", headers={"X-Request-ID": "rid-1"})
    reply = conn.getresponse()
    assert json.loads(reply.read()) == {"name": "a b"} and reply.getheader("x-request-id") == "rid-1"
    assert reply.getheader("cache-control") == "no-store" and reply.getheader("x-content-type-options") == "nosniff"
    conn.request("GET", "/boom", headers={"X-Request-ID": "rid-2"})
    reply = conn.getresponse()
    body = json.loads(reply.read())
    assert reply.status == 500 and body["code"] == "internal_error" and body["request_id"] == "rid-2"
    assert "toy" in body["message"] and "a bug" not in body["message"]
    conn.request("GET", "/busy")
    reply = conn.getresponse()
    assert reply.status == 503 and json.loads(reply.read())["code"] == "busy"
    conn.request("DELETE", "/items")
    reply = conn.getresponse()
    assert reply.status == 405 and reply.getheader("allow") == "POST" and reply.read()
    assert ("/boom", "GET", 500) in ToyHandler.observed and ("unmatched", "DELETE", 405) in ToyHandler.observed


def test_head_iterable_bodies_and_an_unread_body(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("HEAD", "/items/x")
    reply = conn.getresponse()
    assert reply.status == 200 and reply.read() == b"" and int(reply.getheader("content-length")) > 0
    conn.request("GET", "/file")
    reply = conn.getresponse()
    assert reply.read() == b"ab" and reply.getheader("connection") == "close"  # no length: the close ends it
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/missing", body=b"x" * 50)
    reply = conn.getresponse()
    assert reply.status == 404 and reply.getheader("connection") == "close"  # the body was never read
    reply.read()


def test_preflight_from_the_route_table(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("OPTIONS", "/items", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"})
    reply = conn.getresponse()
    reply.read()
    assert reply.status == 204 and reply.getheader("access-control-allow-origin") == ORIGIN
    assert reply.getheader("access-control-allow-methods") == "POST, OPTIONS" and reply.getheader("vary") == "Origin"
    assert reply.getheader("content-length") is None and reply.getheader("content-type") is None
    conn.request("OPTIONS", "/items", headers={"Origin": "http://evil.test"})
    reply = conn.getresponse()
    assert reply.status == 403 and json.loads(reply.read())["code"] == "origin_not_allowed"
    assert reply.getheader("access-control-allow-origin") is None
    conn.request("OPTIONS", "/nowhere", headers={"Origin": ORIGIN})
    reply = conn.getresponse()
    assert reply.status == 404 and reply.read()
    assert ("preflight", "OPTIONS", 404) in ToyHandler.observed


def test_protocol_errors_and_oversized_bodies_are_json(port: int) -> None:
    head, _, body = _raw(port, b"BREW /items HTTP/1.1\r\nHost: x\r\n\r\n").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501") and json.loads(body)["code"] == "method_not_implemented"
    head, _, body = _raw(port, b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 414") and json.loads(body)["code"] == "uri_too_long"
    head, _, body = _raw(port, b"POST /items HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n"
                               b"Expect: 100-continue\r\n\r\n").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and json.loads(body)["code"] == "body_too_large"
