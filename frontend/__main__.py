"""`python -m frontend [--port 3000] [--host 127.0.0.1]`: serve the web app."""

from __future__ import annotations

import argparse
import json
import sys

from frontend.server import ConfigError, load_config, make_server, serve, vendor_installed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m frontend", description="Serve the Docent web app.")
    parser.add_argument("--host", default=None, help="bind address (default FRONTEND_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default FRONTEND_PORT or 3000; 0 = any free port)")
    args = parser.parse_args(argv)
    try:
        config = load_config(host=args.host, port=args.port)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server = make_server(config)
    host, port = server.server_address[:2]
    assert isinstance(host, str)  # getsockname() of an IP socket (the stub's type also admits bytes)
    print(json.dumps({"msg": "listening", "url": f"http://{host}:{port}", "gateway": config.gateway_url,
                      "rag_api": config.rag_url}), file=sys.stderr, flush=True)
    if not vendor_installed():
        print("warning: frontend/node_modules is missing; run `make setup` (npm ci)", file=sys.stderr, flush=True)
    serve(server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
