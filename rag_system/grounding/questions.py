"""A yes/no question in the plain words its documents would use, before it is read as a claim.

Why: the question is checked against the passages as if it were a sentence of an answer
(`verifier.answer_to`), and a handful of everyday turns of phrase never appear in documentation
in the form people ask them: "Is the reranker switched on out of the box?" where the page says
"on by default", "once a week" where the manual says "weekly", "hand back" for "return". Word
synonyms (`words.SYNONYMS`) cannot pair a phrase with a word, so these few are rewritten first.
An alternative tacked on the end ("Can Python be used for functional programming, or only
object-oriented?") asks whether the first part holds; the documents answer that part, so only
it is read.
"""

from __future__ import annotations

import re

_PERIODS = {"day": "daily", "week": "weekly", "month": "monthly", "year": "yearly"}

#: (pattern, replacement): everyday phrases and the words documentation uses for them.
_IDIOMS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), r) for p, r in (
    (r"\bout of the box\b", "by default"),
    (r"\b(?:hand|give) back\b", "return"),
    (r"\b(?:hands|gives) back\b", "returns"),
    (r"\b(?:handed|gave|given) back\b", "returned"),
    (r"\b(?:handing|giving) back\b", "returning"),
    (r"^(\W*)is it (?:fine|ok|okay|alright|all right|acceptable) to\b", r"\1can I"),
))
_PERIOD = re.compile(r"\b(?:once (?:a|per|every)|every) (day|week|month|year)\b", re.IGNORECASE)
#: ", or only object-oriented?" closing a question.
_ALTERNATIVE = re.compile(r",?\s+or\s+(?:only|just|merely|solely|exclusively)\b[^?]*(\?\s*)$", re.IGNORECASE)


def plain_question(question: str) -> str:
    """`question` with its everyday phrases in documentation's words and a closing "or only ..."
    alternative left off."""
    text = _ALTERNATIVE.sub(r"\1", question)
    for pattern, replacement in _IDIOMS:
        text = pattern.sub(replacement, text)
    return _PERIOD.sub(lambda m: _PERIODS[m.group(1).lower()], text)
