"""Human progress for long builds: a one-line bar on a terminal, log lines otherwise."""

from __future__ import annotations

import time
from typing import TextIO

from rag_system.indexing.events import BuildEvent

_DONE = {"file_written", "file_failed"}


class ProgressReporter:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.total = 0
        self.done = 0
        self.chunks = 0
        self.started = time.monotonic()
        self._line = False

    def handle(self, event: BuildEvent) -> None:
        if event.type == "build_started":
            self.total = int(event.data.get("to_process", 0))
            self._emit(f"{self.total} file(s) to process, {event.data.get('unchanged', 0)} unchanged, "
                       f"{event.data.get('removed', 0)} removed", final=True)
        elif event.type in _DONE:
            self.done += 1
            self.chunks += int(event.data.get("chunks", 0))
            name = (event.path or "").rsplit("/", 1)[-1]
            if event.type == "file_failed":
                self._emit(f"failed {name}: {event.data.get('reason')}", final=True)
            else:
                self._bar(name)
        elif event.type == "fts_refreshed":
            self._emit("refreshing full-text index", final=not self.tty)

    def _bar(self, name: str) -> None:
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        elapsed = time.monotonic() - self.started
        text = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} files, "
                f"{self.chunks} chunks, {elapsed:.0f}s  {name[:40]}")
        self._emit(text, final=not self.tty)

    def _emit(self, text: str, final: bool) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
            self._line = not final
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._line:
            self.stream.write("\n")
            self.stream.flush()
            self._line = False
