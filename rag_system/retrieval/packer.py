"""Token-budget packer: rank-ordered evidence blocks that fit the LLM's window.

Why strict rank order with a hard stop: the reranker already decided what
matters most; skipping a block that does not fit to squeeze in a smaller,
worse one would let budget arithmetic overrule relevance. The only exception
is the last block, which may be cut at a sentence boundary when at least half
of it still fits, because half a highly ranked passage usually beats nothing.
Every block is labelled `[n] <document name>, p. <pages>` (a table's rows:
`[n] <name>, Sheet Q3, rows 12–40`) so the answer can cite it as `[n]` and
the citation validator can find it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from rag_system.chunking.sentences import split_sentences
from rag_system.retrieval.evidence import EvidenceBlock, PackedContext
from rag_system.retrieval.types import Candidate

log = logging.getLogger(__name__)

TokenCounter = Callable[[list[str]], list[int]]
Labeller = Callable[[int, Candidate], str]
#: What of a candidate goes into the prompt (an excerpt), and what it is checked against (its whole text).
Shaper = Callable[[Candidate], tuple[str, str]]


class BudgetError(ValueError):
    """The packing budget or truncation fraction is unusable."""


def page_span(candidate: Candidate) -> str:
    """"3" for one page, "3-5" for a range."""
    if candidate.page_end <= candidate.page_start:
        return str(candidate.page_start)
    return f"{candidate.page_start}-{candidate.page_end}"


def evidence_label(number: int, candidate: Candidate) -> str:
    """The label the synthesis prompt and the citation validator agree on."""
    return f"[{number}] {candidate.document_name}, {candidate.place or 'p. ' + page_span(candidate)}"


def pack(candidates: list[Candidate], count_tokens: TokenCounter, budget_tokens: int,
         label: Labeller = evidence_label, min_partial: float = 0.5, shape: Shaper | None = None,
         keep_first: bool = False) -> PackedContext:
    """Pack `candidates` (best first) into at most `budget_tokens` tokens.

    A block is its label, a newline and the candidate text, counted with
    `count_tokens` (the synthesis model's tokenizer). Packing stops at the
    first block that does not fit whole; that block is cut at a sentence
    boundary instead if the cut keeps at least `min_partial` of its tokens.
    The caller leaves headroom for the block separators and the prompt.

    `shape` turns a candidate into (prompt excerpt, whole text); the block
    keeps both. `keep_first`: the best-ranked block always reaches the
    prompt, cut to whatever room there is (at a sentence or line end, else
    by words), because the retriever's first pick is the likeliest answer and
    no budget arithmetic should leave it out.
    """
    if budget_tokens < 0:
        raise BudgetError(f"budget_tokens must be >= 0, got {budget_tokens}")
    if not 0.0 < min_partial <= 1.0:
        raise BudgetError(f"min_partial must be in (0, 1], got {min_partial}")
    blocks: list[EvidenceBlock] = []
    used = 0
    truncated_block: int | None = None
    stop_at = len(candidates)
    for position, candidate in enumerate(candidates):
        number = len(blocks) + 1
        text_label = label(number, candidate)
        excerpt, whole = shape(candidate) if shape is not None else (candidate.text, None)
        full = f"{text_label}\n{excerpt}"
        tokens = count_tokens([full])[0]
        if used + tokens <= budget_tokens:
            blocks.append(EvidenceBlock(number, candidate, text_label, excerpt, tokens, full_text=whole))
            used += tokens
            continue
        first = keep_first and not blocks
        cut = _truncate(excerpt, text_label, count_tokens, budget_tokens - used,
                        min_tokens=0 if first else min_partial * tokens)
        if cut is None and first:
            cut = _truncate_words(excerpt, text_label, count_tokens, budget_tokens)
        if cut is not None:
            text, cut_tokens = cut
            blocks.append(EvidenceBlock(number, candidate, text_label, text, cut_tokens, truncated=True,
                                        full_text=whole if whole is not None else candidate.text))
            used += cut_tokens
            truncated_block = number
            log.debug("block %d cut to %d of %d tokens", number, cut_tokens, tokens)
        stop_at = position + (1 if cut is not None else 0)
        break
    dropped = list(candidates[stop_at:])
    return PackedContext(blocks=blocks, budget_tokens=budget_tokens, used_tokens=used,
                         dropped=dropped, truncated_block=truncated_block)


def widen(prompt: PackedContext, wider: PackedContext, label: Labeller = evidence_label) -> PackedContext:
    """The model's blocks as numbered in its prompt, then the wider packing's other blocks, numbered on.

    Why: the model pays for every prompt token, so it reads a small budget of
    excerpts; quoting pays nothing per token. When the model declines or its
    answer fails the checks, the quote that replaces it must choose from the
    same evidence quoting alone would have had (on the mixed gold set the
    fact was in the model's evidence for 0.917 of the rows, in quoting's for
    0.958), and the rules that refuse before generation must see what
    quoting sees, so both backends refuse by the same rule. One numbering
    serves both: the prompt's blocks keep theirs (1..k, what the model
    cites), the others follow, marked `in_prompt=False`.
    """
    shown = {b.candidate.chunk_id for b in prompt.blocks}
    rank = {b.candidate.chunk_id: b.number for b in wider.blocks}
    blocks = [replace(b, rank=rank.get(b.candidate.chunk_id, len(wider.blocks) + b.number)) for b in prompt.blocks]
    for block in wider.blocks:
        if block.candidate.chunk_id in shown:
            continue
        number = len(blocks) + 1
        blocks.append(replace(block, number=number, label=label(number, block.candidate), in_prompt=False,
                              full_text=block.source_text, rank=block.number))
    kept = {b.candidate.chunk_id for b in blocks}
    return PackedContext(blocks=blocks, budget_tokens=prompt.budget_tokens, used_tokens=prompt.used_tokens,
                         dropped=[c for c in prompt.dropped if c.chunk_id not in kept],
                         truncated_block=prompt.truncated_block)


def cut_points(text: str) -> list[int]:
    """Offsets just after each sentence or line end, ascending, excluding 0 and len(text).

    The text up to a cut point is an exact prefix of the original, so a quote
    checked against the block is a quote from the document.
    """
    points: set[int] = set()
    cursor = 0
    for sentence in split_sentences(text):
        found = text.find(sentence, cursor)
        if found < 0:  # cannot happen: sentences are verbatim substrings
            continue
        cursor = found + len(sentence)
        points.add(cursor)
    start = 0
    while (nl := text.find("\n", start)) >= 0:
        points.add(len(text[:nl].rstrip()))
        start = nl + 1
    body_end = len(text.rstrip())
    return sorted(p for p in points if 0 < p < body_end)


def _truncate_words(text: str, text_label: str, count_tokens: TokenCounter, room: int) -> tuple[str, int] | None:
    """The longest whole-word prefix that fits `room` (for a first block with no usable sentence end)."""
    ends = [i for i in range(1, len(text)) if text[i].isspace() and not text[i - 1].isspace()]
    best: tuple[str, int] | None = None
    lo, hi = 0, len(ends) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        tokens = count_tokens([f"{text_label}\n{text[:ends[mid]]}"])[0]
        if tokens <= room:
            best, lo = (text[:ends[mid]], tokens), mid + 1
        else:
            hi = mid - 1
    return best


def _truncate(text: str, text_label: str, count_tokens: TokenCounter, room: int,
              min_tokens: float) -> tuple[str, int] | None:
    """The longest sentence-boundary prefix whose block fits `room`, if it keeps `min_tokens`."""
    if room < min_tokens:
        return None
    points = cut_points(text)
    best: tuple[str, int] | None = None
    lo, hi = 0, len(points) - 1
    while lo <= hi:  # prefix token counts grow with the prefix, so binary search
        mid = (lo + hi) // 2
        prefix = text[:points[mid]]
        tokens = count_tokens([f"{text_label}\n{prefix}"])[0]
        if tokens <= room:
            best, lo = (prefix, tokens), mid + 1
        else:
            hi = mid - 1
    if best is None or best[1] < min_tokens:
        return None
    return best
