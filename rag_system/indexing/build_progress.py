"""Overall progress of a build: how far it is, in chunks, and how long the rest should take.

Why here and not in each client: the CLI bar, the job record the gateway
polls and the web app's live stream must agree, so the builder stamps one
`progress` object on every event it emits and the clients only display it.

The unit of work is the chunk, because embedding dominates a build. A file
counts with its chunk count once it is chunked; a file not chunked yet counts
with its size times the chunks-per-byte measured on the files chunked so far.
The ETA is the measured rate (work done per second since the work started: after
the plan, so the minute a build may spend reading files to detect their
language is not taken for a slow rate) applied to the work left; it is withheld
until there is enough to measure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_system.indexing.events import BuildEvent, EventSink

#: No ETA before this much of the work and this many seconds: early rates mislead.
ETA_MIN_FRACTION = 0.03
ETA_MIN_SECONDS = 3.0
_FINISHED = ("file_written", "file_failed")
#: While a group embeds, each file's `file_embedding` count is reported at most this often.
EMBED_PROGRESS_EVERY_S = 0.5


@dataclass
class _File:
    size: int = 0
    chunks: int | None = None
    embedded: int = 0
    finished: bool = False


@dataclass
class BuildProgress:
    """Thread-safe: the conversion thread and the embedding thread both emit events."""

    started: float = field(default_factory=time.monotonic)
    work_started: float | None = None  # when the plan was made: the rate is measured from here
    total_bytes: int = 0
    files_total: int = 0
    files_failed: int = 0
    stage: str = "planning"
    files: dict[str, _File] = field(default_factory=dict)
    shown: float = 0.0  # the fraction last reported: a bar never moves back when an estimate is revised
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sink(self, downstream: EventSink) -> EventSink:
        """An event sink that folds each event, then passes it on with `progress` added to its data."""
        def emit(event: BuildEvent) -> None:
            with self._lock:
                self._fold(event)
                snapshot = self._snapshot(event.type == "build_done")
            downstream(BuildEvent(event.type, event.path, {**event.data, "progress": snapshot}))
        return emit

    def _fold(self, event: BuildEvent) -> None:
        data, kind = event.data, event.type
        if kind == "build_preparing":
            self.stage = "detecting_language" if data.get("step") == "detecting_language" else "planning"
            return
        if kind == "build_started":
            if self.work_started is None:
                self.work_started = time.monotonic()
            self.files_total = int(data.get("to_process", 0))
            self.total_bytes = int(data.get("bytes", 0))
            self.stage = "converting" if self.files_total else "finishing"
            return
        if kind == "fts_refreshed":
            self.stage = "refreshing"
            return
        if kind == "build_done":
            self.stage = "done"
            return
        if event.path is None or kind not in ("file_started", "file_chunked", "file_embedding", "file_embedded",
                                              *_FINISHED):
            return
        f = self.files.setdefault(event.path, _File())
        if kind == "file_started":
            f.size = int(data.get("size", 0))
        elif kind == "file_chunked":
            f.chunks = int(data.get("chunks", 0))
        elif kind == "file_embedding":
            f.embedded = int(data.get("chunks_done", 0))
            self.stage = "embedding"
        elif kind == "file_embedded":
            f.embedded = f.chunks or 0
        else:
            f.finished = True
            self.files_failed += kind == "file_failed"

    def _snapshot(self, done: bool) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        known = [f for f in self.files.values() if f.chunks is not None]
        known_bytes = sum(f.size for f in known)
        per_byte = sum(f.chunks or 0 for f in known) / known_bytes if known_bytes else 0.0
        unknown_bytes = max(self.total_bytes - known_bytes, 0)
        # A failed file is finished work: its estimate counts as done, so the bar never stalls on it.
        estimated = {p: f.chunks if f.chunks is not None else round(f.size * per_byte) for p, f in self.files.items()}
        total = sum(f.chunks or 0 for f in known) + unknown_bytes * per_byte
        finished_unknown = sum(estimated[p] for p, f in self.files.items() if f.finished and f.chunks is None)
        embedded = sum((f.chunks or 0) if f.finished else f.embedded for f in known) + finished_unknown
        if self.work_started is None and not done:  # preparing: nothing measured yet, and no plan to finish
            fraction = 0.0
        else:
            fraction = 1.0 if done or not self.files_total else (min(embedded / total, 1.0) if total else 0.0)
        fraction = max(fraction, self.shown)
        if not done:
            fraction = min(fraction, 0.99)  # the full-text refresh and the summary are still to come
        self.shown = fraction
        eta = None
        working = time.monotonic() - (self.work_started if self.work_started is not None else self.started)
        if not done and fraction >= ETA_MIN_FRACTION and working >= ETA_MIN_SECONDS and self.stage != "refreshing":
            eta = round(working * (1 - fraction) / fraction, 1)
        return {"stage": self.stage, "fraction": round(fraction, 4), "eta_s": eta, "elapsed_s": round(elapsed, 1),
                "chunks_done": int(embedded), "chunks_total": round(total),
                "files_done": sum(f.finished for f in self.files.values()), "files_total": self.files_total,
                "files_failed": self.files_failed}


class EmbeddingReport:
    """Turns the embedder's finished batches into `file_embedding` events: chunks embedded per file.

    A group holds several files and its batches run shortest text first, so
    every file advances at once; counts are in chunks (a chunk is embedded
    when its windows are), reported at most every EMBED_PROGRESS_EVERY_S.
    `ready` is the builder's prepared files (each with `chunks` and `source.path`).
    """

    def __init__(self, ready: Sequence[Any], windowed: bool, on_event: EventSink) -> None:
        self.on_event = on_event
        self.owner: list[int] = []  # text position -> file of the group
        self.texts: list[int] = []  # texts per file
        for f, prepared in enumerate(ready):
            count = sum(len(c.windows or (c.text,)) for c in prepared.chunks) if windowed else len(prepared.chunks)
            self.owner.extend([f] * count)
            self.texts.append(count)
        self.ready = ready
        self.done = [0] * len(ready)
        self.reported = [0] * len(ready)
        self.last = 0.0

    def __call__(self, positions: list[int]) -> None:
        for i in positions:
            self.done[self.owner[i]] += 1
        now = time.monotonic()
        if now - self.last < EMBED_PROGRESS_EVERY_S and sum(self.done) < len(self.owner):
            return
        self.last = now
        for f, prepared in enumerate(self.ready):
            chunks = len(prepared.chunks)
            embedded = chunks * self.done[f] // max(self.texts[f], 1)
            if embedded != self.reported[f]:
                self.reported[f] = embedded
                self.on_event(BuildEvent("file_embedding", prepared.source.key,
                                         {"chunks_done": embedded, "chunks": chunks}))
