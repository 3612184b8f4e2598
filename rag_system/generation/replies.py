"""A "Yes," that the rest of its own sentence denies.

Why: asked "Can parental leave be split into more than three blocks?" in the web app, the 1.5B model
answered "Yes, parental leave may be split into no more than 3 separate blocks. [1]". The sentence
after the "Yes" is the policy's own, word for word, so the claim check (facts and polarity against
the cited sentence) passes it, while the reply it opens with says the opposite of what it restates.
A "Yes" followed by a negated statement, to a question that has no negation of its own, is that
contradiction; a double negative ("Yes, it cannot start without a key") is the rare false alarm, and
it costs only a repair round or a quote.
"""

from __future__ import annotations

import re

from rag_system.generation.terms import strip_markers

_YES = re.compile(r"^\s*yes\b[\s,.;:!\u2014-]*", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:no|not|never|none|nothing|neither|nor|cannot|without)\b|n't\b|\bn’t\b",
                       re.IGNORECASE)


def yes_then_no(question: str, sentence: str) -> bool:
    """The sentence replies "Yes" and then states a negation the question did not ask about."""
    reply = _YES.match(sentence)
    if reply is None or _NEGATION.search(question):
        return False
    return bool(_NEGATION.search(strip_markers(sentence[reply.end():])))
