"""The token-budget packer: labels, rank order, the hard stop, the one partial block.

Why: the LLM's window is finite and the answer cites blocks by number, so the
packer must never exceed the budget, never reorder, never skip ahead to a
smaller block, and only cut the last block at a sentence boundary when at
least half of it survives. A whitespace token counter keeps counts obvious.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_system.retrieval.packer import (
    BudgetError,
    cut_points,
    evidence_label,
    pack,
    page_span,
    widen,
)
from rag_system.retrieval.types import Candidate


def words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def cand(name: str, text: str, pages: tuple[int, int] = (1, 1), index: int = 0) -> Candidate:
    return Candidate(chunk_id=f"{name}-{index}", document_id=name, document_name=name, chunk_index=index,
                     page_start=pages[0], page_end=pages[1], heading_path="", block_type="paragraph",
                     text=text, metadata="{}")


def test_labels_name_document_and_pages() -> None:
    assert evidence_label(1, cand("a.pdf", "x", (3, 3))) == "[1] a.pdf, p. 3"
    assert evidence_label(12, cand("b report.docx", "x", (3, 5))) == "[12] b report.docx, p. 3-5"
    assert page_span(cand("c", "x", (7, 7))) == "7"


def test_everything_fits_in_rank_order() -> None:
    cands = [cand("a.pdf", "One two three.", (2, 2)), cand("b.pdf", "Four five.", (4, 6))]
    packed = pack(cands, words, budget_tokens=100, label=evidence_label)
    assert [b.number for b in packed.blocks] == [1, 2]
    assert [b.candidate for b in packed.blocks] == cands
    # label "[1] a.pdf, p. 2" is 4 words, text 3 words
    assert [b.tokens for b in packed.blocks] == [7, 6]
    assert packed.used_tokens == 13 and packed.dropped == [] and packed.truncated_block is None
    assert packed.text == "[1] a.pdf, p. 2\nOne two three.\n\n[2] b.pdf, p. 4-6\nFour five."


def test_stops_at_first_block_that_does_not_fit() -> None:
    big = cand("big", " ".join(["w"] * 40), index=1)  # one 40-word "sentence": cannot be cut
    small = cand("small", "Tiny.", index=2)
    first = cand("first", "Alpha beta gamma.", index=0)
    packed = pack([first, big, small], words, budget_tokens=20, label=evidence_label)
    assert [b.candidate.chunk_id for b in packed.blocks] == ["first-0"]
    assert packed.dropped == [big, small]  # `small` would fit, but rank order wins


def test_last_block_cut_at_sentence_boundary_when_half_fits() -> None:
    text = "Aa bb cc dd. Ee ff gg hh. Ii jj kk ll. Mm nn oo pp."
    first = cand("first", "One two three four five six.", index=0)  # 4 + 6 = 10 tokens
    second = cand("second", text, index=1)  # 4 + 16 = 20 tokens
    third = cand("third", "Never packed.", index=2)
    packed = pack([first, second, third], words, budget_tokens=10 + 14, label=evidence_label)
    assert packed.truncated_block == 2
    block = packed.blocks[1]
    assert block.truncated and block.text == "Aa bb cc dd. Ee ff gg hh."
    assert text.startswith(block.text)
    assert block.tokens == 12 and packed.used_tokens == 22 <= 24
    assert packed.dropped == [third]


def test_no_cut_when_less_than_half_would_fit() -> None:
    text = "Aa bb cc dd. Ee ff gg hh. Ii jj kk ll. Mm nn oo pp."
    packed = pack([cand("x", text)], words, budget_tokens=9, label=evidence_label)  # block = 20 tokens
    assert packed.blocks == [] and packed.truncated_block is None and len(packed.dropped) == 1


def test_cut_needs_half_of_the_block_to_survive_not_just_room() -> None:
    # Room for 12 of 20 tokens, but the only sentence boundary keeps 4 + 4 = 8 < 10.
    text = "Aa bb cc dd. Ee ff gg hh ii jj kk ll mm nn oo pp."
    packed = pack([cand("x", text)], words, budget_tokens=12, label=evidence_label)
    assert packed.blocks == []


def test_lines_are_boundaries_too() -> None:
    text = "Heading without stop\nBody one two three four five six seven"
    assert cut_points(text) == [len("Heading without stop")]


def test_custom_label_and_zero_budget() -> None:
    packed = pack([cand("a", "x y z")], words, budget_tokens=4, label=lambda n, c: f"<{n}>")
    assert packed.blocks[0].rendered == "<1>\nx y z" and packed.blocks[0].tokens == 4
    assert pack([cand("a", "x")], words, budget_tokens=0).blocks == []
    with pytest.raises(BudgetError):
        pack([], words, budget_tokens=-1)


SENTENCE = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=1, max_size=8).map(
    lambda ws: " ".join(ws).capitalize() + ".")
TEXT = st.lists(SENTENCE, min_size=1, max_size=6).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(TEXT, max_size=8), budget=st.integers(min_value=0, max_value=120))
def test_packing_invariants(texts: list[str], budget: int) -> None:
    cands = [cand(f"d{i}", t, index=i) for i, t in enumerate(texts)]
    packed = pack(cands, words, budget, label=evidence_label)
    assert packed.used_tokens <= budget
    assert packed.used_tokens == sum(b.tokens for b in packed.blocks)
    assert [b.number for b in packed.blocks] == list(range(1, len(packed.blocks) + 1))
    assert [b.candidate for b in packed.blocks] + packed.dropped == cands  # a prefix, in rank order
    for block in packed.blocks:
        assert block.tokens == words([block.rendered])[0]
        assert block.candidate.text.startswith(block.text)
        assert block.label == evidence_label(block.number, block.candidate)
    cut = [b for b in packed.blocks if b.truncated]
    assert len(cut) <= 1
    if cut:
        assert cut[0] is packed.blocks[-1] and packed.truncated_block == cut[0].number
        assert cut[0].text.endswith(".")
        full = words([f"{cut[0].label}\n{cut[0].candidate.text}"])[0]
        assert cut[0].tokens * 2 >= full


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=8), small=st.integers(min_value=0, max_value=60),
       extra=st.integers(min_value=0, max_value=120))
def test_widen_keeps_the_prompt_numbering_and_adds_quoting_blocks_after_it(texts: list[str], small: int,
                                                                           extra: int) -> None:
    """The model cites what it read by its number; quoting's other blocks follow, never in the prompt."""
    cands = [cand(f"d{i}", t, index=i) for i, t in enumerate(texts)]
    prompt = pack(cands, words, small, keep_first=True)
    wider = pack(cands, words, small + extra, keep_first=True)
    both = widen(prompt, wider)
    assert [replace(b, rank=0) for b in both.blocks[:len(prompt.blocks)]] == prompt.blocks
    wider_rank = {b.candidate.chunk_id: b.number for b in wider.blocks}
    assert all(b.rank == wider_rank[b.candidate.chunk_id] for b in both.blocks if b.candidate.chunk_id in wider_rank)
    assert [b.number for b in both.blocks] == list(range(1, len(both.blocks) + 1))
    assert all(not b.in_prompt for b in both.blocks[len(prompt.blocks):])
    ids = [b.candidate.chunk_id for b in both.blocks]
    assert len(ids) == len(set(ids)) and set(ids) == {b.candidate.chunk_id for b in prompt.blocks + wider.blocks}
    assert both.text == prompt.text  # what the model reads is unchanged
    for block in both.blocks:
        assert block.label == evidence_label(block.number, block.candidate)
        assert block.candidate.text.startswith(block.source_text) or block.source_text == block.candidate.text
