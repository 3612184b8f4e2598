"""RAG API processes for the scale-out tests and benchmark: `python -m rag_system api` on loopback.

Each replica is a real separate process (its own LanceDB connection, its own
embedder), so what one sees of another's writes goes through the store only.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testkit.processes import free_port

READY_TIMEOUT_S = 180.0
STOP_GRACE_S = 10.0


class ReplicaError(RuntimeError):
    """A RAG API process exited or never became ready."""


@dataclass(frozen=True)
class Replica:
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def call(self, method: str, path: str, body: Any = None, timeout: float = 120.0) -> tuple[int, Any]:
        return call_json(self.port, method, path, body, timeout)


def call_json(port: int, method: str, path: str, body: Any = None, timeout: float = 120.0) -> tuple[int, Any]:
    """(status, decoded JSON body or None) of one request to a service on loopback."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def base_env(data_dir: Path) -> dict[str, str]:
    """A RAG API environment without models to download and without a gateway to save turns to."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCENT_", "AWS_", "LANCEDB_"))}
    env.update({"DOCENT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "LLM_PRELOAD": "false", "LLM_BACKEND": "extractive", "OLLAMA_HOST": "http://127.0.0.1:9",
                "DOCENT_GATEWAY_URL": "http://127.0.0.1:9", "SEMANTIC_CACHE": "false"})
    return env


def start(env: Mapping[str, str], log_path: Path) -> Replica:
    """Start one RAG API process (does not wait; see `wait_ready`)."""
    port = free_port()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rag_system", "api", "--host", "127.0.0.1",
                                 "--port", str(port)], env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return Replica(port, proc, log_path)


def wait_ready(replica: Replica, timeout: float = READY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if replica.process.poll() is not None:
            raise ReplicaError(f"RAG API on :{replica.port} exited with {replica.process.returncode}: "
                               f"{replica.log_path.read_text(errors='replace')[-3000:]}")
        try:
            status, _ = replica.call("GET", "/health", timeout=5)
            if status == 200:
                return
        except (OSError, http.client.HTTPException, json.JSONDecodeError):
            pass
        time.sleep(0.3)
    raise ReplicaError(f"RAG API on :{replica.port} not ready within {timeout:.0f} s")


def stop(replica: Replica) -> None:
    if replica.process.poll() is not None:
        return
    os.killpg(replica.process.pid, signal.SIGTERM)
    try:
        replica.process.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(replica.process.pid, signal.SIGKILL)
        replica.process.wait()


@contextmanager
def replicas(envs: list[Mapping[str, str]], log_dir: Path) -> Iterator[list[Replica]]:
    """Start all processes at once (they load their models in parallel), wait for each, stop all."""
    with ExitStack() as stack:
        started = []
        for i, env in enumerate(envs):
            replica = start(env, log_dir / f"rag-api-{i}.log")
            stack.callback(stop, replica)
            started.append(replica)
        for replica in started:
            wait_ready(replica)
        yield started
