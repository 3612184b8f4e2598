"""Session-scoped semantic answer cache.

Why: users re-ask ("what is X" then "What is X?") and the frontend retries;
answering again costs seconds of LLM time on a laptop. A hit needs:

- the same session — answers never cross sessions, because another session
  may link other indexes, have another history, or another user;
- the same scope — the same index names and the same options fingerprint
  (retrieval mode, filters, backend ...), so changed options never reuse an
  answer built under different ones;
- cosine similarity of the query embeddings >= `threshold` (0.98 by default:
  case, punctuation and trivial rewordings hit; a different question, even on
  the same topic, does not).

Entries expire after `ttl_s`, each session keeps at most `max_entries`
(least recently used goes first), and rebuilding or deleting an index drops
every entry that used it (`invalidate_index`). Thread-safe.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rag_system.config import Settings

log = logging.getLogger(__name__)


def options_fingerprint(options: Mapping[str, Any]) -> str:
    """A stable short hash of the options that shape an answer (key order does not matter)."""
    blob = json.dumps(options, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CacheScope:
    """What an answer depends on besides the question: indexes and options."""

    index_names: tuple[str, ...]
    options_fingerprint: str = ""

    @classmethod
    def of(cls, index_names: Iterable[str], options: Mapping[str, Any] | None = None) -> CacheScope:
        """Scope from index names (order and duplicates ignored) and an options mapping."""
        return cls(tuple(sorted(set(index_names))), options_fingerprint(options or {}))


@dataclass(frozen=True)
class CachedAnswer:
    """A hit: the stored payload (a private copy), the question that produced it, and how close it was."""

    query: str
    payload: Any
    similarity: float
    age_s: float
    hits: int


@dataclass(eq=False)  # identity, not field equality: entries hold numpy arrays
class _Entry:
    scope: CacheScope
    vector: np.ndarray
    query: str
    payload: Any
    created_at: float
    hits: int = 0


def _unit(vector: Any) -> np.ndarray:
    arr = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(arr))
    if arr.size == 0 or not np.isfinite(norm) or norm == 0.0:
        raise ValueError("cache vectors must be non-empty, finite and non-zero")
    return arr if abs(norm - 1.0) < 1e-4 else arr / norm


class SemanticCache:
    """Answers keyed by (session, scope) and matched by query-embedding similarity."""

    def __init__(self, threshold: float = 0.98, max_entries: int = 64, ttl_s: float = 900.0,
                 max_sessions: int = 1000, clock: Callable[[], float] = time.monotonic) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        if max_entries <= 0 or max_sessions <= 0 or ttl_s <= 0:
            raise ValueError("max_entries, max_sessions and ttl_s must be > 0")
        self.threshold = threshold
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._clock = clock
        self._sessions: OrderedDict[str, list[_Entry]] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> SemanticCache:
        return cls(threshold=settings.cache_threshold, max_entries=settings.cache_max_entries,
                   ttl_s=settings.cache_ttl_s)

    def get(self, session_id: str, scope: CacheScope, vector: Any) -> CachedAnswer | None:
        """The most similar live entry of this session and scope at or above the threshold."""
        query_vec = _unit(vector)
        now = self._clock()
        with self._lock:
            entries = self._sessions.get(session_id)
            if not entries:
                return None
            self._drop_expired(entries, now)
            best: _Entry | None = None
            best_sim = -1.0
            for entry in entries:
                if entry.scope != scope or entry.vector.shape != query_vec.shape:
                    continue
                sim = float(entry.vector @ query_vec)
                if sim > best_sim:
                    best, best_sim = entry, sim
            if best is None or best_sim < self.threshold:
                return None
            best.hits += 1
            entries.remove(best)
            entries.append(best)  # most recently used last
            self._sessions.move_to_end(session_id)
            hit = CachedAnswer(best.query, copy.deepcopy(best.payload), best_sim, now - best.created_at, best.hits)
        log.debug("semantic cache hit (session %s, similarity %.4f)", session_id, best_sim)
        return hit

    def put(self, session_id: str, scope: CacheScope, vector: Any, query: str, payload: Any) -> None:
        """Store an answer; one for a near-identical question in the same scope is replaced."""
        vec = _unit(vector).copy()
        now = self._clock()
        entry = _Entry(scope, vec, query, copy.deepcopy(payload), now)
        with self._lock:
            entries = self._sessions.setdefault(session_id, [])
            self._sessions.move_to_end(session_id)
            self._drop_expired(entries, now)
            entries[:] = [e for e in entries if not (e.scope == scope and e.vector.shape == vec.shape
                                                     and float(e.vector @ vec) >= self.threshold)]
            entries.append(entry)
            del entries[:-self.max_entries]
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def invalidate_index(self, index_name: str) -> int:
        """Drop every entry whose scope includes `index_name`; returns how many."""
        removed = 0
        with self._lock:
            for session_id in list(self._sessions):
                entries = self._sessions[session_id]
                kept = [e for e in entries if index_name not in e.scope.index_names]
                removed += len(entries) - len(kept)
                if kept:
                    self._sessions[session_id] = kept
                else:
                    del self._sessions[session_id]
        if removed:
            log.info("semantic cache: dropped %d entries of index %s", removed, index_name)
        return removed

    def clear_session(self, session_id: str) -> int:
        """Forget a session's entries (session deleted or history cleared); returns how many."""
        with self._lock:
            return len(self._sessions.pop(session_id, []))

    def __len__(self) -> int:
        with self._lock:
            return sum(len(entries) for entries in self._sessions.values())

    def _drop_expired(self, entries: list[_Entry], now: float) -> None:
        live = [e for e in entries if now - e.created_at < self.ttl_s]
        if len(live) != len(entries):
            entries[:] = live
