"""A small stdlib static server for the web app.

Serves `frontend/static/`, the two npm packages the app imports (from
`frontend/node_modules`, installed by `make setup`; never copied into the
repository) under `/vendor/`, `/config.json` built from the environment at
start-up (so changing a URL needs no rebuild) and `/health`.
"""

from __future__ import annotations

import json
import mimetypes
import os
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

#: Every environment variable this module reads (checked against the docs by a unit test).
ENV_VARS = ("FRONTEND_HOST", "FRONTEND_PORT", "DOCENT_GATEWAY_PUBLIC_URL", "DOCENT_RAG_PUBLIC_URL",
            "DOCENT_FRONTEND_API_TOKEN", "DOCENT_AUTH", "DOCENT_AUTH_SECRET", "DOCENT_DATA_DIR")

ROOT = Path(__file__).resolve().parent
STATIC = ROOT / "static"
NODE_MODULES = ROOT / "node_modules"
#: URL path under /vendor/ -> file inside node_modules (only these are served).
VENDOR = {
    "marked.esm.js": "marked/lib/marked.esm.js",
    "purify.es.mjs": "dompurify/dist/purify.es.mjs",
}
TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".html": "text/html",
         ".svg": "image/svg+xml", ".json": "application/json", ".png": "image/png", ".ico": "image/x-icon"}


class ConfigError(ValueError):
    """A setting cannot be used; the message names the variable."""


@dataclass(frozen=True)
class FrontendConfig:
    host: str = "127.0.0.1"
    port: int = 3000
    gateway_url: str = "http://127.0.0.1:8000"
    rag_url: str = "http://127.0.0.1:8001"
    api_token: str = ""
    # Scale-out: every query replica the browser may stream from (Documentation/scale-out.md).
    rag_urls: tuple[str, ...] = ()
    #: With accounts on the service token never goes to a browser (Documentation/security.md).
    accounts: bool = False
    #: The grant secret file: its appearing (the first user created) means accounts are on.
    secret_file: Path | None = None

    def accounts_on(self) -> bool:
        return self.accounts or (self.secret_file is not None and self.secret_file.is_file())

    def public(self) -> dict[str, str]:
        """What the browser gets at /config.json (the token only when explicitly configured).

        With several replicas each page load gets one at random, so browsers spread over them."""
        rag = random.choice(self.rag_urls) if self.rag_urls else self.rag_url
        out = {"gatewayUrl": self.gateway_url, "ragUrl": rag}
        if self.api_token and not self.accounts_on():
            out["apiToken"] = self.api_token
        return out


def _url(env: Mapping[str, str], name: str, default: str) -> str:
    value = (env.get(name) or default).strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{name} must be an http(s) URL, got {value!r}")
    return value


def load_config(host: str | None = None, port: int | None = None, env: Mapping[str, str] | None = None) -> FrontendConfig:
    env = os.environ if env is None else env
    host = host or env.get("FRONTEND_HOST") or "127.0.0.1"
    if port is None:
        raw = env.get("FRONTEND_PORT") or "3000"
        try:
            port = int(raw)
        except ValueError:
            raise ConfigError(f"FRONTEND_PORT must be a port number, got {raw!r}") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"FRONTEND_PORT must be 0-65535, got {port}")
    rags = [r for r in (env.get("DOCENT_RAG_PUBLIC_URL") or "").split(",") if r.strip()] or [""]
    rag_urls = tuple(_url({"DOCENT_RAG_PUBLIC_URL": r}, "DOCENT_RAG_PUBLIC_URL", "http://127.0.0.1:8001")
                     for r in rags)
    return FrontendConfig(host=host, port=port,
                          gateway_url=_url(env, "DOCENT_GATEWAY_PUBLIC_URL", "http://127.0.0.1:8000"),
                          rag_url=rag_urls[0], rag_urls=rag_urls,
                          api_token=(env.get("DOCENT_FRONTEND_API_TOKEN") or "").strip(),
                          accounts=(env.get("DOCENT_AUTH") or "").strip().lower() == "accounts"
                          or bool(env.get("DOCENT_AUTH_SECRET")),
                          secret_file=Path(env.get("DOCENT_DATA_DIR") or "data") / "auth.secret")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(config: FrontendConfig) -> str:
    rags = dict.fromkeys(_origin(u) for u in (config.rag_urls or (config.rag_url,)))
    apis = " ".join([_origin(config.gateway_url), *rags])
    return ("default-src 'self'; script-src 'self'; style-src 'self'; "
            f"img-src 'self' data: blob: {apis}; connect-src 'self' {apis}; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'")


class Handler(BaseHTTPRequestHandler):
    server_version = "DocentWeb"
    sys_version = ""
    config: FrontendConfig = FrontendConfig()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib signature)
        sys.stderr.write(json.dumps({"msg": "request", "line": format % args}) + "\n")

    def _send(self, status: int, body: bytes, ctype: str, *, cache: str = "no-cache", head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", content_security_policy(self.config))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, status: int, obj: object, head: bool = False) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", cache="no-store", head=head)

    def _file(self, path: Path, head: bool) -> None:
        ctype = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype == "application/json":
            ctype += "; charset=utf-8"
        self._send(200, path.read_bytes(), ctype, head=head)

    def _resolve(self, url_path: str) -> Path | None:
        if url_path.startswith("/vendor/"):
            rel = VENDOR.get(url_path[len("/vendor/"):])
            return (NODE_MODULES / rel) if rel else None
        rel = url_path.lstrip("/") or "index.html"
        target = (STATIC / rel).resolve()
        if not target.is_relative_to(STATIC):
            return None
        return target

    def _get(self, head: bool) -> None:
        path = urlsplit(self.path).path
        if path == "/health":
            vendor_ok = vendor_installed()
            return self._json(200, {"status": "ok" if vendor_ok else "degraded", "service": "frontend",
                                    "vendor": vendor_ok}, head)
        if path == "/config.json":
            return self._json(200, self.config.public(), head)
        target = self._resolve(path)
        if target is None or "\x00" in path:
            return self._json(404, {"error": {"code": "not_found", "message": f"no such file: {path}"}}, head)
        if target.is_file():
            return self._file(target, head)
        if path.startswith("/vendor/"):
            return self._json(503, {"error": {"code": "vendor_missing",
                                              "message": "frontend/node_modules is missing: run `make setup`"}}, head)
        if "." in path.rsplit("/", 1)[-1]:
            return self._json(404, {"error": {"code": "not_found", "message": f"no such file: {path}"}}, head)
        return self._file(STATIC / "index.html", head)  # SPA fallback

    def do_GET(self) -> None:  # noqa: N802
        self._get(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._get(head=True)

    def _refuse(self) -> None:
        self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815


def make_server(config: FrontendConfig) -> ThreadingHTTPServer:
    handler = type("ConfiguredHandler", (Handler,), {"config": config})
    server = ThreadingHTTPServer((config.host, config.port), handler)
    server.daemon_threads = True
    return server


def vendor_installed() -> bool:
    """Whether `npm ci` has put the Markdown renderer and sanitiser in frontend/node_modules."""
    return all((NODE_MODULES / rel).is_file() for rel in VENDOR.values())


def serve(server: ThreadingHTTPServer) -> None:
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
