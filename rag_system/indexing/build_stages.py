"""The stages of a build, run at once: files converted ahead, groups embedded, groups written behind.

Why: the embedder is the bottleneck, so nothing else should stand between
two of its groups. Before (2026-12-05), the next file alone was converted
while a group embedded, so the files that filled a group were converted one
after the other with the embedder idle, and each group was written with the
embedder idle too. Now one thread converts and chunks files in order, up to
AHEAD_CHUNKS chunks ahead of the embedder; the embedder takes them a group at
a time; and one thread writes a group while the next one embeds (at most one
write in flight, so a failed write stops the build at the next group).

Why the interpreter's switch interval is shortened during a build
(BUILD_SWITCH_INTERVAL_S): each operation of a forward pass releases the
GIL and must take it back; while the conversion thread runs Python
(Docling, the chunker), taking it back waits for that thread's turn, 5 ms
by default, hundreds of times per batch. Measured on 2 cores: embedding the
5,627 windows of the localGPT corpora took 69 s alone and 110 s with the
whole corpus converting beside it, 71 s with a 0.5 ms interval
(Documentation/evaluation.md, "Fourth round").
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: Files are embedded together until their chunks reach this many (the embedder sorts a group's
#: texts by length and fills its batches across files).
EMBED_GROUP_CHUNKS = 256
#: Chunks converted and chunked but not yet embedded, at most (and AHEAD_FILES files): two groups,
#: so the next group is ready when a group's embedding ends, and memory stays bounded.
AHEAD_CHUNKS = 2 * EMBED_GROUP_CHUNKS
#: The embedder takes whatever is ready once this many chunks are (one batch's worth, `PROGRESS_BATCH`),
#: rather than idling until a whole group is: at a build's start that idle wait was 2.8 of 46 s.
START_CHUNKS = 16
AHEAD_FILES = 64
#: The interpreter's switch interval while a build runs (CPython's default is 5 ms).
BUILD_SWITCH_INTERVAL_S = 0.0005


class Ahead:
    """Prepares (converts and chunks) work items in order on a thread of its own, a bounded way ahead.

    `prepare(item)` returns an object with a `chunks` list; `groups()` yields them in order, in
    groups of at least `group_chunks` chunks (the last group may be smaller).
    """

    def __init__(self, items: Sequence[Any], prepare: Callable[[Any], Any],
                 ahead_chunks: int = AHEAD_CHUNKS, ahead_files: int = AHEAD_FILES) -> None:
        self._items = items
        self._prepare = prepare
        self._ahead_chunks = ahead_chunks
        self._ahead_files = ahead_files
        self._ready: deque[Any] = deque()
        self._ready_chunks = 0
        self._finished = False
        self._stopped = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="docent-convert", daemon=True)

    def __enter__(self) -> Ahead:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join()  # the file being converted finishes; nothing else starts

    def _run(self) -> None:
        try:
            for item in self._items:
                with self._cond:
                    while not self._stopped and (self._ready_chunks >= self._ahead_chunks
                                                 or len(self._ready) >= self._ahead_files):
                        self._cond.wait()
                    if self._stopped:
                        return
                prepared = self._prepare(item)
                with self._cond:
                    self._ready.append(prepared)
                    self._ready_chunks += len(prepared.chunks)
                    self._cond.notify_all()
        except BaseException as exc:  # handed to the consumer, which raises it
            self._error = exc
        finally:
            with self._cond:
                self._finished = True
                self._cond.notify_all()

    def groups(self, group_chunks: int = EMBED_GROUP_CHUNKS,
               start_chunks: int = START_CHUNKS) -> Iterator[list[Any]]:
        """The prepared items in order, up to a group at a time, each as soon as `start_chunks` are ready.

        Whoever asks for the next group is idle until it has one, so it gets what is ready, up to
        `group_chunks`: once conversion runs ahead (it does after the first group) groups are full.
        """
        while True:
            with self._cond:
                # A batch's worth, or as many files as may wait (tiny files), or all there will be.
                while (self._ready_chunks < min(start_chunks, group_chunks) and len(self._ready) < self._ahead_files
                       and not self._finished):
                    self._cond.wait()
                if self._error is not None:
                    raise self._error
                group: list[Any] = []
                count = 0
                while self._ready and count < group_chunks:
                    prepared = self._ready.popleft()
                    group.append(prepared)
                    count += len(prepared.chunks)
                self._ready_chunks -= count
                self._cond.notify_all()
            if not group:
                return
            yield group


@dataclass
class Behind:
    """Runs writes on one thread of its own, one at a time and in order, at most one in flight.

    `submit` waits for the previous write first, so its error surfaces before more work is
    queued; `close` waits for the last one.
    """

    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="docent-write"))
    _last: Future[None] | None = None

    def submit(self, write: Callable[..., None], *args: Any) -> None:
        self.wait()
        self._last = self._pool.submit(write, *args)

    def wait(self) -> None:
        last, self._last = self._last, None
        if last is not None:
            last.result()

    def close(self) -> None:
        """Wait for the write in flight (a commit is never left running behind the caller)."""
        try:
            self.wait()
        finally:
            self._pool.shutdown(wait=True)


_interval_lock = threading.Lock()
_interval_users = 0
_interval_saved = 0.0


@contextmanager
def short_switch_interval(seconds: float = BUILD_SWITCH_INTERVAL_S) -> Iterator[None]:
    """The GIL's switch interval at most `seconds` while any build runs; restored after the last."""
    global _interval_users, _interval_saved
    with _interval_lock:
        if _interval_users == 0:
            _interval_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(seconds, _interval_saved))
        _interval_users += 1
    try:
        yield
    finally:
        with _interval_lock:
            _interval_users -= 1
            if _interval_users == 0:
                sys.setswitchinterval(_interval_saved)
