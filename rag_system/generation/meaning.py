"""How close an evidence sentence comes to what the question asks, by meaning rather than words.

Why: a question is often a paraphrase of the sentence that answers it ("Is there a limit on how far
the brew temperature may drift?" / "... with a tolerance of 0.4 degrees"; "more than ten
back-to-back workdays" / "longer than 10 consecutive working days"). Word overlap ranks such a
sentence low and the ask rule refuses it, while the index's own embedder puts the two close.

The question's names and codes (`specific_words`: "StartupXYZ", "Atlas-7", "RFC 9000") are taken
out of both sides first. A shared name dominates a small embedder's similarity: "In what year was
StartupXYZ founded?" and "We have acted as legal counsel to StartupXYZ LLC" score 0.70 with the
name and 0.27 without it, while a paraphrase that answers keeps its score (the question has no name
to lose, or the sentence still says what is asked). Which subject a sentence is about is the ask
rules' business (`asks.py`, `names`), not this one's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_system.embedding.base import Embedder
from rag_system.grounding.terms import specific_words


@dataclass(frozen=True)
class Meaning:
    """Cosines of a question with sentences, by the embedder of the index the evidence came from."""

    embedder: Embedder

    def similarities(self, question: str, sentences: Sequence[str]) -> list[float]:
        if not sentences:
            return []
        names = specific_words(question)
        asked = self.embedder.embed_queries([without_names(question, names)])[0]
        vectors = self.embedder.embed([without_names(s, names) for s in sentences])
        return [float(x) for x in vectors @ asked]


def without_names(text: str, names: Sequence[str]) -> str:
    """`text` with each of `names` (as written in the question, any case) blanked out, longest first."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(r"(?<!\w)" + re.escape(name) + r"(?!\w)", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())
