"""Answers without a model: verbatim evidence sentences, each cited.

Why it exists: it is the backend that always works (no model, no GPU, no
server), the fallback when a model's answer cannot be validated, and the
baseline every generative backend must beat. Every sentence is copied from an
evidence block, so its citation is true by construction. The native selector
proposes sentences by overlap with the question; here they are re-scored with
a decay by block rank (the retriever's ranking carries information the word
overlap does not), and a hard-wrapped "sentence" that runs over many lines
(plain-text RFCs, PDFs) is narrowed to its best few lines. With the index's embedder at hand
(`meaning.Meaning`), every sentence of the evidence is a candidate and its closeness in meaning to
the question counts beside the overlap: a paraphrased question shares few words with the sentence
that answers it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import docent_native

from rag_system.grounding.quantities import asked_dimension, asks_quantity, states_quantity
from rag_system.generation.meaning import Meaning
from rag_system.grounding.terms import key_terms, term_set
from rag_system.retrieval.evidence import EvidenceBlock

MIN_OVERLAP = 0.1  # low on purpose: off-topic questions are refused before this runs
RANK_DECAY = 0.15  # score x 1 / (1 + RANK_DECAY * block rank)
MAX_SENTENCE_CHARS = 320
SAME_BLOCK = 0.75  # a further pick from an already-quoted block: score x SAME_BLOCK per earlier pick
POOL = 24
#: A further sentence is quoted only when it scores at least this share of the best one: asked "How many
#: days of bereavement leave ...?", the bereavement sentence scored 1.56 and the annual-leave and
#: parental-leave ones after it 0.53 and 0.39, true and beside the point.
FAR_BELOW = 0.55
#: How much a sentence's closeness in meaning (cosine, names taken out) counts beside its word overlap
#: (an idf-weighted share, 0..1): alike, so a paraphrase at cosine 0.6 with no shared word ranks with
#: a sentence that has 60% of the question's rarer words and nothing of its meaning.
MEANING_WEIGHT = 1.0
#: Asked "how many / how is it computed", a sentence with no number or formula counts this much: it
#: can hold every word of the question ("A Probe Timeout (PTO) triggers ... within the expected period
#: of time") and not the answer ("PTO = smoothed_rtt + max(4*rttvar, kGranularity) + max_ack_delay").
NO_QUANTITY = 0.5
#: Asked for a value of a dimension with units of its own ("What is the brew temperature?"), a sentence
#: with no value in those units counts this much: "The Atlas-7 brew boiler operates at a pressure of 9.2
#: bar" shares more of the question's words than "... keeps brew water at 93.5 degrees Celsius".
OTHER_DIMENSION = 0.25
_LIST_MARKER = re.compile(r"^\s*[-*\u2022]\s+")


@dataclass(frozen=True)
class Quote:
    """A cited extractive answer, and how close its closest sentence comes to the question in meaning."""

    text: str
    meaning: float | None = None  # None when no embedder was given


def selectable_text(block: EvidenceBlock) -> tuple[str, int]:
    """The block's text without its leading context line ("<document> > <headings>"), and its offset."""
    text = block.source_text
    first, sep, rest = text.partition("\n")
    if sep and first.startswith(block.candidate.document_name):
        return rest, len(first) + 1
    return text, 0


def extractive_answer(question: str, blocks: list[EvidenceBlock], max_sentences: int = 3) -> str | None:
    """Best-matching evidence sentences as a cited list, or None when nothing matches (by words alone)."""
    found = quote(question, blocks, max_sentences)
    return found.text if found else None


def quote(question: str, blocks: list[EvidenceBlock], max_sentences: int = 3, meaning: Meaning | None = None,
          asked: str | None = None) -> Quote | None:
    """The evidence sentences that best answer `question`, each cited; None when nothing matches.

    `question` may carry a failed draft's words (they help find the passage it meant); `asked` is
    the question alone, which is what meaning is measured against.
    """
    if not blocks or max_sentences <= 0:
        return None
    bodies = [selectable_text(b)[0] for b in blocks]
    picked = [(bi, start, end) for bi, start, end, _ in
              docent_native.select_evidence_sentences(question, bodies, POOL, MIN_OVERLAP)]
    if meaning is not None:  # every sentence may answer a paraphrase, shared words or not
        seen = set(picked)
        picked += [(bi, a, b) for bi, body in enumerate(bodies) for a, b in docent_native.split_sentences(body)
                   if (bi, a, b) not in seen and body[a:b].strip()]
    if not picked:
        return None
    terms = key_terms(question)
    spans = [(bi, start, _narrow(bodies[bi][start:end], terms)) for bi, start, end in picked]
    # A sentence holding what reads as a marker ("sorted([5, 2, 3]) [1, 2, 3]") would cite blocks it
    # never meant to, or a block that is not there; quoting it cannot be checked, so it is not quoted.
    spans = [s for s in spans if not _reads_as_cited(s[2])]
    if not spans:
        return None
    weights = _idf(terms, [span for _, _, span in spans])
    total = sum(weights.values()) or 1.0
    close = meaning.similarities(asked or question, [span for _, _, span in spans]) if meaning else [0.0] * len(spans)
    wants_quantity = asks_quantity(asked or question)
    dimension = asked_dimension(asked or question)
    scored = []
    for (block_index, start, span), cosine in zip(spans, close):
        present = term_set([span])
        weight = sum(w for t, w in weights.items() if t in present) / total + MEANING_WEIGHT * max(cosine, 0.0)
        if wants_quantity and not states_quantity(span, asked or question):
            weight *= NO_QUANTITY
        if dimension and not dimension[1].search(span):
            weight *= OTHER_DIMENSION
        scored.append((weight / (1.0 + RANK_DECAY * block_index), block_index, start, span, cosine))
    # A failed draft's words lift the passage it was about: a cut relative to that passage's score would
    # drop the sentence of another block that answers the question (the grind size behind the warranty).
    top = _diverse(scored, max_sentences, FAR_BELOW if asked in (None, question) else 0.0)
    chosen = _with_following(sorted([s[:4] for s in top], key=lambda s: (s[1], s[2])), bodies)
    lines = [_cited(span, blocks[bi].number) for _, bi, _, span in chosen]
    text = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
    return Quote(text, max(s[4] for s in top) if meaning else None)


