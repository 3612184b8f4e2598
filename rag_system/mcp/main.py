"""`python -m rag_system mcp [--http [--host H] [--port P]]`: the MCP server, over stdio or streamable HTTP.

Over stdio (what Claude Desktop and IDEs start) the process speaks MCP on stdin/stdout and logs only
to stderr; its calls carry `DOCENT_MCP_TOKEN` (a person's `dpt_…` token, or a grant), else
`DOCENT_API_TOKEN` (never the token derived from the accounts' secret: reading the data folder
must not make a process an all-seeing service). Over HTTP every request must carry `Authorization: Bearer <token>`,
checked before the MCP layer sees it by asking the gateway or the RAG API with that very token
(`http.py`); an install with no token and no accounts cannot serve it. Nothing heavy is imported
until the command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from rag_system.config import Settings


EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
DEFAULT_PORT = 8002


def add_command(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="run the MCP server for agents (stdio; --http for streamable HTTP)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")


def run_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from rag_system.api.access import effective_token, secret_of
    from rag_system.cli.running_api import api_url

    rag, gateway = api_url(settings), settings.gateway_url
    if not args.http:
        from rag_system.mcp.server import build_server

        token = os.environ.get("DOCENT_MCP_TOKEN", "").strip() or settings.api_token
        build_server(rag, gateway, lambda ctx: token).run("stdio")
        return EXIT_OK
    if not (effective_token(settings) or secret_of(settings)):
        sys.stderr.write("error: the MCP server's HTTP transport needs DOCENT_API_TOKEN (or accounts) on this "
                         "install, so that every request can be refused without a token\n")
        return EXIT_USAGE
    from rag_system.mcp.http import serve

    try:
        serve(rag, gateway, args.host, args.port)
    except OSError as exc:
        sys.stderr.write(f"error: cannot listen on {args.host}:{args.port}: {exc}\n")
        return EXIT_ERROR
    return EXIT_OK
