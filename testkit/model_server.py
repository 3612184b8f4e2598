"""llama-cpp-python's own OpenAI-compatible server, as a subprocess that a fault can SIGKILL mid-answer.

Why a real server: the fault to prove is "the model server's process dies
while it streams", which only a real server process, killed for real, shows
(its socket closes with no `[DONE]` and no finish_reason, then it refuses
connections). It serves the packaged Qwen2.5-Coder-0.5B GGUF of `MODEL_ENV`,
with the same thread and context settings as the embedded `llamacpp` backend.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from testkit.processes import free_port
from testkit.stack import MODEL_ENV
from testkit.tripwire import Tripwire

log = logging.getLogger(__name__)


class ModelServerError(RuntimeError):
    """The server did not come up; the message ends with the tail of its log."""


class ModelServer:
    """`python -m llama_cpp.server` on a free loopback port, its log under `log_dir`."""

    def __init__(self, log_dir: Path, model: str = MODEL_ENV["LLM_GGUF"]) -> None:
        self.log_dir = log_dir
        self.model_setting = model
        self.port = 0
        self.model = ""  # the id the server reports at /v1/models
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._wire: Tripwire | None = None  # what the RAG API talks to: see testkit/tripwire.py

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def rag_env(self) -> dict[str, str]:
        """RAG API settings that send `backend: openai` to this server."""
        return {"OPENAI_BASE_URL": self.url, "OPENAI_MODEL": self.model}

    def start(self, wait_s: float = 180) -> ModelServer:
        from rag_system.generation.models import resolve_gguf

        path = resolve_gguf(self.model_setting)  # joins the packaged parts once, verified
        inner = free_port()
        self._wire = Tripwire(inner, self.kill9).start()
        self.port = self._wire.port
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_dir / f"llama-server-{self.port}.log"
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
               "--port", str(inner), "--n_threads", MODEL_ENV["LLM_THREADS"],
               "--n_ctx", MODEL_ENV["LLM_CONTEXT_TOKENS"]]
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as resp:  # noqa: S310 - loopback
                    self.model = json.load(resp)["data"][0]["id"]
                log.info("llama.cpp server %s serves %s", self.url, self.model)
                return self
            except (OSError, urllib.error.URLError, ValueError, KeyError, IndexError):
                time.sleep(0.3)
        self.stop()
        tail = log_path.read_text(errors="replace")[-1500:]
        raise ModelServerError(f"llama.cpp server on {self.port} did not come up in {wait_s} s:\n{tail}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill_on_first_token(self) -> None:
        """SIGKILL the server as soon as the first token of the next streamed completion has been sent."""
        assert self._wire is not None
        self._wire.arm()

    def killed_mid_stream(self) -> bool:
        return self._wire is not None and self._wire.tripped.is_set() and not self.alive()

    def kill9(self) -> None:
        """SIGKILL, as the OOM killer or a crash would: no response is finished, no socket closed cleanly."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._wire is not None:
            self._wire.close()
