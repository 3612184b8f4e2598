"""A yes/no question in the plain words its documents would use, before it is read as a claim.

Why: the question is checked against the passages as if it were a sentence of an answer
(`verifier.answer_to`), and a handful of everyday turns of phrase never appear in documentation
in the form people ask them: "Is the reranker switched on out of the box?" where the page says
"on by default", "once a week" where the manual says "weekly", "hand back" for "return". Word
synonyms (`words.SYNONYMS`) cannot pair a phrase with a word, so these few are rewritten first.
An alternative tacked on the end ("Can Python be used for functional programming, or only
object-oriented?") asks whether the first part holds; the documents answer that part, so only
it is read. A name the question spells out where the documents use its initials ("intellectual
property" where the certificate says "No IP-related litigation") is written as they write it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from common.lexicon import STOP_WORDS

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


#: Initials as documents write them: "IP", "NDA", "IP-related".
_INITIALS = re.compile(r"\b[A-Z]{2,5}\b")
_QUESTION_WORD = re.compile(r"[A-Za-z][a-z]+")


def plain_question(question: str, sources: Iterable[str] = ()) -> str:
    """`question` with its everyday phrases in documentation's words, a closing "or only ..."
    alternative left off, and a name spelled out in it written as the `sources` abbreviate it."""
    text = _ALTERNATIVE.sub(r"\1", question)
    for pattern, replacement in _IDIOMS:
        text = pattern.sub(replacement, text)
    text = _PERIOD.sub(lambda m: _PERIODS[m.group(1).lower()], text)
    for initials in sorted({m.group(0) for source in sources for m in _INITIALS.finditer(source)}):
        if not re.search(rf"\b{initials}\b", text):
            text = _abbreviated(text, initials)
    return text


def _abbreviated(text: str, initials: str) -> str:
    """`text` with the first run of words whose initials spell `initials` replaced by them ("intellectual
    property" by "IP"); a run of function words or of one letter each spells nothing."""
    words = [m for m in _QUESTION_WORD.finditer(text) if m.group(0).lower() not in STOP_WORDS]
    n, want = len(initials), initials.lower()
    for i in range(len(words) - n + 1):
        run = words[i:i + n]
        between = [text[a.end():b.start()] for a, b in zip(run, run[1:])]
        if "".join(m.group(0)[0].lower() for m in run) == want and all(g.strip() in ("", "-") for g in between):
            return text[:run[0].start()] + initials + text[run[-1].end():]
    return text
