"""`legs.best_first`: each chunk's first hit, in order, by Arrow kernels, as the Python loop it replaced."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from rag_system.retrieval.legs import best_first
from testkit.leg_references import best_per_chunk


def test_keeps_each_chunks_first_hit_in_order() -> None:
    hits = pa.table({"chunk_id": ["b", "a", "b", "c", "a", "d"], "_score": [9.0, 8.0, 7.0, None, 5.0, 4.0]})
    ids, scores = best_first(hits, "_score", 3)
    assert ids == ["b", "a", "c"] and scores.to_pylist() == [9.0, 8.0, 0.0]
    none, nothing = best_first(hits.slice(0, 0), "_score", 3)
    assert none == [] and len(nothing) == 0


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(0, 100)), max_size=40), st.integers(1, 10))
def test_agrees_with_the_loop(pairs: list[tuple[str, float]], limit: int) -> None:
    hits = pa.table({"chunk_id": pa.array([c for c, _ in pairs], pa.string()),
                     "_distance": pa.array([d for _, d in pairs], pa.float32())})
    ids, values = best_first(hits, "_distance", limit)
    assert list(zip(ids, values.to_pylist())) == best_per_chunk(hits, "_distance", limit)
