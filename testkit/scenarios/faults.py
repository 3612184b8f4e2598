"""Injected faults against real processes, each returning what was checked and whether it held.

- `rag_killed_during_build`: SIGKILL the RAG API while an index build runs,
  restart it: the index holds every document the build had finished, none
  partially, and a re-run finishes the rest.
- `gateway_killed_during_stream`: SIGKILL the gateway while the RAG API streams
  an answer from its embedded `llamacpp` backend (the packaged 0.5B GGUF,
  `MODEL_ENV`); restart it: the RAG API's save retries land the turn, once.
- `llm_dies_mid_answer`: SIGKILL llama-cpp-python's OpenAI-compatible server
  (`testkit.model_server`, same GGUF) once its first token has reached the RAG
  API (`testkit.tripwire`): the answer falls back to extractive, with citations
  that point at real chunks, and none of the cut-off text is ever shown. (Ollama's NDJSON cut-off is covered on
  the parser in tests/unit/test_remote_streams.py: no Ollama server runs here.)
- Disk full and a locked SQLite database live in `testkit.scenarios.faults_storage`.
"""

from __future__ import annotations

import http.client
import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.client import read_events
from testkit.model_server import ModelServer
from testkit.stack import MODEL_ENV, SEED_MD, SEED_QUESTION, Stack, wait_build


@dataclass
class FaultResult:
    name: str
    checks: list[tuple[str, bool, str]] = field(default_factory=list)  # (what, held, detail)

    def check(self, what: str, held: object, detail: Any = "") -> bool:
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
        job: dict[str, Any] = {"state": "never polled"}
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
    stack = Stack(root, rag_env=dict(MODEL_ENV)).start()
    try:
        gw = stack.gw
        iid = gw.post("/indexes", {"name": "Stream"}).json["index_id"]
        gw.upload(f"/indexes/{iid}/upload", [("turbine.md", SEED_MD.encode())])
        wait_build(gw, iid)
        sid = gw.post("/sessions", {"title": "Stream"}).json["session_id"]
        turn_id = "turn-killed-gateway"
        body = {"query": SEED_QUESTION, "indexes": [iid], "session_id": sid, "turn_id": turn_id,
                "backend": "llamacpp"}
        conn = http.client.HTTPConnection("127.0.0.1", stack.rag_port, timeout=300)  # loads the model first
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
    return result


# -- the model server is killed mid-answer -----------------------------------------------
def llm_dies_mid_answer(stack: Stack, server: ModelServer) -> FaultResult:
    """`stack`'s RAG API must run with `server.rag_env()`; `server` is dead afterwards."""
    result = FaultResult("LLM server killed mid-answer")
    gw = stack.gw
    iid = gw.post("/indexes", {"name": "Dying LLM"}).json["index_id"]
    gw.upload(f"/indexes/{iid}/upload", [("turbine.md", SEED_MD.encode())])
    wait_build(gw, iid)
    if not result.check("model server up before the chat", server.alive(), server.url):
        return result
    body = {"query": SEED_QUESTION, "indexes": [iid], "backend": "openai"}
    server.kill_on_first_token()
    conn = http.client.HTTPConnection("127.0.0.1", stack.rag_port, timeout=300)
    conn.request("POST", "/chat/stream", json.dumps(body),
                 {"Content-Type": "application/json", "Authorization": f"Bearer {stack.token}"})
    resp = conn.getresponse()
    kinds: list[str] = []
    final: dict[str, Any] = {}
    try:
        if not result.check("stream answered 200", resp.status == 200, resp.status):
            return result
        for kind, data in read_events(resp):
            kinds.append(kind)
            if kind in ("complete", "error"):
                final = data
    finally:
        conn.close()
    result.check("server SIGKILLed after its first token", server.killed_mid_stream(),
                 server.proc.returncode if server.proc else None)
    result.check("a backend_fallback event came", "backend_fallback" in kinds, kinds)
    # Only checked sentences are shown, and the dead model never finished its first one.
    shown = kinds[:kinds.index("backend_fallback")] if "backend_fallback" in kinds else kinds
    result.check("nothing of the cut-off answer was shown", "token" not in shown, shown)
    result.check("stream ended with complete", bool(kinds) and kinds[-1] == "complete", kinds[-3:])
    _check_fallback(result, stack, iid, "stream", final)
    reply = stack.api.post("/chat", {"query": SEED_QUESTION, "indexes": [iid], "backend": "openai"})
    if result.check("server gone: next chat answered 200", reply.status == 200, reply.body[:300]):
        _check_fallback(result, stack, iid, "server gone", reply.json)
    result.check("RAG API alive", stack.alive()["rag_api"], stack.alive())
    return result


def _check_fallback(result: FaultResult, stack: Stack, iid: str, label: str, answer: dict[str, Any]) -> None:
    result.check(f"{label}: fell back to extractive", answer.get("answer_source") == "extractive",
                 (answer.get("answer_source"), answer.get("answer")))
    result.check(f"{label}: fallback recorded", any(f.get("backend") == "openai"
                                                    for f in answer.get("fallbacks") or []), answer.get("fallbacks"))
    result.check(f"{label}: answer names the interval", "18 months" in answer.get("answer", ""), answer.get("answer"))
    result.check(f"{label}: citations are valid", _citations_valid(stack, iid, answer), answer.get("citations"))


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


__all__ = ["FaultResult", "gateway_killed_during_stream", "llm_dies_mid_answer", "rag_killed_during_build"]
