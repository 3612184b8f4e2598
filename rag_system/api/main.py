"""`python -m rag_system api [--host 127.0.0.1] [--port 8001]`: run the RAG API until stopped."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

from rag_system.config import ConfigError, Settings, environment_notes

log = logging.getLogger("rag_system.api")

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def add_command(sub: Any) -> None:
    api = sub.add_parser("api", help="run the RAG API service (HTTP, default 127.0.0.1:8001)")
    api.add_argument("--host", default=None, help="bind address (default RAG_API_HOST or 127.0.0.1)")
    api.add_argument("--port", type=int, default=None, help="port (default RAG_API_PORT or 8001; 0 = any free)")


def run_api(args: argparse.Namespace, settings: Settings) -> int:
    from common import logs
    from rag_system.api.access import effective_token
    from rag_system.api.server import check_bind

    logs.configure(logging.DEBUG if getattr(args, "verbose", False) else logging.INFO)
    for note in environment_notes():  # a migrated localGPT .env: what is used, what is not and why
        log.warning("%s", note)
    host = args.host or settings.api_host
    port = settings.api_port if args.port is None else args.port
    try:
        settings = settings.with_overrides(api_host=host, api_port=port)
        check_bind(host, effective_token(settings))  # before any model loads: fail fast
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    from rag_system.api.app import Service
    from rag_system.api.server import serve
    from rag_system.embedding.base import EmbedderLoadError

    try:
        service = Service(settings)
        server = serve(service, host, port)
    except EmbedderLoadError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    except OSError as exc:
        sys.stderr.write(f"error: cannot listen on {host}:{port}: {exc}\n")
        return EXIT_ERROR

    def stop(signum: int, frame: Any) -> None:
        log.info("stopping on %s", signal.Signals(signum).name)
        threading.Thread(target=server.shutdown, daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    log.info("RAG API listening", extra={"url": server.url, "auth": bool(settings.api_token)})
    sys.stderr.flush()
    try:
        server.serve_forever()
    finally:
        server.server_close()
        service.close()
    return EXIT_OK
