"""`python -m backend [--host 127.0.0.1] [--port 8000]`: run the gateway until interrupted.

`python -m backend import-localgpt --db …` imports a localGPT install (backend/import_cli.py);
`python -m backend create-user NAME --role R --password-stdin` and `python -m backend audit verify`
manage accounts (backend/accounts_cli.py); `python -m backend backup <dir>` and `restore <dir>`
back up a running Docent and restore it into an empty data folder (backend/backup_cli.py).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from backend.config import GatewayConfigError, load_gateway_config
from common import logs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend", description="Docent gateway")
    parser.add_argument("--host", default=None, help="bind address (default GATEWAY_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default GATEWAY_PORT or 8000)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["create-user"]:
        from backend.accounts_cli import create_user

        return create_user(argv[1:])
    if argv[:1] == ["audit"]:
        from backend.accounts_cli import audit

        return audit(argv[1:])
    if argv[:1] in (["backup"], ["restore"]):
        from backend.backup_cli import backup_main, restore_main

        return (backup_main if argv[0] == "backup" else restore_main)(argv[1:])
    if argv[:1] == ["import-localgpt"]:
        from backend.import_cli import main as import_main

        return import_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        config = load_gateway_config()
    except GatewayConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    logs.configure(getattr(logging, config.log_level, logging.INFO))
    host = args.host or config.host
    port = config.port if args.port is None else args.port
    from backend.app import App
    from backend.server import serve

    app = App.build(config)
    try:
        config.check_bind(host, accounts=app.auth.enabled())
    except GatewayConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        app.close()
        return 2
    try:
        server = serve(app, host, port)
    except OSError as exc:
        sys.stderr.write(f"error: cannot listen on {host}:{port}: {exc}\n")
        app.close()
        return 1

    def _stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    logging.getLogger("backend").info("gateway listening", extra={
        "host": host, "port": server.server_address[1], "rag_api": config.rag_api_url})
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
