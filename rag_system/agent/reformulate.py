"""One conditional reformulation when the first-stage evidence is weak.

Why: a question phrased unlike the documents ("How come my peer thinks the
exponent is 3?") can miss passages that a plainer query finds. When the
evidence contrast is weak the pipeline retries ONCE with `reformulate(...)`
and keeps whichever candidate set has the better evidence score
(`pick_better`); the two sets are never merged, because merging would mix two
rankings whose scores are not comparable and dilute a good set with a bad one.

Rules (no LLM needed):
- keyword form: the query's content words, without stop words and question
  scaffolding ("what does ... say about"), which sharpens the full-text leg;
- pseudo-relevance feedback: up to three distinctive terms from the top
  candidates that mention a query word (terms from passages that share no
  word with the query are ignored, so an off-topic top list cannot steer it).
An optional LLM rewrite is used when it stays on the query's topic.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Protocol, TypeVar

from common.lexicon import STOP_WORDS
from common.lexicon import tokens as words
from rag_system.agent.text import content_words
from rag_system.agent.types import TextGenerator, ask_generator

log = logging.getLogger(__name__)

MAX_FEEDBACK_TERMS = 3
FEEDBACK_DOCS = 5


def reformulate(query: str, top_texts: list[str], generator: TextGenerator | None = None) -> str | None:
    """A different query for the same need, or `None` when none can be made."""
    keywords = content_words(query)
    if not keywords:
        return None
    if generator is not None:
        llm = _llm_reformulation(query, generator)
        if llm is not None:
            return llm
    extra = feedback_terms(keywords, top_texts)
    candidate = " ".join(keywords + extra)
    if _same(candidate, query):
        return None
    return candidate


def feedback_terms(keywords: list[str], top_texts: list[str], limit: int = MAX_FEEDBACK_TERMS) -> list[str]:
    """Terms that recur in the top passages mentioning a query keyword, most shared first."""
    wanted = set(keywords)
    docs = [set(_terms(text)) for text in top_texts[:FEEDBACK_DOCS]]
    relevant = [(doc, text) for doc, text in zip(docs, top_texts[:FEEDBACK_DOCS]) if doc & wanted]
    if not relevant:
        return []
    df: Counter[str] = Counter()
    tf: Counter[str] = Counter()
    first: dict[str, int] = {}
    for doc, text in relevant:
        df.update(doc - wanted)
        for pos, term in enumerate(_terms(text)):
            if term not in wanted:
                tf[term] += 1
                first.setdefault(term, pos)
    min_df = 2 if len(relevant) >= 2 else 1
    min_tf = 1 if len(relevant) >= 2 else 2
    ranked = sorted((t for t in df if df[t] >= min_df and tf[t] >= min_tf),
                    key=lambda t: (-df[t], -tf[t], first[t], t))
    return ranked[:limit]


def _terms(text: str) -> list[str]:
    return [w for w in words(text) if len(w) >= 3 and w not in STOP_WORDS and not w.isdigit()
            and any(c.isalpha() for c in w)]


def _same(a: str, b: str) -> bool:
    return words(a) == words(b)


_PROMPT = """Rewrite this search query using the words a technical document would use. \
Output one line of keywords only, no explanation.

Query: {query}
Keywords:"""


def _llm_reformulation(query: str, generator: TextGenerator) -> str | None:
    raw = ask_generator(generator, _PROMPT.format(query=query), 48, "reformulate")
    if raw is None:
        return None
    line = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
    line = re.sub(r"^(?:keywords|query)\s*:\s*", "", line, flags=re.I).strip().strip('"\'')
    if not accept_reformulation(query, line):
        log.debug("reformulate: discarded LLM output %r", line[:200])
        return None
    return line


def accept_reformulation(query: str, candidate: str) -> bool:
    """On topic (keeps at least half the query's content words), short, and actually different."""
    original = content_words(query)
    kept = content_words(candidate)
    if not kept or len(candidate.split()) > 24 or _same(candidate, query):
        return False
    overlap = len(set(original) & set(kept))
    return overlap >= max(1, (len(original) + 1) // 2)


class HasEvidence(Protocol):
    @property
    def evidence_score(self) -> float: ...


T = TypeVar("T", bound=HasEvidence)


def pick_better(a: T, b: T, margin: float = 0.0) -> T:
    """Keep `b` (the retry) only if its evidence score beats `a` by more than `margin`.

    Ties keep `a`, the set retrieved for the user's own words. The sets are
    never merged: their scores come from different queries.
    """
    return b if b.evidence_score > a.evidence_score + margin else a
