"""Answers without a model: verbatim evidence sentences, each cited.

Why it exists: it is the backend that always works (no model, no GPU, no
server), the fallback when a model's answer cannot be validated, and the
baseline every generative backend must beat. Every sentence is copied from an
evidence block, so its citation is true by construction. The native selector
proposes sentences by overlap with the question; here they are re-scored with
a decay by block rank (the retriever's ranking carries information the word
overlap does not), and a hard-wrapped "sentence" that runs over many lines
(plain-text RFCs, PDFs) is narrowed to its best few lines.
"""

from __future__ import annotations

import math

import docent_native

from rag_system.generation.terms import key_terms, term_set
from rag_system.retrieval.packer import EvidenceBlock

MIN_OVERLAP = 0.1  # low on purpose: off-topic questions are refused before this runs
RANK_DECAY = 0.15  # score x 1 / (1 + RANK_DECAY * block rank)
MAX_SENTENCE_CHARS = 320
POOL = 24


def selectable_text(block: EvidenceBlock) -> tuple[str, int]:
    """The block's text without its leading context line ("<document> > <headings>"), and its offset."""
    text = block.source_text
    first, sep, rest = text.partition("\n")
    if sep and first.startswith(block.candidate.document_name):
        return rest, len(first) + 1
    return text, 0


def extractive_answer(question: str, blocks: list[EvidenceBlock], max_sentences: int = 3) -> str | None:
    """Best-matching evidence sentences as a cited list, or None when nothing matches."""
    if not blocks or max_sentences <= 0:
        return None
    bodies = [selectable_text(b)[0] for b in blocks]
    picked = docent_native.select_evidence_sentences(question, bodies, POOL, MIN_OVERLAP)
    if not picked:
        return None
    terms = key_terms(question)
    spans = [(bi, start, _narrow(bodies[bi][start:end], terms)) for bi, start, end, _ in picked]
    weights = _idf(terms, [span for _, _, span in spans])
    total = sum(weights.values()) or 1.0
    scored = []
    for block_index, start, span in spans:
        present = term_set([span])
        weight = sum(w for t, w in weights.items() if t in present) / total
        scored.append((weight / (1.0 + RANK_DECAY * block_index), block_index, start, span))
    # A sentence holding what reads as a marker ("sorted([5, 2, 3]) [1, 2, 3]") would cite blocks it
    # never meant to, or a block that is not there; quoting it cannot be checked, so it is not quoted.
    scored = [s for s in scored if not _reads_as_cited(s[3])]
    if not scored:
        return None
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    chosen = sorted(scored[:max_sentences], key=lambda s: (s[1], s[2]))
    chosen = _with_following(chosen, bodies)
    lines = [_cited(span, blocks[bi].number) for _, bi, _, span in chosen]
    if len(lines) == 1:
        return lines[0]
    return "\n".join(f"- {line}" for line in lines)


def _reads_as_cited(sentence: str) -> bool:
    return any(numbers for _, _, numbers in docent_native.parse_citations(sentence))


def _cited(span: str, number: int) -> str:
    """Every sentence of the span gets the marker: the validator checks sentence by sentence."""
    parts = [span[a:b] for a, b in docent_native.split_sentences(span)] or [span]
    return " ".join(f"{' '.join(part.split())} [{number}]" for part in parts)


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
                if b - start <= MAX_SENTENCE_CHARS + 80 and not _reads_as_cited(body[a:b]):
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
