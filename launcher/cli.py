"""`python run_system.py [--mode dev|prod] [--no-frontend] [--health | --stop | --logs | --logs-only] [--host ...]`.

`--mode` and `--logs-only` are localGPT's launcher flags: `dev` logs at DEBUG level (the services
are the same processes: none of them has a reload mode), `prod` is the default; `--logs-only`
is `--logs`.

The command line prints to stdout for people; the launcher's own events are
JSON lines in `logs/launcher.log`, next to one file per service.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from common.logs import JsonFormatter
from launcher import control, health, pidfile
from launcher.logs import file_logger, follow
from launcher.services import ServiceSpec, build_specs, frontend_available, resolve_port
from launcher.supervisor import StartupError, Supervisor

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run_system.py", description="Start, check and stop Docent's services.")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--health", action="store_true", help="check every service over HTTP; exit 1 if one is not healthy")
    action.add_argument("--stop", action="store_true", help="stop a running launcher and all its services")
    action.add_argument("--logs", "--logs-only", dest="logs", action="store_true",
                        help="follow all service logs (Ctrl-C to quit); --logs-only is localGPT's name")
    p.add_argument("--mode", choices=("dev", "prod"), default="prod",
                   help="localGPT's flag: dev logs at DEBUG level (DOCENT_LOG_LEVEL), prod (default) at INFO")
    p.add_argument("--no-frontend", action="store_true", help="do not start the frontend")
    p.add_argument("--host", default=None, help="bind address of every service (default 127.0.0.1; "
                                                 "anything else needs DOCENT_API_TOKEN)")
    p.add_argument("--rag-port", type=int, default=None, help="RAG API port (default RAG_API_PORT or 8001)")
    p.add_argument("--gateway-port", type=int, default=None, help="gateway port (default GATEWAY_PORT or 8000)")
    p.add_argument("--frontend-port", type=int, default=None, help="frontend port (default FRONTEND_PORT or 3000)")
    p.add_argument("--log-dir", type=Path, default=Path("logs"), help="logs and pid file (default ./logs)")
    p.add_argument("--watch-interval", type=float, default=10.0,
                   help="seconds between health checks of running services; a service that was healthy and "
                        "then fails 3 checks in a row is restarted (default 10)")
    p.add_argument("--start-timeout", type=float, default=300.0,
                   help="seconds the RAG API may take to load its models (default 300)")
    return p


def _launcher_logging(log_dir: Path) -> None:
    logger = file_logger("launcher", log_dir)
    for handler in logger.handlers:
        handler.setFormatter(JsonFormatter())
    app = logging.getLogger("docent.launcher")
    app.handlers[:] = list(logger.handlers)
    app.propagate = False
    app.setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.mode == "dev":
        os.environ.setdefault("DOCENT_LOG_LEVEL", "DEBUG")  # the services inherit it (launcher/services.py)
    log_dir: Path = args.log_dir.resolve()
    pid_path = log_dir / pidfile.PID_FILE_NAME
    host = args.host or "127.0.0.1"
    ports = {name: resolve_port(name, getattr(args, flag), os.environ)
             for name, flag in (("rag-api", "rag_port"), ("gateway", "gateway_port"), ("frontend", "frontend_port"))}
    with_frontend = frontend_available() and not args.no_frontend
    specs = build_specs(host, ports, with_frontend, rag_deadline_s=args.start_timeout)

    if args.stop:
        ok, message = control.stop(pid_path)
        print(message)
        return EXIT_OK if ok else EXIT_FAIL
    if args.logs:
        if not log_dir.is_dir():
            print(f"no logs yet in {log_dir}")
            return EXIT_FAIL
        try:
            follow(log_dir, sys.stdout)
        except KeyboardInterrupt:
            pass
        return EXIT_OK
    if args.health:
        explicit = any(v is not None for v in (args.host, args.rag_port, args.gateway_port, args.frontend_port))
        results = control.check_all(pid_path, specs, explicit)
        print(health.table(results))
        return EXIT_OK if all(r.healthy for r in results) else EXIT_FAIL
    return run(specs, log_dir, pid_path, with_frontend, args.watch_interval)


def run(specs: list[ServiceSpec], log_dir: Path, pid_path: Path, with_frontend: bool,
        watch_interval_s: float = 10.0) -> int:
    """Start everything, print a summary, supervise until Ctrl-C/SIGTERM, stop everything."""
    running = pidfile.running_launcher(pid_path)
    if running is not None:
        print(f"error: a launcher already runs (pid {running.launcher.pid}); "
              f"use `run_system.py --stop` first or another --log-dir", file=sys.stderr)
        return EXIT_USAGE
    host = specs[0].host
    if host not in ("127.0.0.1", "localhost", "::1") and not os.environ.get("DOCENT_API_TOKEN"):
        print(f"error: binding {host} exposes the services; set DOCENT_API_TOKEN first", file=sys.stderr)
        return EXIT_USAGE
    _launcher_logging(log_dir)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    supervisor = Supervisor(specs, log_dir, stop, watch_interval_s=watch_interval_s)
    print(f"starting {', '.join(s.name for s in specs)} (logs in {log_dir})"
          + ("" if with_frontend else "; frontend not started"), flush=True)
    try:
        results = supervisor.start_all()
    except StartupError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        supervisor.stop_all()
        return EXIT_FAIL
    print(summary(specs, results, supervisor), flush=True)
    try:
        supervisor.watch()
    finally:
        print("stopping...", flush=True)
        supervisor.stop_all()
        print("stopped", flush=True)
    return EXIT_OK


def summary(specs: list[ServiceSpec], results: list[health.HealthResult], supervisor: Supervisor) -> str:
    lines = ["Docent is up:"]
    for spec, child in zip(specs, supervisor.children):
        pid = child.popen.pid if child.popen else "-"
        lines.append(f"  {spec.name:<9} {spec.url:<28} pid {pid}")
    rag = results[0].body if results else None
    llm = (rag or {}).get("components", {}).get("llm", {}) if isinstance(rag, dict) else {}
    if llm:
        lines.append(f"  answers by: {llm.get('chosen', '?')} (LLM_BACKEND={llm.get('configured', '?')})")
        ollama = next((b for b in llm.get("backends", []) if b.get("name") == "ollama"), None)
        if ollama is not None:  # optional: reported, never required
            where = os.environ.get("OLLAMA_HOST") or "OLLAMA_HOST default"
            state = "reachable, used" if llm.get("chosen") == "ollama" else \
                f"not used ({ollama.get('detail') or 'unavailable'})"
            lines.append(f"  Ollama ({where}): {state}")
    lines.append("Ctrl-C (or `run_system.py --stop`) stops everything; `run_system.py --health` checks it.")
    return "\n".join(lines)
