"""What to run: one `ServiceSpec` per service, built from the flags and the environment.

Why the launcher passes `--host/--port` and the peer URLs explicitly: each
service has its own defaults (`RAG_API_PORT`, `GATEWAY_PORT`, ...), and the
launcher's flags must win over them so the three always agree on where the
others listen.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PORTS = {"rag-api": 8001, "gateway": 8000, "frontend": 3000}
PORT_ENV = {"rag-api": "RAG_API_PORT", "gateway": "GATEWAY_PORT", "frontend": "FRONTEND_PORT"}


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    argv: tuple[str, ...]
    host: str
    port: int
    env: Mapping[str, str] = field(default_factory=dict)
    start_deadline_s: float = 60.0  # how long the first /health may take

    @property
    def url(self) -> str:
        return f"http://{_url_host(self.host)}:{self.port}"


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def frontend_available(root: Path = REPO_ROOT) -> bool:
    """The frontend is started only once its package is in the tree."""
    return (root / "frontend" / "__init__.py").is_file() or (root / "frontend" / "__main__.py").is_file()


def resolve_port(name: str, flag: int | None, environ: Mapping[str, str]) -> int:
    if flag is not None:
        return flag
    raw = environ.get(PORT_ENV[name], "")
    return int(raw) if raw.strip().isdigit() else DEFAULT_PORTS[name]


def build_specs(host: str, ports: Mapping[str, int], with_frontend: bool,
                environ: Mapping[str, str] | None = None, rag_deadline_s: float = 300.0) -> list[ServiceSpec]:
    """The services in start order: RAG API, gateway, then (optionally) the frontend."""
    env = dict(os.environ if environ is None else environ)
    py = sys.executable
    rag = ServiceSpec("rag-api", (py, "-m", "rag_system", "api", "--host", host, "--port", str(ports["rag-api"])),
                      host, ports["rag-api"], start_deadline_s=rag_deadline_s)
    gateway = ServiceSpec("gateway", (py, "-m", "backend", "--host", host, "--port", str(ports["gateway"])),
                          host, ports["gateway"])
    shared = {"RAG_API_URL": rag.url, "DOCENT_GATEWAY_URL": gateway.url}
    if with_frontend and not env.get("DOCENT_CORS_ORIGINS"):
        shared["DOCENT_CORS_ORIGINS"] = ",".join(sorted({
            f"http://localhost:{ports['frontend']}", f"http://127.0.0.1:{ports['frontend']}",
            f"http://{_url_host(host)}:{ports['frontend']}"}))
    specs = [ServiceSpec(rag.name, rag.argv, rag.host, rag.port, shared, rag.start_deadline_s),
             ServiceSpec(gateway.name, gateway.argv, gateway.host, gateway.port, shared)]
    if with_frontend:
        # The browser calls both services directly: tell the web app where they are, unless set.
        public = {name: url for name, url in (("DOCENT_GATEWAY_PUBLIC_URL", gateway.url),
                                              ("DOCENT_RAG_PUBLIC_URL", rag.url)) if not env.get(name)}
        specs.append(ServiceSpec("frontend", (py, "-m", "frontend"), host, ports["frontend"],
                                 {**shared, **public, "FRONTEND_HOST": host, "FRONTEND_PORT": str(ports["frontend"])}))
    return specs


def child_environment(spec: ServiceSpec, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment plus the service's wiring; the repo is put on PYTHONPATH
    so the services import from this checkout whatever the working directory is."""
    env = dict(os.environ if environ is None else environ)
    env.update(spec.env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env["PYTHONUNBUFFERED"] = "1"
    return env
