"""Injected faults against real processes, each returning what was checked and whether it held.

- `rag_killed_during_build`: SIGKILL the RAG API while an index build runs,
  restart it: the index holds every document the build had finished, none
  partially, and a re-run finishes the rest.
- `gateway_killed_during_stream`: SIGKILL the gateway while the RAG API streams
  an answer; restart it: the RAG API's save retries land the turn, once.
- `llm_dies_mid_answer`: an OpenAI-compatible server streams a few tokens
  and then its connection dies (chunked and plain variants): the answer
  falls back to extractive, with citations that point at real chunks.
- Disk full and a locked SQLite database live in `eval.faults_storage`.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from eval.stack import SEED_MD, Stack, wait_build
from tests.browser.fake_llm import SlowLLM
from tests.integration.api_support import read_events
from tests.integration.gateway_helpers import free_port


@dataclass
class FaultResult:
    name: str
    checks: list[tuple[str, bool, str]] = field(default_factory=list)  # (what, held, detail)

    def check(self, what: str, held: bool, detail: Any = "") -> bool:
        self.checks.append((what, bool(held), str(detail)[:400]))
        return bool(held)

    @property
    def survived(self) -> bool:
        return bool(self.checks) and all(ok for _w, ok, _d in self.checks)

    def failures(self) -> list[str]:
        return [f"{self.name}: {w} ({d})" for w, ok, d in self.checks if not ok]


# -- kill -9 the RAG API during a build ------------------------------------------
def _doc(n: int) -> bytes:
    topic = f"quokka{n:03d}"
    para = (f"The {topic} station logs wind, rain and tide readings every hour. "
            f"Engineers visit the {topic} station when a sensor drifts. ") * 12
    return f"# Station {topic}\n\n{para}\n\n## Maintenance\n\n{para}\n".encode()


def chunk_counts(stack: Stack, index: str) -> Counter[str]:
    """Chunks per document name, read from LanceDB directly (the RAG API may be dead)."""
    from rag_system.indexing.store import ChunkTable, IndexNotFoundError, connect

    try:
        table = ChunkTable.open(connect(str(stack.data / "lancedb")), index)
    except IndexNotFoundError:
        return Counter()
    names = table.table.to_arrow().column("document_name").to_pylist()
    return Counter(_plain(n) for n in names)


def _plain(name: str) -> str:
    """`<sha256>_station-001.md` (the stored upload) -> `station-001.md`."""
    return re.sub(r"^[0-9a-f]{64}_", "", Path(name).name)


def rag_killed_during_build(root: Path, files: int = 16) -> FaultResult:
    result = FaultResult("kill -9 RAG API during an index build")
    stack = Stack(root).start()
    try:
        gw = stack.gw
        iid = gw.post("/indexes", {"name": "Crash build"}).json["index_id"]
        up = gw.upload(f"/indexes/{iid}/upload", [(f"station-{n:03d}.md", _doc(n)) for n in range(files)])
        result.check("upload", up.status == 200, up.status)
        job_id = gw.post(f"/indexes/{iid}/build").json["job_id"]
        done_before: set[str] = set()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            job = stack.api.get(f"/index/jobs/{job_id}").json
            done_before = {_plain(Path(f["path"]).name) for f in job["files"] if f["state"] == "done"}
            if len(done_before) >= 3 or job["state"] != "running" and job["state"] != "queued":
                break
            time.sleep(0.05)
        if not result.check("killed mid-build", job["state"] in ("queued", "running"), job["state"]):
            return result
        stack.kill9(stack.rag)
        after_kill = chunk_counts(stack, iid)
        Stack.restart(stack.rag)
        final_job = wait_build(gw, iid)
        result.check("re-run finishes", final_job["state"] == "done", final_job.get("error"))
        final = chunk_counts(stack, iid)
        result.check("every file indexed after the re-run", len(final) == files, f"{len(final)} of {files}")
        missing = [(n, after_kill.get(n, 0), final.get(n)) for n in done_before if after_kill.get(n, 0) != final.get(n)]
        result.check(f"{len(done_before)} documents finished before the kill kept whole", not missing, missing)
        partial = [(n, c, final.get(n)) for n, c in after_kill.items() if c != final.get(n)]
        result.check(f"no partial document among {len(after_kill)} present after the kill", not partial, partial)
        result.check("gateway sees the index ready", gw.get(f"/indexes/{iid}").json["metadata"]["status"] == "ready",
                     gw.get(f"/indexes/{iid}").json["metadata"].get("status"))
    finally:
        stack.stop()
    return result


# -- kill -9 the gateway during a streamed chat -------------------------------------
def gateway_killed_during_stream(root: Path) -> FaultResult:
    result = FaultResult("kill -9 gateway during a streamed chat")
    llm = SlowLLM(free_port(), delay_s=0.05)
    llm.start()
    stack = Stack(root, rag_env={"OPENAI_BASE_URL": llm.url, "OPENAI_MODEL": "slow-model"}).start()
    try:
        gw = stack.gw
        iid = gw.post("/indexes", {"name": "Stream"}).json["index_id"]
        gw.upload(f"/indexes/{iid}/upload", [("turbine.md", SEED_MD.encode())])
        wait_build(gw, iid)
        sid = gw.post("/sessions", {"title": "Stream"}).json["session_id"]
        turn_id = "turn-killed-gateway"
        body = {"query": "How often is the zephyr turbine gearbox inspected?", "indexes": [iid],
                "session_id": sid, "turn_id": turn_id, "backend": "openai"}
        conn = http.client.HTTPConnection("127.0.0.1", stack.rag_port, timeout=120)
        conn.request("POST", "/chat/stream", json.dumps(body),
                     {"Content-Type": "application/json", "Authorization": f"Bearer {stack.token}"})
        resp = conn.getresponse()
        events = read_events(resp)
        killed = False
        kinds: list[str] = []
        final: dict[str, Any] = {}
        for kind, data in events:
            kinds.append(kind)
            if kind == "token" and not killed:
                stack.kill9(stack.gateway)
                killed = True
            if kind in ("complete", "error"):
                final = data
        conn.close()
        result.check("gateway killed while tokens streamed", killed, kinds[:8])
        result.check("stream completed without the gateway", kinds and kinds[-1] == "complete", kinds[-3:])
        Stack.restart(stack.gateway, wait_s=30)
        deadline = time.monotonic() + 60
        mine: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            mine = [m for m in gw.get(f"/sessions/{sid}").json["messages"] if m["turn_id"] == turn_id]
            if len(mine) >= 2:
                break
            time.sleep(0.5)
        result.check("turn saved once the gateway is back", len(mine) == 2, [m["sender"] for m in mine])
        answer = final.get("answer") or final.get("response")
        result.check("saved answer is the streamed answer", any(m["content"] == answer for m in mine), answer)
        time.sleep(1.0)  # a late duplicate save would land now
        again = [m for m in gw.get(f"/sessions/{sid}").json["messages"] if m["turn_id"] == turn_id]
        result.check("stored exactly once", len(again) == 2, len(again))
    finally:
        stack.stop()
        llm.stop()
    return result


# -- the LLM backend dies mid-answer -----------------------------------------------------
class DyingLLM:
    """An LLM server whose connection dies after a few tokens, as if its process was killed mid-answer.

    It speaks both protocols the RAG API uses: OpenAI-compatible SSE at
    `/v1/chat/completions` and Ollama's NDJSON at `/api/chat`. `chunked=True`
    answers HTTP/1.1 with chunked encoding (vLLM, llama.cpp server), so the
    client sees a broken chunk; `False` closes a plain HTTP/1.0 body early.
    """

    WORDS = ("The", " zephyr", " gearbox", " is", " inspected")

    def __init__(self, tokens: int = 4, chunked: bool = True) -> None:
        parent = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if chunked else "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                body = json.dumps({"object": "list", "data": [{"id": "dying", "object": "model"}],
                                   "models": [{"name": "dying", "model": "dying"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parent.requests[self.path] = parent.requests.get(self.path, 0) + 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for word in parent.WORDS[:tokens]:
                    if self.path.startswith("/api/"):
                        data = (json.dumps({"message": {"role": "assistant", "content": word}, "done": False})
                                + "\n").encode()
                    else:
                        chunk = {"choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
                        data = f"data: {json.dumps(chunk)}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data)
                    self.wfile.flush()
                # Die: the socket goes away without a terminating chunk, [DONE] or done=true.
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True

        self.requests: dict[str, int] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.host = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def dying_llm_env(chunked: DyingLLM, plain: DyingLLM) -> dict[str, str]:
    """RAG API settings that send `backend: openai` to a chunked dying server, `ollama` to a plain one."""
    return {"OPENAI_BASE_URL": chunked.host + "/v1", "OPENAI_MODEL": "dying", "OLLAMA_HOST": plain.host,
            "OLLAMA_MODEL": "dying"}


def llm_dies_mid_answer(stack: Stack, chunked: DyingLLM, plain: DyingLLM) -> FaultResult:
    """`stack`'s RAG API must run with `dying_llm_env(chunked, plain)`."""
    result = FaultResult("LLM backend dies mid-answer")
    gw = stack.gw
    iid = gw.post("/indexes", {"name": "Dying LLM"}).json["index_id"]
    gw.upload(f"/indexes/{iid}/upload", [("turbine.md", SEED_MD.encode())])
    wait_build(gw, iid)
    question = "How often is the zephyr turbine gearbox inspected?"
    for label, backend, llm in (("openai, chunked", "openai", chunked), ("ollama, plain", "ollama", plain)):
        calls = sum(llm.requests.values())
        reply = stack.api.post("/chat", {"query": question, "indexes": [iid], "backend": backend})
        if not result.check(f"{label}: answered 200", reply.status == 200, reply.body[:300]):
            continue
        answer = reply.json
        result.check(f"{label}: the dying server was really called", sum(llm.requests.values()) > calls,
                     llm.requests)
        result.check(f"{label}: fell back to extractive", answer.get("answer_source") == "extractive",
                     (answer.get("answer_source"), answer.get("answer")))
        result.check(f"{label}: fallback recorded", any(f.get("backend") == backend
                                                        for f in answer.get("fallbacks") or []),
                     answer.get("fallbacks"))
        result.check(f"{label}: answer names the interval", "18 months" in answer.get("answer", ""),
                     answer.get("answer"))
        result.check(f"{label}: citations are valid", _citations_valid(stack, iid, answer), answer.get("citations"))
    return result


def _citations_valid(stack: Stack, index: str, answer: dict[str, Any]) -> bool:
    """Every citation points at a chunk of the index whose text contains the quoted words."""
    citations = answer.get("citations") or []
    if not citations:
        return False
    found = stack.api.post("/retrieve", {"query": answer.get("answer", ""), "index": index, "retrieval_k": 50}).json
    chunks = {c["chunk_id"]: c for c in found["results"]}
    for cite in citations:
        chunk = chunks.get(cite.get("chunk_id"))
        if chunk is None:
            return False
        quote = (cite.get("quote") or cite.get("text") or "").strip()
        if quote and " ".join(quote.split()[:4]) not in " ".join(chunk.get("text", "").split()):
            return False
    return True


__all__ = ["DyingLLM", "FaultResult", "dying_llm_env", "gateway_killed_during_stream", "llm_dies_mid_answer",
           "rag_killed_during_build"]
