"""Notice changes in bound folders: file-system events (watchdog: inotify on Linux), debounced,
plus a periodic rescan that always works (network mounts and full inotify queues miss events).

The watcher decides *when* an index should sync; the sync itself runs
wherever the caller sends it (the RAG API's job queue, or the CLI's own
loop), so there is still one writer per index.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Trigger = Callable[[str, str], object]  # (index, reason: "watch" | "rescan"); what it returns is not used
TICK_S = 0.25


class FolderWatcher:
    """Bindings index -> folders; calls `trigger` once events have been quiet for `debounce_s`,
    and every `rescan_s` (0 = never) for every bound index."""

    def __init__(self, trigger: Trigger, *, debounce_s: float, rescan_s: float) -> None:
        self.trigger = trigger
        self.debounce_s = debounce_s
        self.rescan_s = rescan_s
        self._lock = threading.Lock()
        self._folders: dict[str, set[Path]] = {}
        self._dirty: dict[str, float] = {}  # index -> monotonic time of its latest event
        self._rescanned: dict[str, float] = {}
        self._watches: dict[tuple[str, Path], Any] = {}
        self._observer: Any = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="docent-sync-watch", daemon=True)
        self.events_supported = False

    # -- life cycle -----------------------------------------------------------
    def start(self) -> None:
        try:
            from watchdog.observers import Observer

            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
            self.events_supported = True
        except Exception as exc:  # no watchdog, or no inotify: the rescan still syncs
            log.warning("file events unavailable (%s); synced folders are rescanned every %.0f s", exc,
                        self.rescan_s)
            self._observer = None
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5.0)
        if self._thread.is_alive():
            self._thread.join(5.0)

    # -- bindings ---------------------------------------------------------------
    def bind(self, index: str, folder: Path) -> None:
        with self._lock:
            self._folders.setdefault(index, set()).add(folder)
            self._rescanned.setdefault(index, time.monotonic())
            if self._observer is not None and (index, folder) not in self._watches:
                try:
                    self._watches[(index, folder)] = self._observer.schedule(
                        _Handler(self, index, folder), str(folder), recursive=True)
                except OSError as exc:  # inotify watch limit, a folder gone: rescans cover it
                    log.warning("cannot watch %s for %s (%s); it is rescanned instead", folder, index, exc)

    def unbind(self, index: str, folder: Path | None = None) -> None:
        """Stop watching one folder of `index`, or all of them."""
        with self._lock:
            folders = self._folders.get(index, set())
            gone = set(folders) if folder is None else {folder} & folders
            for item in gone:
                folders.discard(item)
                watch = self._watches.pop((index, item), None)
                if watch is not None and self._observer is not None:
                    self._observer.unschedule(watch)
            if not folders:
                self._folders.pop(index, None)
                self._dirty.pop(index, None)
                self._rescanned.pop(index, None)

    def folders(self, index: str) -> list[Path]:
        with self._lock:
            return sorted(self._folders.get(index, set()))

    def mark(self, index: str) -> None:
        """Something under `index`'s folders changed (or is still settling): sync after the debounce."""
        with self._lock:
            if index in self._folders:
                self._dirty[index] = time.monotonic()

    def pending(self, index: str) -> bool:
        with self._lock:
            return index in self._dirty

    # -- the loop -----------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.wait(TICK_S):
            now = time.monotonic()
            due: list[tuple[str, str]] = []
            with self._lock:
                for index, at in list(self._dirty.items()):
                    if now - at >= self.debounce_s:
                        del self._dirty[index]
                        self._rescanned[index] = now
                        due.append((index, "watch"))
                if self.rescan_s > 0:
                    for index, at in self._rescanned.items():
                        if now - at >= self.rescan_s and index not in self._dirty:
                            self._rescanned[index] = now
                            due.append((index, "rescan"))
            for index, reason in due:
                try:
                    self.trigger(index, reason)
                except Exception:  # one index failing to queue must not stop the others
                    log.exception("could not start the sync of %s", index)


class _Handler:
    """watchdog's event handler protocol, reduced to "this index changed"."""

    def __init__(self, watcher: FolderWatcher, index: str, folder: Path) -> None:
        self.watcher = watcher
        self.index = index
        self.folder = folder

    def dispatch(self, event: Any) -> None:
        paths = [getattr(event, "src_path", ""), getattr(event, "dest_path", "")]
        kind = getattr(event, "event_type", "")
        if kind in ("opened", "closed_no_write"):
            return  # reads do not change anything
        if kind == "modified" and getattr(event, "is_directory", False):
            return  # a folder's own timestamp: the file event that caused it comes on its own
        if all(not p or self._hidden(Path(os.fsdecode(p))) for p in paths):
            return  # hidden files and folders (editor swap files, .git) are never indexed
        self.watcher.mark(self.index)

    def _hidden(self, path: Path) -> bool:
        try:
            parts = path.relative_to(self.folder).parts
        except ValueError:
            parts = (path.name,)
        return any(part.startswith(".") for part in parts)
