"""The gateway and the RAG API as real subprocesses, for the reliability tests and `eval.stress`.

Both share one `DOCENT_DATA_DIR` and one API token. A fault scenario kills a
process with SIGKILL (`kill9`) and starts it again on the same port
(`restart`); a snapshot of everything a user owns (sessions, messages,
indexes, stored files, chunk counts) lets a run prove that bad input changed
nothing. The processes come from `testkit.processes`, so
tests and the stress harness start the services exactly the same way.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.client import Client
from testkit.docs import make_pdf
from testkit.processes import GatewayProcess, RagApiProcess, free_port

TOKEN = "reliability-token-3f9c"
SEED_MD = ("# Zephyr turbine\n\nThe zephyr turbine produces 42 kilowatts at a wind speed of 12 metres per second.\n\n"
           "## Maintenance\n\nThe zephyr turbine gearbox is inspected every 18 months by a certified engineer.\n")
SEED_QUESTION = "How often is the zephyr turbine gearbox inspected?"
#: The real model the `llamacpp` backend loads on its first answer (browser tests, and the
#: reliability faults, which also serve it through llama-cpp-python's server). One thread: on two
#: shared cores two OpenMP threads were slower (Documentation/answering.md), and it leaves a core
#: to Chromium. 128 tokens bound a full answer (and its one repair).
MODEL_ENV = {"LLM_GGUF": "qwen2.5-coder-0.5b-instruct-q4_k_m", "LLM_THREADS": "1", "LLM_CONTEXT_TOKENS": "4096",
             "LLM_MAX_TOKENS": "128"}


@dataclass
class Seed:
    """Ids of the data a run starts with (bad input must leave all of it unchanged)."""

    session_id: str = ""
    index_id: str = ""
    document_id: str = ""
    document_sha: str = ""
    job_id: str = ""
    rag_job_id: str = ""
    message_id: str = ""  # the answer of the seed session's one turn
    extra: dict[str, str] = field(default_factory=dict)


class Stack:
    """A gateway and a RAG API on free loopback ports over one data directory."""

    def __init__(self, root: Path, token: str = TOKEN, gateway_env: dict[str, str] | None = None,
                 rag_env: dict[str, str] | None = None, data_dir: Path | None = None) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)  # the process logs go here
        self.data = data_dir or root / "data"
        self.token = token
        self.gw_port, self.rag_port = free_port(), free_port()
        self.gateway = GatewayProcess(self.data, port=self.gw_port, rag_url=f"http://127.0.0.1:{self.rag_port}",
                                      token=token, **(gateway_env or {}))
        self.rag = RagApiProcess(self.data, self.rag_port, gateway_url=f"http://127.0.0.1:{self.gw_port}",
                                 token=token, log_dir=None, **(rag_env or {}))
        self.gw: Client = self.gateway.client
        self.api: Client = self.rag.client
        self.seed = Seed()

    def start(self, rag_wait_s: float = 240) -> Stack:
        self.gateway.start(wait_s=30)
        try:
            self.rag.start(wait_s=rag_wait_s)
        except BaseException:
            self.gateway.stop()
            raise
        return self

    def stop(self) -> None:
        self.rag.stop()
        self.gateway.stop()

    def pids(self) -> dict[str, int]:
        return {name: p.proc.pid for name, p in (("gateway", self.gateway), ("rag_api", self.rag))
                if p.proc is not None and p.proc.poll() is None}

    def alive(self) -> dict[str, bool]:
        return {name: p.proc is not None and p.proc.poll() is None
                for name, p in (("gateway", self.gateway), ("rag_api", self.rag))}

    @staticmethod
    def kill9(process: GatewayProcess | RagApiProcess) -> None:
        """SIGKILL: no shutdown handler runs, exactly like a crash or the OOM killer."""
        assert process.proc is not None
        os.kill(process.proc.pid, signal.SIGKILL)
        process.proc.wait(10)
        process._log.close()

    @staticmethod
    def restart(process: GatewayProcess | RagApiProcess, wait_s: float = 240) -> None:
        process.proc = None
        process.start(wait_s=wait_s)

    # -- seed data -----------------------------------------------------------
    def make_seed(self, work: Path) -> Seed:
        """One index with a PDF and a Markdown file, built; one linked session with one answered turn."""
        gw = self.gw
        iid = _ok(gw.post("/indexes", {"name": "Seed index", "description": "reliability seed"}), 201)["index_id"]
        pdf = make_pdf(work / "seed.pdf").read_bytes()
        up = _ok(gw.upload(f"/indexes/{iid}/upload", [("seed.pdf", pdf), ("turbine.md", SEED_MD.encode())]))
        job = wait_build(gw, iid)
        sid = _ok(gw.post("/sessions", {"title": "Seed session"}), 201)["session_id"]
        _ok(gw.post(f"/sessions/{sid}/indexes/{iid}"))
        _ok(gw.post(f"/sessions/{sid}/messages", {"message": SEED_QUESTION}))
        first = up["uploaded_files"][0]
        answer = next(m for m in _ok(gw.get(f"/sessions/{sid}"))["messages"] if m["sender"] == "assistant")
        scratch = {"scratch_session": _ok(gw.post("/sessions", {"title": "Scratch"}), 201)["session_id"],
                   "scratch_index": _ok(gw.post("/indexes", {"name": "Scratch"}), 201)["index_id"]}
        self.seed = Seed(session_id=sid, index_id=iid, document_id=first["document_id"],
                         document_sha=first["sha256"], job_id=job["job_id"], rag_job_id=job["job_id"],
                         message_id=answer["id"], extra=scratch)
        return self.seed

    # -- integrity -------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything a user owns, as comparable values."""
        gw = self.gw
        sessions = {s["id"]: (s["title"], s["message_count"]) for s in _ok(gw.get("/sessions"))["sessions"]}
        messages = {sid: [(m["id"], m["sender"], _sha(m["content"])) for m in
                          _ok(gw.get(f"/sessions/{sid}"))["messages"]] for sid in sessions}
        indexes = {i["id"]: (i["name"], sorted(d["sha256"] for d in i["documents"]))
                   for i in _ok(gw.get("/indexes"))["indexes"]}
        chunks = {i["name"]: i["chunks"] for i in _ok(self.api.get("/indexes"))["indexes"]}
        return {"sessions": sessions, "messages": messages, "indexes": indexes, "chunks": chunks,
                "files": file_hashes(self.data / "uploads")}

    def outside_files(self) -> set[str]:
        """Files under the run's root but outside the data directory (logs excepted)."""
        out: set[str] = set()
        for dirpath, _dirs, files in os.walk(self.root):
            if Path(dirpath).resolve().is_relative_to(self.data.resolve()):
                continue
            out.update(os.path.join(dirpath, f) for f in files if not f.endswith(".log"))
        return out


