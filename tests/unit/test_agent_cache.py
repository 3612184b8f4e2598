"""Semantic cache: session isolation, scope, threshold, LRU, TTL, invalidation, threads.

Why: a wrong hit answers a different question (or leaks another session's
answer), which is worse than no cache at all. Vectors here are built by hand
with known cosines so every boundary is exact; the real embedder is covered
by tests/integration/test_agent_cache_embedder.py.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rag_system.agent.cache import CacheScope, SemanticCache, options_fingerprint

DIM = 8
SCOPE = CacheScope.of(["rfc"], {"mode": "hybrid"})


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def at_cosine(base: np.ndarray, other: np.ndarray, cos: float) -> np.ndarray:
    """A unit vector with exactly `cos` similarity to `base` (base ⟂ other)."""
    return (cos * base + np.sqrt(1 - cos * cos) * other).astype(np.float32)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_hit_at_threshold_miss_below() -> None:
    cache = SemanticCache(threshold=0.98)
    cache.put("s", SCOPE, unit(0), "What is QUIC?", {"answer": "A transport."})
    hit = cache.get("s", SCOPE, at_cosine(unit(0), unit(1), 0.981))
    assert hit is not None and hit.payload == {"answer": "A transport."} and hit.query == "What is QUIC?"
    assert hit.similarity == pytest.approx(0.981, abs=1e-4) and hit.hits == 1
    assert cache.get("s", SCOPE, at_cosine(unit(0), unit(1), 0.979)) is None
    assert cache.get("s", SCOPE, unit(1)) is None


def test_never_across_sessions() -> None:
    cache = SemanticCache()
    cache.put("alice", SCOPE, unit(0), "q", "secret")
    assert cache.get("bob", SCOPE, unit(0)) is None
    assert cache.get("alice", SCOPE, unit(0)) is not None


def test_scope_must_match_exactly() -> None:
    cache = SemanticCache()
    cache.put("s", SCOPE, unit(0), "q", "a")
    assert cache.get("s", CacheScope.of(["rfc", "mixed"], {"mode": "hybrid"}), unit(0)) is None
    assert cache.get("s", CacheScope.of(["rfc"], {"mode": "fts_only"}), unit(0)) is None
    assert cache.get("s", CacheScope.of(["rfc", "rfc"], {"mode": "hybrid"}), unit(0)) is not None


def test_scope_ignores_order_and_key_order() -> None:
    assert CacheScope.of(["b", "a"], {"x": 1, "y": [1, 2]}) == CacheScope.of(["a", "b"], {"y": [1, 2], "x": 1})
    assert options_fingerprint({"k": 1}) != options_fingerprint({"k": 2})
    assert len(options_fingerprint({})) == 16


def test_best_match_wins() -> None:
    cache = SemanticCache(threshold=0.9)
    cache.put("s", SCOPE, at_cosine(unit(0), unit(1), 0.95), "near", "near")
    cache.put("s", SCOPE, at_cosine(unit(0), unit(2), 0.99), "nearest", "nearest")
    hit = cache.get("s", SCOPE, unit(0))
    assert hit is not None and hit.payload == "nearest"


def test_put_replaces_a_near_duplicate() -> None:
    cache = SemanticCache()
    cache.put("s", SCOPE, unit(0), "q", "old")
    cache.put("s", SCOPE, unit(0), "q", "new")
    assert len(cache) == 1
    hit = cache.get("s", SCOPE, unit(0))
    assert hit is not None and hit.payload == "new"


def test_lru_bound_per_session() -> None:
    cache = SemanticCache(max_entries=2)
    cache.put("s", SCOPE, unit(0), "q0", 0)
    cache.put("s", SCOPE, unit(1), "q1", 1)
    assert cache.get("s", SCOPE, unit(0)) is not None  # q0 becomes most recent
    cache.put("s", SCOPE, unit(2), "q2", 2)  # evicts q1
    assert cache.get("s", SCOPE, unit(1)) is None
    assert cache.get("s", SCOPE, unit(0)) is not None and cache.get("s", SCOPE, unit(2)) is not None
    cache.put("t", SCOPE, unit(1), "q1", 1)  # another session has its own budget
    assert len(cache) == 3


def test_sessions_are_bounded() -> None:
    cache = SemanticCache(max_sessions=2)
    for session in ("a", "b", "c"):
        cache.put(session, SCOPE, unit(0), "q", session)
    assert cache.get("a", SCOPE, unit(0)) is None and cache.get("c", SCOPE, unit(0)) is not None


def test_ttl_expires_entries() -> None:
    clock = Clock()
    cache = SemanticCache(ttl_s=60, clock=clock)
    cache.put("s", SCOPE, unit(0), "q", "a")
    clock.now += 59
    hit = cache.get("s", SCOPE, unit(0))
    assert hit is not None and hit.age_s == pytest.approx(59)
    clock.now += 2
    assert cache.get("s", SCOPE, unit(0)) is None
    assert len(cache) == 0


def test_invalidate_index_drops_every_entry_using_it() -> None:
    cache = SemanticCache()
    both = CacheScope.of(["rfc", "mixed"])
    cache.put("s1", SCOPE, unit(0), "q", 1)
    cache.put("s2", both, unit(0), "q", 2)
    cache.put("s2", CacheScope.of(["mixed"]), unit(1), "q", 3)
    assert cache.invalidate_index("rfc") == 2
    assert cache.get("s1", SCOPE, unit(0)) is None and cache.get("s2", both, unit(0)) is None
    assert cache.get("s2", CacheScope.of(["mixed"]), unit(1)) is not None
    assert cache.invalidate_index("nope") == 0


def test_clear_session() -> None:
    cache = SemanticCache()
    cache.put("s", SCOPE, unit(0), "q", 1)
    cache.put("s", SCOPE, unit(1), "q", 2)
    cache.put("t", SCOPE, unit(0), "q", 3)
    assert cache.clear_session("s") == 2 and cache.clear_session("s") == 0
    assert cache.get("t", SCOPE, unit(0)) is not None


def test_payload_is_copied_both_ways() -> None:
    cache = SemanticCache()
    payload = {"answer": "x", "citations": [1]}
    cache.put("s", SCOPE, unit(0), "q", payload)
    payload["citations"].append(2)
    hit = cache.get("s", SCOPE, unit(0))
    assert hit is not None and hit.payload == {"answer": "x", "citations": [1]}
    hit.payload["answer"] = "changed"
    again = cache.get("s", SCOPE, unit(0))
    assert again is not None and again.payload["answer"] == "x" and again.hits == 2


def test_vectors_are_normalised_and_checked() -> None:
    cache = SemanticCache()
    cache.put("s", SCOPE, 5.0 * unit(0), "q", 1)
    assert cache.get("s", SCOPE, [0.5] + [0.0] * (DIM - 1)) is not None
    assert cache.get("s", SCOPE, np.ones(DIM + 1, dtype=np.float32)) is None  # other embedder: miss
    for bad in (np.zeros(DIM), np.array([]), np.full(DIM, np.nan)):
        with pytest.raises(ValueError):
            cache.get("s", SCOPE, bad)


@pytest.mark.parametrize("kwargs", [{"threshold": 0}, {"threshold": 1.5}, {"max_entries": 0},
                                    {"ttl_s": 0}, {"max_sessions": 0}])
def test_bad_configuration(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        SemanticCache(**kwargs)  # type: ignore[arg-type]


def test_from_settings(settings) -> None:  # type: ignore[no-untyped-def]
    s = settings.with_overrides(cache_threshold=0.95, cache_max_entries=5, cache_ttl_s=30)
    cache = SemanticCache.from_settings(s)
    assert (cache.threshold, cache.max_entries, cache.ttl_s) == (0.95, 5, 30)


def test_thread_safety_under_concurrent_use() -> None:
    cache = SemanticCache(max_entries=8)
    rng = np.random.default_rng(7)
    vectors = [v / np.linalg.norm(v) for v in rng.normal(size=(64, DIM)).astype(np.float32)]
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(300):
                vec = vectors[(n * 7 + i) % 64]
                session = f"s{n % 3}"
                if i % 3 == 0:
                    cache.put(session, SCOPE, vec, "q", {"n": n, "i": i})
                elif i % 50 == 1:
                    cache.invalidate_index("rfc")
                else:
                    cache.get(session, SCOPE, vec)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) <= 3 * 8
