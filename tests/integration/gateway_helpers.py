"""Real servers for the gateway's integration tests: subprocesses on free loopback ports.

`GatewayProcess` runs `python -m backend`, `RagApiProcess` runs
`python -m rag_system api`; both share one temporary `DOCENT_DATA_DIR`.
`Client` speaks plain HTTP with urllib (no proxies), so the tests exercise
exactly what a browser or a script would.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT

RAG_API_PRESENT = (REPO_ROOT / "rag_system" / "api" / "main.py").is_file()
RAG_API_MISSING_REASON = ("the RAG API (rag_system/api, branch rag-api) has not landed in this tree yet; "
                          "these tests run against a real `python -m rag_system api`")


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


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Client:
    def __init__(self, base_url: str, token: str = "") -> None:
        self.base_url = base_url
        self.token = token
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None, timeout: float = 120.0) -> Reply:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if body is not None and raw is None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with self.opener.open(req, timeout=timeout) as resp:
                return Reply(resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())

    def get(self, path: str, **kw: Any) -> Reply:
        return self.call("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.call("POST", path, body, **kw)

    def delete(self, path: str, **kw: Any) -> Reply:
        return self.call("DELETE", path, **kw)

    def upload(self, path: str, files: list[tuple[str, bytes]], field: str = "files") -> Reply:
        body, ctype = multipart_body(files, field)
        return self.call("POST", path, raw=body, headers={"Content-Type": ctype})


def multipart_body(files: list[tuple[str, bytes]], field: str = "files") -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    out = b""
    for name, data in files:
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\n"
                f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


class _Process:
    name = "process"

    def __init__(self, args: list[str], env: dict[str, str], port: int, log_path: Path, token: str = "") -> None:
        self.args, self.env, self.port, self.log_path = args, env, port, log_path
        self.url = f"http://127.0.0.1:{port}"
        self.client = Client(self.url, token)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, wait_s: float, ready_status: tuple[int, ...] = (200,)) -> None:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(self.args, env=self.env, cwd=REPO_ROOT, stdout=self._log, stderr=self._log)
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

    def __init__(self, data_dir: Path, port: int, gateway_url: str, token: str = "", **env: str) -> None:
        extra = {"DOCENT_GATEWAY_URL": gateway_url, "LLM_BACKEND": "extractive", "LLM_PRELOAD": "false",
                 "RERANK": "false", "OCR_ENGINE": "none", **env}
        if token:
            extra["DOCENT_API_TOKEN"] = token
        super().__init__([sys.executable, "-m", "rag_system", "api", "--port", str(port)],
                         base_env(data_dir, **extra), port, data_dir.parent / f"rag-api-{port}.log", token)