def changed(before: dict[str, Any], after: dict[str, Any], ignore: AbstractSet[str] = frozenset()) -> list[str]:
    """What existed before and differs now (new sessions or indexes a valid request created are fine).

    `ignore`: ids of scratch objects that the corpus's valid requests may change.
    """
    problems: list[str] = []
    for kind, items in before.items():
        for key, value in items.items():
            if key.split("/")[0] in ignore:
                continue
            if after[kind].get(key) != value:
                problems.append(f"{kind}[{key}]: {value!r} -> {after[kind].get(key)!r}")
    return problems


def file_hashes(folder: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def wait_build(gw: Client, index_id: str, timeout_s: float = 300) -> dict[str, Any]:
    started = _ok(gw.post(f"/indexes/{index_id}/build"), 202)
    return wait_job(gw, index_id, started["job_id"], timeout_s)


def wait_job(gw: Client, index_id: str, job_id: str, timeout_s: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = _ok(gw.get(f"/indexes/{index_id}/jobs/{job_id}"))
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.2)
    raise TimeoutError(f"build {job_id} of {index_id} did not finish in {timeout_s} s")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _ok(reply: Any, status: int = 200) -> Any:
    if reply.status != status:
        raise AssertionError(f"expected HTTP {status}, got {reply.status}: {reply.body[:500]!r}")
    return reply.json