def _diverse(scored: list[tuple[float, int, int, str, float]], n: int,
             far_below: float = 0.0) -> list[tuple[float, int, int, str, float]]:
    """The `n` best sentences, each further one from a block already quoted counting `SAME_BLOCK` less,
    and none scoring below `far_below` times the first.

    The top-ranked block holds many sentences that share the question's words; three picks from it
    hide the one sentence of another block that answers (an RFC's definition behind its overview).
    """
    left = sorted(scored, key=lambda s: (-s[0], s[1], s[2]))
    top: list[tuple[float, int, int, str, float]] = []
    used: dict[int, int] = {}
    while left and len(top) < n:
        best = max(range(len(left)), key=lambda i: (left[i][0] * SAME_BLOCK ** used.get(left[i][1], 0), -i))
        if top and left[best][0] < far_below * top[0][0]:
            break
        pick = left.pop(best)
        used[pick[1]] = used.get(pick[1], 0) + 1
        top.append(pick)
    return top


def _reads_as_cited(sentence: str) -> bool:
    return any(numbers for _, _, numbers in docent_native.parse_citations(sentence))


def _cited(span: str, number: int) -> str:
    """Every sentence of the span gets the marker: the validator checks sentence by sentence."""
    parts = [span[a:b] for a, b in docent_native.split_sentences(span)] or [span]
    # A Markdown list item's own bullet would stack on the answer's ("- - Looked up ..."); the rest
    # of the line is still verbatim text of the block.
    parts = [_LIST_MARKER.sub("", part, count=1) for part in parts]
    return " ".join(f"{' '.join(part.split())} [{number}]" for part in parts if part.strip())


def _with_following(chosen: list[tuple[float, int, int, str]],
                    bodies: list[str]) -> list[tuple[float, int, int, str]]:
    """Extend each short pick with the sentence that follows it in its block.

    A sentence that names the thing asked about ("ack_delay_exponent (0x0a):
    The acknowledgment delay exponent is ...") is often followed by the one
    that answers ("If this value is absent, a default value of 3 is
    assumed"), which shares few words with the question. The extension is
    contiguous text of the block, so the answer stays verbatim; picks that
    would then overlap the next pick are left alone.
    """
    out = []
    taken = {(bi, start) for _, bi, start, _ in chosen}
    for score, bi, start, span in chosen:
        body = bodies[bi]
        end = start + len(span)
        if body[start:end] == span and len(span) < MAX_SENTENCE_CHARS:
            following = [(a, b) for a, b in docent_native.split_sentences(body) if a >= end]
            if following and (bi, following[0][0]) not in taken:
                a, b = following[0]
                if b - start <= MAX_SENTENCE_CHARS + 80 and not _reads_as_cited(body[a:b]) \
                        and sum(c.isalpha() for c in body[a:b]) >= 3:  # not a list's next number ("7.")
                    span = body[start:b]
        out.append((score, bi, start, span))
    return out


def _idf(terms: list[str], sentences: list[str]) -> dict[str, float]:
    """Rarer question terms (among the candidate sentences) say more about which sentence answers."""
    sets = [term_set([s]) for s in sentences]
    n = len(sets)
    return {t: math.log((n + 1) / (sum(1 for s in sets if t in s) + 0.5)) for t in terms}


def _narrow(sentence: str, terms: list[str]) -> str:
    """A long, hard-wrapped sentence cut to the window of whole lines that covers the most terms."""
    if len(sentence) <= MAX_SENTENCE_CHARS or "\n" not in sentence:
        return sentence
    lines = sentence.split("\n")
    wanted = set(terms)
    best, best_score = sentence[:0], -1.0
    for i in range(len(lines)):
        window: list[str] = []
        for line in lines[i:]:
            if window and len("\n".join(window + [line])) > MAX_SENTENCE_CHARS:
                break
            window.append(line)
        text = "\n".join(window)
        hits = len(wanted & term_set([text]))
        if hits > best_score:
            best, best_score = text, hits
    return best.strip() or sentence
