"""Threshold selection after reranking, and how RERANKER_MODEL picks an implementation.

Why: selection decides which passages the answer may use. It must be a pure,
predictable rule (sorted, stable on ties, threshold, min_keep fill, top_k
cap) and every candidate must carry the reason it was kept or dropped, for
the evidence inspector. Hypothesis checks the invariants on random scores.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_system.retrieval.rerank import SelectionError, reranker_kind, select_reranked
from rag_system.retrieval.reranker_types import KIND_CROSS_ENCODER, KIND_LLM, KIND_NONE
from rag_system.retrieval.types import Candidate


def cands(n: int) -> list[Candidate]:
    return [Candidate(chunk_id=f"c{i}", document_id="d", document_name="d.txt", chunk_index=i,
                      page_start=1, page_end=1, heading_path="", block_type="paragraph",
                      text=f"text {i}", metadata="{}") for i in range(n)]


def ids(items: list[Candidate]) -> list[str]:
    return [c.chunk_id for c in items]


def select(candidates: list[Candidate], scores: list[float], min_score: float,
           min_keep: int, top_k: int) -> list[Candidate]:
    """The kept candidates of `select_reranked`, best first (what the engine passes on)."""
    return [r.candidate for r in select_reranked(candidates, scores, min_score, min_keep, top_k) if r.kept]


def test_threshold_sorts_and_explains() -> None:
    out = select_reranked(cands(4), [0.2, 0.9, 0.6, 0.1], min_score=0.5, min_keep=0, top_k=10)
    assert [(r.candidate.chunk_id, r.kept, r.reason) for r in out] == [
        ("c1", True, "above_min_score"), ("c2", True, "above_min_score"),
        ("c0", False, "below_min_score"), ("c3", False, "below_min_score")]
    assert [r.score for r in out] == [0.9, 0.6, 0.2, 0.1]


def test_min_keep_fills_and_top_k_caps() -> None:
    assert ids(select(cands(4), [0.2, 0.9, 0.1, 0.3], min_score=0.8, min_keep=3, top_k=10)) == ["c1", "c3", "c0"]
    reasons = [r.reason for r in select_reranked(cands(4), [0.2, 0.9, 0.1, 0.3], 0.8, 3, 10)]
    assert reasons == ["above_min_score", "min_keep", "min_keep", "below_min_score"]
    capped = select_reranked(cands(4), [0.7, 0.9, 0.8, 0.95], min_score=0.5, min_keep=0, top_k=2)
    assert [(r.candidate.chunk_id, r.reason) for r in capped] == [
        ("c3", "above_min_score"), ("c1", "above_min_score"), ("c2", "beyond_top_k"), ("c0", "beyond_top_k")]
    assert ids(select(cands(5), [0.0] * 5, min_score=0.5, min_keep=4, top_k=2)) == ["c0", "c1"]  # top_k wins


def test_ties_keep_first_stage_order_and_nan_sorts_last() -> None:
    assert ids(select(cands(4), [0.5, 0.7, 0.5, 0.7], 0.0, 0, 10)) == ["c1", "c3", "c0", "c2"]
    out = select_reranked(cands(3), [math.nan, 0.1, 0.2], min_score=-1.0, min_keep=0, top_k=10)
    assert ids([r.candidate for r in out]) == ["c2", "c1", "c0"]
    assert out[-1].kept is False and out[-1].reason == "below_min_score"


def test_bad_arguments() -> None:
    with pytest.raises(SelectionError, match="scores"):
        select(cands(2), [0.1], 0.0, 0, 5)
    with pytest.raises(SelectionError, match="top_k"):
        select(cands(2), [0.1, 0.2], 0.0, 0, 0)
    with pytest.raises(SelectionError, match="min_keep"):
        select(cands(2), [0.1, 0.2], 0.0, -1, 3)
    assert select([], [], 0.5, 3, 5) == []


@pytest.mark.parametrize(("spec", "kind"), [
    ("", KIND_NONE), ("  ", KIND_NONE), ("models/judge.gguf", KIND_LLM), ("/m/Judge.GGUF", KIND_LLM),
    ("llm:/m/judge.bin", KIND_LLM), ("cross-encoder:/m/ce", KIND_CROSS_ENCODER),
    ("mixedbread-ai/mxbai-rerank-base-v1", KIND_CROSS_ENCODER), ("/models/ce", KIND_CROSS_ENCODER)])
def test_reranker_kind(spec: str, kind: str) -> None:
    assert reranker_kind(spec) == kind


SCORES = st.lists(st.one_of(st.floats(min_value=-5, max_value=5), st.sampled_from([0.0, 0.5, 1.0])), max_size=30)


@settings(max_examples=300, deadline=None)
@given(scores=SCORES, min_score=st.floats(min_value=-5, max_value=5),
       min_keep=st.integers(min_value=0, max_value=10), top_k=st.integers(min_value=1, max_value=12))
def test_selection_invariants(scores: list[float], min_score: float, min_keep: int, top_k: int) -> None:
    items = cands(len(scores))
    ranked = select_reranked(items, scores, min_score, min_keep, top_k)
    kept = [r for r in ranked if r.kept]
    n = len(scores)
    assert sorted(ids([r.candidate for r in ranked])) == sorted(ids(items))  # every candidate, once
    assert min(min_keep, n, top_k) <= len(kept) <= top_k
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    for a, b in zip(ranked, ranked[1:]):  # stable: equal scores keep first-stage order
        if a.score == b.score:
            assert a.candidate.chunk_index < b.candidate.chunk_index
    assert kept == ranked[:len(kept)]  # the kept ones are the best ones
    for r in kept:
        assert r.score >= min_score or r.reason == "min_keep"
    fill = [r for r in kept if r.reason == "min_keep"]
    assert len(kept) <= max(min_keep, len(kept) - len(fill))  # fill only up to min_keep
    passing = sum(1 for s in scores if s >= min_score)
    assert len(kept) == min(top_k, max(passing, min(min_keep, n)))
    assert ids(select(items, scores, min_score, min_keep, top_k)) == ids([r.candidate for r in kept])


def test_a_blend_needs_both_rankings_to_move_a_chunk_far() -> None:
    from rag_system.retrieval.rerank import blended_order

    scores = [0.1, 0.2, 0.9, math.nan]  # the reranker alone would put the first stage's 1st chunk last of three
    assert blended_order(scores, 0.0) == [2, 1, 0, 3]
    # 1st and 3rd ties 3rd and 1st (the first stage's order breaks it) and beats 2nd and 2nd; unscored last.
    assert blended_order(scores, 1.0) == [0, 2, 1, 3]
    assert blended_order(scores, 0.5) == [2, 1, 0, 3]  # the reranker counts twice as much
    assert blended_order(scores, 5.0) == [0, 1, 2, 3]  # the first stage dominates
    kept = select_reranked(cands(4), scores, min_score=0.15, min_keep=0, top_k=10, blend=1.0)
    assert [(r.candidate.chunk_id, r.kept) for r in kept] == [("c0", False), ("c2", True), ("c1", True), ("c3", False)]
