"""The real services as subprocesses on free loopback ports, for tests/ and eval/ alike.

`GatewayProcess` runs `python -m backend`, `RagApiProcess` runs
`python -m rag_system api`; both share one temporary `DOCENT_DATA_DIR`, and
each carries a `testkit.client.Client`, so callers exercise exactly what a
browser or a script would.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testkit import REPO_ROOT
from testkit.client import Client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCENT_", "RAG_API", "GATEWAY_", "DB_PATH"))}
    env.update({"DOCENT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    env.update(extra)
    return env


class _Process:
    name = "process"

    def __init__(self, args: list[str], env: dict[str, str], port: int, log_path: Path, token: str = "") -> None:
        self.args, self.env, self.port, self.log_path = args, env, port, log_path
        self.url = f"http://127.0.0.1:{port}"
        self.client = Client(self.url, token)
        self.proc: subprocess.Popen[bytes] | None = None
        self.cwd: Path = REPO_ROOT

    def start(self, wait_s: float, ready_status: tuple[int, ...] = (200,)) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(self.args, env=self.env, cwd=self.cwd, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                if self.client.get("/health", timeout=10).status in ready_status:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not become ready in {wait_s} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if getattr(self, "_log", None):
            self._log.close()


class GatewayProcess(_Process):
    name = "gateway"

    def __init__(self, data_dir: Path, port: int | None = None, rag_url: str | None = None,
                 token: str = "", **env: str) -> None:
        port = port or free_port()
        extra = {"RAG_API_URL": rag_url or f"http://127.0.0.1:{free_port()}", **env}
        if token:
            extra["DOCENT_API_TOKEN"] = token
        super().__init__([sys.executable, "-m", "backend", "--port", str(port)], base_env(data_dir, **extra),
                         port, data_dir.parent / f"gateway-{port}.log", token)


class RagApiProcess(_Process):
    name = "RAG API"

    def __init__(self, data_dir: Path, port: int, gateway_url: str, token: str = "",
                 log_dir: Path | None = None, **env: str) -> None:
        extra = {"DOCENT_GATEWAY_URL": gateway_url, "LLM_BACKEND": "extractive", "LLM_PRELOAD": "false",
                 "RERANK": "false", "OCR_ENGINE": "none", **env}
        if token:
            extra["DOCENT_API_TOKEN"] = token
        super().__init__([sys.executable, "-m", "rag_system", "api", "--port", str(port)],
                         base_env(data_dir, **extra), port, (log_dir or data_dir.parent) / f"rag-api-{port}.log", token)


@contextmanager
def linked_services(data_dir: Path, gateway_env: dict[str, str] | None = None,
                    **rag_env: str) -> Iterator[tuple[GatewayProcess, RagApiProcess]]:
    """A gateway and a RAG API that know each other's ports, started in that order and always stopped.

    Why one helper: each test of the two services together needs the same dance (both ports before
    either starts, the gateway stopped when the RAG API fails to start), and copies of it drifted.
    """
    gw_port, rag_port = free_port(), free_port()
    gw = GatewayProcess(data_dir, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", **(gateway_env or {}))
    rag = RagApiProcess(data_dir, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", log_dir=None, **rag_env)
    gw.start(wait_s=30)
    try:
        rag.start(wait_s=240)
    except BaseException:
        gw.stop()
        raise
    try:
        yield gw, rag
    finally:
        rag.stop()
        gw.stop()
