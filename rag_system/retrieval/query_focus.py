"""The question inside a compound query, searched as a second vector ranking.

Why: users (and the rfc and acquisition gold sets) often write a sentence of
context before the question: "RFC 9220 bootstraps WebSockets over HTTP/3
with Extended CONNECT. Where was the pseudo-header it depends on first
defined?". One embedding of both sentences sits between the context and the
question, so sections that merely share the context rank with the answer.
Embedding the question alone as well, and fusing both rankings at half the
vector weight each, lifted rfc nDCG@10 by 0.026 and acq by 0.009 and left
single-sentence queries exactly as before (Documentation/evaluation.md).
"""

from __future__ import annotations

from rag_system.chunking.sentences import split_sentences

#: A focus sentence shorter than this says too little on its own ("Why?").
MIN_WORDS = 3


def focus_question(query: str) -> str | None:
    """The last question sentence of a multi-sentence query (else its last sentence); None for one sentence."""
    sentences = [s.strip() for s in split_sentences(query) if s.strip()]
    if len(sentences) < 2:
        return None
    questions = [s for s in sentences if s.endswith("?")]
    focus = questions[-1] if questions else sentences[-1]
    return focus if len(focus.split()) >= MIN_WORDS and focus != query.strip() else None
