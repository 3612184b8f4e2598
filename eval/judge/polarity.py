"""Polarity: does an answer say "does" where its evidence says "does not"?

Lexical on purpose, so it can be read and argued with: a sentence is negative
when it holds a negation cue ("not", "no", "never", "cannot", "n't", ...).
Presence, not parity: "there is no JSON formatter and no log rotation" is
negative, and real double negatives are rare in documentation.

Two checks:
- a *sentence* error: an answer sentence whose closest sentence in its cited
  blocks (most of its content words) has the opposite polarity
  ("Yes, libtasn1 handles the REAL type [1]" against "This version doesn't
  handle the REAL type.");
- a *stance* error, for rows whose documented answer is known: a leading
  "Yes"/"No" decides the answer's stance, else the answer sentence closest to
  the documented sentence does; an answer that addresses neither is unjudged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eval.judge.claims import Claim, content_words, sentences

_CUES = ("not", "no", "never", "none", "nor", "neither", "nothing", "nobody", "nowhere", "cannot",
         "forbidden", "prohibited")
NEGATION_WORDS = frozenset(_CUES)
_NEGATION = re.compile(r"\b(?:" + "|".join(_CUES) + r")\b|\w(?:n['’]t)\b", re.IGNORECASE)
_LEAD = re.compile(r"^\W*(yes|no)\s*[,.;:!\u2014-]", re.IGNORECASE)  # "Yes, …" / "No. …", not "No pending …"

#: For a stance only: a thing said to be gone answers "Can I still ...?" with no ("... were deleted on
#: 2026-08-09: the path was unreachable" against "There is no GraphRAG path", neg_docs_01). Not used for
#: sentence errors, where "entries are removed when ..." states what something does.
_GONE = re.compile(r"\b(?:deleted|removed|dropped|discontinued|unreachable)\b", re.IGNORECASE)

#: Share of an answer sentence's content words its closest block sentence must hold
#: before their polarities are compared (below it the two are about different things).
SENTENCE_MATCH = 0.6
#: Share of the documented sentence's content words an answer sentence must hold to carry a stance.
STANCE_MATCH = 0.75


def is_negative(sentence: str) -> bool:
    return bool(_NEGATION.search(sentence))


def polarity(sentence: str) -> str:
    return "negative" if is_negative(sentence) else "positive"


def _overlap(of: set[str], within: set[str]) -> float:
    return len(of & within) / len(of) if of else 0.0


@dataclass(frozen=True)
class PolarityError:
    sentence: str
    cited_sentence: str
    citations: tuple[int, ...]

    def to_json(self) -> dict[str, object]:
        return {"sentence": self.sentence, "cited_sentence": self.cited_sentence,
                "citations": list(self.citations)}


def sentence_errors(claims: list[Claim], blocks: dict[int, str]) -> list[PolarityError]:
    errors: list[PolarityError] = []
    for claim in claims:
        cited = [s for n in claim.citations if n in blocks for s in sentences(blocks[n], wrapped=True)]
        cited += [part for s in cited if ";" in s for part in _halves(s)]
        if not cited:
            continue
        candidates = [(s, content_words(s, NEGATION_WORDS)) for s in cited]
        quoted = " ".join(" ".join(blocks[n] for n in claim.citations if n in blocks).split()).lower()
        for sentence in sentences(claim.text):
            words = content_words(sentence, NEGATION_WORDS)
            if len(words) < 2 or " ".join(sentence.split()).lower() in quoted:
                continue  # a verbatim quote says what its block says
            mine = polarity(sentence)
            # Closest first; among equally close ones, one that agrees wins (benefit of the doubt).
            best = max(candidates, key=lambda c: (_overlap(words, c[1]), polarity(c[0]) == mine))
            if _overlap(words, best[1]) >= SENTENCE_MATCH and polarity(best[0]) != mine:
                errors.append(PolarityError(sentence, best[0], claim.citations))
    return errors


def _halves(sentence: str) -> list[str]:
    """The parts of a sentence a semicolon joins, each its own candidate: a claim restating "otherwise
    it builds ... from the first 40 loaded overviews" is not contradicted by the "when no overviews are
    loaded" before the semicolon."""
    return [part.strip() for part in sentence.split(";") if len(part.split()) >= 3]


def stance(answer_claims: list[Claim], documented: str) -> str | None:
    """"positive" | "negative" as the answer takes it, or None when it does not address `documented`.

    A leading "Yes," / "No." is the stance; "No pending disputes." is not a
    leading "No" but a negative sentence, judged by its closeness like any other;
    so is a sentence that says the thing was deleted or removed.
    """
    said = [s for claim in answer_claims for s in sentences(claim.text)]
    if not said:
        return None
    lead = _LEAD.match(said[0])
    if lead:
        return "positive" if lead.group(1).lower() == "yes" else "negative"
    target = content_words(documented, NEGATION_WORDS)
    scored = [(_overlap(target, content_words(s, NEGATION_WORDS)), s) for s in said]
    score, closest = max(scored, key=lambda pair: pair[0])
    if score < STANCE_MATCH:
        return None
    return "negative" if is_negative(closest) or _GONE.search(closest) else "positive"
