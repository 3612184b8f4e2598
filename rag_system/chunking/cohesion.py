"""Lexical cohesion at paragraph starts: where a passage most likely changes topic.

Why: a chunk is relevant when it holds the start of an answer, and greedy
packing cuts wherever the budget runs out. When an answer opens in the last
lines of a chunk, the chunk is mostly about what came before, and the next
chunk, which holds the rest of the answer, does not contain its start. Texts
without headings make this common (an FAQ whose questions are not headings,
a report's run-on paragraphs). TextTiling's observation (Hearst, 1997) is
that a topic shift shows as a dip in the vocabulary shared across a gap; the
chunker breaks at the paragraph start with the lowest such overlap in the
back part of a full chunk instead of at the budget's edge.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from common import lexicon
from common.lexicon import STOP_WORDS, stem

#: Words of text read on each side of a gap (about two short paragraphs).
SPAN_WORDS = 60


def gap_cohesion(texts: Sequence[str], starts: Sequence[bool], span: int = SPAN_WORDS) -> list[float | None]:
    """For each unit that opens a paragraph (not the first), the cosine similarity of
    the content-word stems in the `span` words before and after it; None elsewhere."""
    bags = [_bag(text) for text in texts]
    sizes = [len(text.split()) for text in texts]
    out: list[float | None] = [None] * len(texts)
    for i in range(1, len(texts)):
        if starts[i]:
            out[i] = _cosine(_gather(bags, sizes, range(i - 1, -1, -1), span),
                             _gather(bags, sizes, range(i, len(texts)), span))
    return out


def _bag(text: str) -> Counter[str]:
    return Counter(stem(w) for w in lexicon.words(text) if len(w) > 2 and w[0].isalpha() and w not in STOP_WORDS)


def _gather(bags: Sequence[Counter[str]], sizes: Sequence[int], order: range, span: int) -> Counter[str]:
    total: Counter[str] = Counter()
    words = 0
    for j in order:
        total.update(bags[j])
        words += sizes[j]
        if words >= span:
            break
    return total


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(v * b[k] for k, v in a.items() if k in b)
    norm = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def best_break(cohesion: Sequence[float | None], sizes: Sequence[int], earliest: int,
               min_tokens: int, room: int) -> int | None:
    """Where to end a full chunk of units with `sizes`: the position p (1..len(sizes))
    with the lowest cohesion among paragraph starts at or after `earliest` with at
    least `min_tokens` before p and at most `room` from p on (so what follows the
    break still fits with the unit that did not); on ties the latest.
    `cohesion[p]` belongs to the gap before unit p; `cohesion[len(sizes)]` to the
    unit that did not fit, where p = len(sizes) means "end the chunk here"."""
    best: tuple[float, int] | None = None
    filled, total = 0, sum(sizes)
    for p in range(1, len(sizes) + 1):
        filled += sizes[p - 1]
        value = cohesion[p]
        if p < earliest or value is None or filled < min_tokens or total - filled > room:
            continue
        if best is None or value <= best[0]:
            best = (value, p)
    return best[1] if best else None
