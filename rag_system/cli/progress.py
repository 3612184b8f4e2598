"""Human progress for long builds: a one-line bar on a terminal, log lines otherwise.

The numbers come from the `progress` object the builder stamps on every event
(rag_system/indexing/build_progress.py), so the bar agrees with the web app.
On a terminal a clock thread redraws the bar every second, so the elapsed
time is real even while one step (the full-text refresh, a large file's
conversion) sends no events.
"""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO

from rag_system.indexing.events import BuildEvent

_FINISHED = {"file_written", "file_failed"}
#: A log line per embedding update would flood a file; one every this many seconds is enough.
LOG_EMBEDDING_EVERY_S = 5.0
_STAGES = {"planning": "planning", "converting": "reading files", "embedding": "embedding",
           "refreshing": "refreshing the full-text index", "finishing": "finishing", "done": "done"}


def short(path: str | None) -> str:
    return (path or "").rsplit("/", 1)[-1][:40]


def clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ProgressReporter:
    def __init__(self, stream: TextIO, tick_s: float = 1.0) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.progress: dict[str, Any] = {}
        self.current = ""
        self._line = False
        self._logged_embedding = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._tick_s = tick_s

    def handle(self, event: BuildEvent) -> None:
        with self._lock:
            self.progress = event.data.get("progress") or self.progress
            self._handle(event)
        if self.tty and self._ticker is None and event.type == "build_started":
            self._ticker = threading.Thread(target=self._tick, name="docent-progress", daemon=True)
            self._ticker.start()

    def _handle(self, event: BuildEvent) -> None:
        data = event.data
        if event.type == "build_started":
            self._emit(f"{data.get('to_process', 0)} file(s) to process, {data.get('unchanged', 0)} unchanged, "
                       f"{data.get('removed', 0)} removed", final=True)
        elif event.type in ("file_started", "file_embedding"):
            self.current = short(event.path)
            if event.type == "file_embedding" and not self.tty and self._due():
                self._emit(f"embedding {self.current}: {data.get('chunks_done')}/{data.get('chunks')} chunks"
                           f" ({self._overall()})", final=True)
            elif self.tty:
                self._emit(self._bar(), final=False)
        elif event.type in _FINISHED:
            name = short(event.path)
            if event.type == "file_failed":
                self._emit(f"failed {name}: {data.get('reason')}", final=True)
            if self.tty:
                self._emit(self._bar(), final=False)
            elif event.type == "file_written":
                self._emit(f"{self._bar()}  {name}", final=True)
        elif event.type == "fts_refreshed":
            self.current = ""
            self._emit(self._bar() if self.tty else "refreshing the full-text index", final=not self.tty)

    def _due(self) -> bool:
        now = time.monotonic()
        if now - self._logged_embedding < LOG_EMBEDDING_EVERY_S:
            return False
        self._logged_embedding = now
        return True

    def _overall(self) -> str:
        p = self.progress
        text = f"{100 * float(p.get('fraction', 0)):.0f}%, {clock(time.monotonic() - self.started)}"
        if p.get("eta_s") is not None:
            text += f", about {clock(float(p['eta_s']))} left"
        return text

    def _bar(self) -> str:
        p, width = self.progress, 24
        filled = int(width * float(p.get("fraction", 0)))
        stage = _STAGES.get(str(p.get("stage", "")), "")
        detail = f"  {stage} {self.current}".rstrip() if stage and self.tty else ""
        return (f"[{'#' * filled}{'.' * (width - filled)}] {p.get('files_done', 0)}/{p.get('files_total', 0)} files, "
                f"{p.get('chunks_done', 0)}/{p.get('chunks_total', 0)} chunks, {self._overall()}{detail}")

    def _tick(self) -> None:
        while not self._stop.wait(self._tick_s):
            with self._lock:
                if self._line:
                    self._emit(self._bar(), final=False)

    def _emit(self, text: str, final: bool) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
            self._line = not final
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        with self._lock:
            if self.tty and self._line:
                self._emit(f"{self._bar()}", final=True)
                self._line = False
