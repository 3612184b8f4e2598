"""Words-only findings, for text the parser cannot read (not English).

Why: the clause checks need an English parse; a German answer over German documents keeps the
checks it had before the verifier (most of its content words in its cited sources, and its facts,
checked natively by the caller), and the result says it was checked this way.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_system.grounding.terms import support
from rag_system.grounding.findings import UNSUPPORTED, Finding

#: Share of a sentence's content words its cited sources must hold.
MIN_SUPPORT = 0.5


def lexical_findings(sentence: str, texts: Sequence[str]) -> list[Finding]:
    if not texts:
        return [Finding("added", UNSUPPORTED, "it cites no source")]
    if support(sentence, "\n".join(texts)) < MIN_SUPPORT:
        return [Finding("added", UNSUPPORTED, "most of its words are not in the sources it cites")]
    return []
