"""Concurrent chat sessions against the gateway while an index build runs; every message stored once.

Each simulated user creates a session, links the seed index and sends its
messages one after another through `POST /sessions/<id>/messages` (the
gateway stores the question, asks the RAG API, stores the answer). Meanwhile
a build of a second index keeps the RAG API's single writer busy. Afterwards
every session's history must hold each turn exactly once, question then
answer, in order. RSS of both processes is sampled from /proc during the run.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.client import Client
from testkit.stack import Stack, wait_job

QUESTIONS = ("How often is the zephyr turbine gearbox inspected?", "What power does the zephyr turbine produce?",
             "At what wind speed does the zephyr turbine produce 42 kilowatts?",
             "Who inspects the zephyr turbine gearbox?", "On which page is the bluejay described?")


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class RssSampler:
    """RSS of each process every `every_s` seconds, in a background thread."""

    def __init__(self, pids: dict[str, int], every_s: float = 0.5) -> None:
        self.pids = pids
        self.every_s = every_s
        self.samples: dict[str, list[float]] = {name: [] for name in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, pid in self.pids.items():
                value = rss_mb(pid)
                if value is not None:
                    self.samples[name].append(value)
            self._stop.wait(self.every_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def report(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for name, values in self.samples.items():
            if values:
                out[name] = {"start_mb": round(values[0], 1), "end_mb": round(values[-1], 1),
                             "peak_mb": round(max(values), 1), "growth_mb": round(values[-1] - values[0], 1)}
        return out


@dataclass
class LoadResult:
    sessions: int
    messages_per_session: int
    latencies_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    stored_once: int = 0
    storage_problems: list[str] = field(default_factory=list)
    build_state: str = ""
    memory: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def sent(self) -> int:
        return len(self.latencies_s) + len(self.errors)

    def percentile(self, q: float) -> float:
        if not self.latencies_s:
            return 0.0
        if len(self.latencies_s) == 1:
            return self.latencies_s[0]
        return statistics.quantiles(self.latencies_s, n=100, method="inclusive")[int(q) - 1]

    def summary(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "messages": self.sent, "errors": len(self.errors),
                "throughput_msg_s": round(len(self.latencies_s) / self.wall_s, 2) if self.wall_s else 0.0,
                "p50_s": round(self.percentile(50), 3), "p95_s": round(self.percentile(95), 3),
                "p99_s": round(self.percentile(99), 3), "stored_exactly_once": self.stored_once,
                "build": self.build_state, "memory": self.memory}


def _background_build(stack: Stack, files: int) -> tuple[str, str]:
    """Upload `files` documents to a new index and start its build; (index id, job id)."""
    gw = stack.gw
    iid = gw.post("/indexes", {"name": "Load build"}).json["index_id"]
    docs = [(f"load-{n:03d}.md", (f"# Load document {n}\n\n" + f"Load document {n} talks about kestrel {n}. " * 60)
             .encode()) for n in range(files)]
    gw.upload(f"/indexes/{iid}/upload", docs)
    return iid, gw.post(f"/indexes/{iid}/build").json["job_id"]


def run_load(stack: Stack, sessions: int, messages: int, *, build_files: int = 30,
             duration_s: float | None = None) -> LoadResult:
    """`sessions` users x `messages` each (or, with `duration_s`, as many as fit: the soak)."""
    result = LoadResult(sessions, messages)
    index = stack.seed.index_id
    run_id = uuid.uuid4().hex[:8]  # turn ids are global: two runs on one stack must not collide
    build_index, build_job = _background_build(stack, build_files)
    turns: dict[str, list[str]] = {}
    lock = threading.Lock()
    start = threading.Barrier(sessions + 1)
    deadline: list[float] = [0.0]

    def user(number: int) -> None:
        gw = Client(stack.gw.base_url, stack.token)
        sid = gw.post("/sessions", {"title": f"load {number}"}).json["session_id"]
        gw.post(f"/sessions/{sid}/indexes/{index}")
        mine: list[str] = []
        with lock:
            turns[sid] = mine
        start.wait()
        n = 0
        while (n < messages) if duration_s is None else (time.monotonic() < deadline[0]):
            turn_id = f"load-{run_id}-{number}-{n}"
            t0 = time.perf_counter()
            try:
                reply = gw.post(f"/sessions/{sid}/messages", {"message": QUESTIONS[(number + n) % len(QUESTIONS)],
                                                              "turn_id": turn_id}, timeout=300)
                ok = reply.status == 200 and bool(reply.json.get("response"))
                detail = f"{reply.status} {reply.body[:160]!r}"
            except OSError as exc:
                ok, detail = False, f"{type(exc).__name__}: {exc}"
            elapsed = time.perf_counter() - t0
            with lock:
                if ok:
                    result.latencies_s.append(elapsed)
                    mine.append(turn_id)
                else:
                    result.errors.append(f"session {number} message {n}: {detail}")
            n += 1

    threads = [threading.Thread(target=user, args=(i,), daemon=True) for i in range(sessions)]
    for thread in threads:
        thread.start()
    with RssSampler(stack.pids()) as sampler:
        start.wait()
        t0 = time.perf_counter()
        deadline[0] = time.monotonic() + (duration_s or 0)
        for thread in threads:
            thread.join()
        result.wall_s = time.perf_counter() - t0
        result.build_state = wait_job(stack.gw, build_index, build_job, timeout_s=600)["state"]
    result.memory = sampler.report()
    _check_stored(stack, turns, result)
    return result


def _check_stored(stack: Stack, turns: dict[str, list[str]], result: LoadResult) -> None:
    """Every answered turn is in its session's history exactly once: question, then answer, in order."""
    for sid, sent in turns.items():
        messages = stack.gw.get(f"/sessions/{sid}").json["messages"]
        by_turn: dict[str, list[str]] = {}
        for m in messages:
            by_turn.setdefault(m["turn_id"], []).append(m["sender"])
        order = list(dict.fromkeys(m["turn_id"] for m in messages))
        for turn_id in sent:
            if by_turn.get(turn_id) == ["user", "assistant"]:
                result.stored_once += 1
            else:
                result.storage_problems.append(f"{sid} {turn_id}: {by_turn.get(turn_id)}")
        if order != sent:
            result.storage_problems.append(f"{sid}: order {order[:5]}... != sent {sent[:5]}...")
