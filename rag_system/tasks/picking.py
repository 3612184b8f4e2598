"""Deterministic, cited sentence selection for a section or a table cell (no model).

Why term profiles and not the question-overlap selector answers use: a
summary section has no question. Each section (or comparison dimension) is a
profile of cue words, heading words and surface features (amounts, dates,
position in the document); every sentence of the document is scored against
it and the best few are copied verbatim with their block's citation, so the
text is true to the page by construction. A profile that no sentence meets
yields nothing, and the caller writes "not stated in the document".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import docent_native

from rag_system.grounding.terms import key_terms, stem, term_set
from rag_system.retrieval.evidence import EvidenceBlock

MIN_CHARS = 25
MAX_CHARS = 420
_MONEY = re.compile(r"[$€£]\s?\d|\d\s?%|\b\d[\d,.]*\s?(?:million|billion|thousand|usd|eur|percent)\b", re.I)
_NUMBER = re.compile(r"\b\d[\d,.]*\b")
_DATE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|"
                   r"\b(?:19|20)\d\d\b|\b\d+\s+(?:days?|weeks?|months?|years?)\b|\(\d+\)\s+(?:days?|months?|years?)",
                   re.I)
_RULE = re.compile(r"\b(?:shall|must|required|may not|will not|agrees? to|is prohibited|no later than)\b", re.I)
_LIMIT = re.compile(r"\b(?:not|no|never|without|except|unless|excluding|only if|provided that)\b", re.I)
_NAME = re.compile(r"\b(?:[A-Z][a-z]+\s){0,3}(?:Inc|LLC|LLP|Ltd|GmbH|Corp|Corporation|Company|Co)\b\.?|\"[A-Z][A-Za-z]+\"")


@dataclass(frozen=True)
class Profile:
    """What a section or dimension looks for."""

    key: str
    title: str
    cues: frozenset[str]  # stems of cue words (sentence and heading)
    money: float = 0.0  # weight of amounts / percentages
    numbers: float = 0.0  # weight of other numbers
    dates: float = 0.0
    rules: float = 0.0  # "shall", "must", ...
    names: float = 0.0  # organisations, defined party names
    limits: float = 0.0  # negations and exceptions ("not", "except", "unless")
    opening: float = 0.0  # bonus for the first sentences of the document
    closing: float = 0.0  # bonus for the last blocks of the document


def profile(key: str, title: str, cues: str, **weights: float) -> Profile:
    return Profile(key, title, frozenset(stem(w) for w in cues.split()), **weights)


@dataclass(frozen=True)
class Sentence:
    block: int  # position in the block list
    number: int  # the block's citation number
    start: int
    text: str  # verbatim span of the block text
    heading: str
    order: int  # position in the document


@dataclass
class Pick:
    sentences: list[Sentence] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)


def document_sentences(blocks: list[EvidenceBlock]) -> list[Sentence]:
    """Every usable sentence of the blocks, in document order."""
    out: list[Sentence] = []
    for bi, block in enumerate(blocks):
        text = block.text
        for start, end in docent_native.split_sentences(text):
            span = _trim(text[start:end])
            if len(span) < MIN_CHARS or not any(c.islower() for c in span):
                continue  # headings and fragments say nothing citable
            out.append(Sentence(bi, block.number, start, span, block.candidate.heading_path, len(out)))
    return out


def _trim(span: str) -> str:
    """A long hard-wrapped span cut to whole leading lines; verbatim either way."""
    span = span.strip()
    if len(span) <= MAX_CHARS or "\n" not in span:
        return span
    kept: list[str] = []
    for line in span.split("\n"):
        if kept and len("\n".join(kept + [line])) > MAX_CHARS:
            break
        kept.append(line)
    return "\n".join(kept).strip()


def score(sentence: Sentence, prof: Profile, total: int) -> float:
    words = term_set([sentence.text])
    heading = term_set([sentence.heading.split(">")[-1]]) if sentence.heading else set()
    value = float(len(words & prof.cues)) + 1.5 * len(heading & prof.cues)
    text = sentence.text
    value += prof.money * min(3, len(_MONEY.findall(text)))
    value += prof.numbers * min(3, len(_NUMBER.findall(text)))
    value += prof.dates * min(2, len(_DATE.findall(text)))
    value += prof.rules * min(2, len(_RULE.findall(text)))
    value += prof.names * min(2, len(_NAME.findall(text)))
    value += prof.limits * min(2, len(_LIMIT.findall(text)))
    if sentence.order < 2:
        value += prof.opening
    if total and sentence.order >= total - 3:
        value += prof.closing
    return value


def pick(sentences: list[Sentence], prof: Profile, limit: int, min_score: float = 1.5,
         exclude: set[int] | None = None) -> Pick:
    """The `limit` best sentences scoring at least `min_score`, returned in document order."""
    taken = exclude or set()
    scored = [(score(s, prof, len(sentences)), s) for s in sentences if s.order not in taken]
    best = sorted((x for x in scored if x[0] >= min_score), key=lambda x: (-x[0], x[1].order))[:limit]
    best.sort(key=lambda x: x[1].order)
    return Pick([s for _, s in best], [v for v, _ in best])


def assign(sentences: list[Sentence], profiles: list[Profile], limit: int,
           min_score: float = 1.5) -> dict[str, Pick]:
    """Best sentences per profile, each sentence going to the profile it fits best.

    Why not greedy in section order: an exclusion clause scores for
    "key rules" as well as for "limitations", and an earlier section must
    not take what a later one is the natural home of. A profile left without
    sentences of its own may still take one that no profile chose.
    """
    total = len(sentences)
    table = {s.order: [score(s, p, total) for p in profiles] for s in sentences}
    owner = {}
    for s in sentences:
        values = table[s.order]
        best = max(range(len(profiles)), key=lambda i: (values[i], -i))
        if values[best] >= min_score:
            owner[s.order] = best
    out: dict[str, Pick] = {}
    chosen: set[int] = set()
    for i, prof in enumerate(profiles):
        own = [s for s in sentences if owner.get(s.order) == i]
        out[prof.key] = pick(own, prof, limit, min_score)
        chosen.update(x.order for x in out[prof.key].sentences)
    for i, prof in enumerate(profiles):
        if not out[prof.key].sentences:
            out[prof.key] = pick([s for s in sentences if s.order not in chosen], prof, 1, min_score)
            chosen.update(x.order for x in out[prof.key].sentences)
    return out


def distinctive(sentences: list[Sentence], others: list[str], limit: int, min_terms: int = 3) -> Pick:
    """Sentences whose content words the other documents lack: what sets this document apart."""
    elsewhere = term_set(others)
    scored = []
    for s in sentences:
        terms = key_terms(s.text)
        unique = [t for t in terms if t not in elsewhere and not t.isdigit()]
        if len(unique) >= min_terms:
            scored.append((len(unique) + 0.5 * min(2, len(_MONEY.findall(s.text))), s))
    best = sorted(scored, key=lambda x: (-x[0], x[1].order))[:limit]
    best.sort(key=lambda x: x[1].order)
    return Pick([s for _, s in best], [v for v, _ in best])


def cite(sentence: Sentence) -> str:
    """The sentence on one line with its block's marker after every sub-sentence the validator will see."""
    number = sentence.number
    parts = [sentence.text[a:b] for a, b in docent_native.split_sentences(sentence.text)] or [sentence.text]
    return " ".join(f"{' '.join(p.split())} [{number}]" for p in parts if p.strip())
