"""Key terms of a question and how much of them the evidence covers.

Why: a small model asked "What is the capital of Mongolia?" over RFCs will
often answer from memory. Before any model runs, we check that the evidence
mentions the question's key terms at all; when it does not, the honest answer
is a refusal, and no prompt wording can be trusted to produce one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from common.lexicon import STOP_WORDS, stem
from common.lexicon import WORD as _WORD
from rag_system.indexing.languages import all_function_words

# What a question's key terms skip: also the function words of the other languages documents come in
# (rag_system/indexing/languages.py), so "Wie ... ich ... ein" in a German question are not key terms that
# German evidence "lacks" (issue 21). Chunking (cohesion.py) keeps the English list (common.lexicon).
QUESTION_STOP_WORDS = STOP_WORDS | (all_function_words() - {"die", "come", "son"})


def key_terms(text: str) -> list[str]:
    """Distinct stems of the content words of `text`, in order of appearance."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) < 3 and not word.isdigit():
            continue
        if word in QUESTION_STOP_WORDS:
            continue
        seen.setdefault(stem(word), None)
    return list(seen)


def term_set(texts: Iterable[str]) -> set[str]:
    return {stem(w) for t in texts for w in _WORD.findall(t.lower())}


def weighted_terms(text: str) -> dict[str, float]:
    """Key-term stems with weights: names and codes count double.

    A word capitalised mid-sentence ("Mongolia", "QUIC") or containing a digit
    or underscore ("ack_delay_exponent", "9000") names the specific thing
    asked about; when it is missing from the evidence, the evidence is about
    something else even if the generic words ("capital") happen to occur.
    """
    weights: dict[str, float] = {}
    for position, match in enumerate(_WORD.finditer(text)):
        word = match.group(0)
        lower = word.lower()
        if (len(lower) < 3 and not lower.isdigit()) or lower in QUESTION_STOP_WORDS:
            continue
        specific = (position > 0 and word[:1].isupper()) or any(c.isdigit() or c == "_" for c in word)
        key = stem(lower)
        weights[key] = max(weights.get(key, 0.0), 2.0 if specific else 1.0)
    return weights


def coverage(question: str, evidence: Iterable[str]) -> tuple[float, list[str]]:
    """Weighted share of the question's key terms found in the evidence, and the missing ones."""
    weights = weighted_terms(question)
    if not weights:
        return 1.0, []
    present = term_set(evidence)
    missing = [t for t in weights if t not in present]
    total = sum(weights.values())
    return (total - sum(weights[t] for t in missing)) / total, missing


def support(sentence: str, block: str) -> float:
    """Share of a sentence's content words that occur in `block` (lexical groundedness)."""
    terms = key_terms(_strip_markers(sentence))
    if not terms:
        return 1.0
    present = term_set([block])
    return sum(1 for t in terms if t in present) / len(terms)


_MARKER = re.compile(r"\[\d+(?:\s*[-–,]\s*\d+)*\]")


def _strip_markers(text: str) -> str:
    return _MARKER.sub(" ", text)
