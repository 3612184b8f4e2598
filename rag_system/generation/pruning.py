"""Evidence cut to the sentences that bear on the question, before it goes into the prompt.

Why: a chunk is sized for retrieval (~500 tokens), but the sentence that
answers is usually one or two of its fifteen. On 2 CPU cores the packaged
1.5B model reads ~65 prompt tokens a second, so five whole chunks cost over
30 s before the first word, and a budget that holds three whole chunks
leaves out the fourth-ranked one, which is often the one with the fact.

So the prompt's evidence budget is spent on sentences, not chunks: every
sentence of the ranked blocks is scored by the question's terms it holds
(weighted by how rare each term is among those sentences, names and codes
counting double) with a decay by its block's rank, and the best are taken,
each with the sentence after it (a definition is often followed by its
value), until the budget is spent. The top-ranked block's best sentence is
always taken first. The model sees verbatim runs of each block's own text,
so what it quotes is in the block; the validator and the source cards use
the whole block.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import docent_native

from common.lexicon import ASKING_WORDS
from rag_system.grounding.terms import term_set, weighted_terms

#: Excerpt runs of one block are joined by this line; it is not text of any block.
GAP = "\n…\n"
#: A sentence of the block ranked r scores score / (1 + RANK_DECAY * r): the retriever's order counts.
RANK_DECAY = 0.15
#: Tokens a block's label and separators cost in the prompt, besides its excerpt.
LABEL_TOKENS = 16

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class _Sentence:
    block: int
    index: int  # position within its block
    start: int
    end: int
    priority: float


def excerpts(bodies: list[str], question: str, budget_tokens: int, count_tokens: TokenCounter,
             *, follow: int = 1) -> list[str]:
    """One excerpt per body, best blocks first ("" for a block none of whose sentences was taken).

    `follow`: sentences after each pick that come with it. A block whose
    sentences share no term with the question contributes nothing, except
    the top-ranked block, whose opening sentence stands in (it was retrieved
    for a reason the words do not show, e.g. by meaning).
    """
    spans = [docent_native.split_sentences(b) for b in bodies]
    weights = {t: w for t, w in weighted_terms(question).items() if t not in ASKING_WORDS}
    present = [[term_set([b[s:e]]) for s, e in block] for b, block in zip(bodies, spans)]
    n = sum(len(p) for p in present) or 1
    df = {t: sum(1 for block in present for p in block if t in p) for t in weights}
    idf = {t: math.log((n + 1) / (df[t] + 0.5)) for t in weights}
    ranked: list[_Sentence] = []
    for bi, block in enumerate(spans):
        for si, (s, e) in enumerate(block):
            score = sum(w * idf[t] for t, w in weights.items() if t in present[bi][si])
            if score > 0:
                ranked.append(_Sentence(bi, si, s, e, score / (1.0 + RANK_DECAY * bi)))
    ranked.sort(key=lambda x: (-x.priority, x.block, x.index))
    first = next((x for x in ranked if x.block == 0), None)
    if first is None and spans and spans[0]:
        first = _Sentence(0, 0, *spans[0][0], 0.0)
    chosen: list[set[int]] = [set() for _ in bodies]
    left = budget_tokens
    for pick in ([first] if first else []) + ranked:
        if left <= LABEL_TOKENS:
            break
        block = spans[pick.block]
        new = [i for i in range(pick.index, min(len(block), pick.index + follow + 1))
               if i not in chosen[pick.block]]
        if not new:
            continue
        cost = sum(count_tokens(bodies[pick.block][block[i][0]:block[i][1]]) + 1 for i in new)
        cost += 0 if chosen[pick.block] else LABEL_TOKENS
        if cost > left and pick is not first:
            continue
        chosen[pick.block].update(new)
        left -= cost
    _fill(bodies, spans, chosen, left, count_tokens)
    return [_render(body, block, keep) for body, block, keep in zip(bodies, spans, chosen)]


def _fill(bodies: list[str], spans: list[list[tuple[int, int]]], chosen: list[set[int]], left: int,
          count_tokens: TokenCounter) -> None:
    """Spend what the budget has left on the context of what was taken: nearest sentences first, best blocks first.

    A paraphrased question shares no word with the sentence that answers it
    but does with its neighbours; the budget is there to be read.
    """
    order: list[tuple[int, int, int, int]] = []
    for bi, keep in enumerate(chosen):
        for si in range(len(spans[bi])):
            if si not in keep:
                # Context of taken sentences first; then untouched blocks, from their start.
                order.append((0, min(abs(si - k) for k in keep), bi, si) if keep else (1, bi, si, 0))
    order.sort()
    opened = {bi for bi, keep in enumerate(chosen) if keep}
    for _, a, b, c in order:
        bi, si = (b, c) if _ == 0 else (a, b)
        s, e = spans[bi][si]
        cost = count_tokens(bodies[bi][s:e]) + 1 + (0 if bi in opened else LABEL_TOKENS)
        if cost <= left:
            chosen[bi].add(si)
            opened.add(bi)
            left -= cost


def _render(body: str, spans: list[tuple[int, int]], keep: set[int]) -> str:
    """Runs of consecutive kept sentences, verbatim, joined by GAP."""
    if not keep:
        return ""
    if len(keep) == len(spans):
        return body.strip()
    runs: list[str] = []
    order = sorted(keep)
    run_start = previous = order[0]
    for i in order[1:]:
        if i != previous + 1:
            runs.append(body[spans[run_start][0]:spans[previous][1]])
            run_start = i
        previous = i
    runs.append(body[spans[run_start][0]:spans[previous][1]])
    return GAP.join(runs)
