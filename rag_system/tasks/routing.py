"""Which task a message asks for, and which documents it names.

Rules only, anchored to the start of the message, because a wrong route is
costly: "compare the notice periods" is a question, not a comparison of two
documents, so a comparison needs two or more names that each resolve to a
document (the caller checks; an unresolved name is asked back, never
guessed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


_SUMMARY = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?"
    r"(?:summari[sz]e|sum up|give (?:me )?(?:a |an )?(?:summary|overview) of|(?:write )?(?:a )?summary of)\s+"
    r"(?P<names>.+?)[\s.?!]*$", re.IGNORECASE)
_COMPARE = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?(?:compare|contrast)\s+(?P<names>.+?)[\s.?!]*$", re.IGNORECASE)
_DIFFER = re.compile(
    r"^\s*(?:what are the |what is the )?differences? between\s+(?P<names>.+?)[\s.?!]*$|"
    r"^\s*how (?:do|does)\s+(?P<names2>.+?)\s+differ[\s.?!]*$", re.IGNORECASE)
_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s+with\s+|\s+to\s+|\s+vs\.?\s+|\s+versus\s+|\s*&\s*)\s*",
                    re.IGNORECASE)
#: The first things people type with a document open, naming none: "What is this about?", "Summarize this",
#: "Give me an overview". Whole-message matches only: "what is this clause about?" is a question.
_NAMELESS = re.compile(
    r"^\s*(?:(?:hi|hello|ok|okay|so)[\s,!]+)?(?:please\s+|can you\s+|could you\s+)?(?:"
    r"what(?:'s|\s+is|\s+are)\s+(?:this|it|these|the\s+(?:documents?|files?|index)|th(?:is|ese)\s+(?:documents?|files?))"
    r"(?:\s+all)?\s+about|"
    r"summari[sz]e(?:\s+(?:this|it|these|everything|(?:the|this|these)\s+(?:documents?|files?|index)))?|"
    r"sum\s+(?:this|it)\s+up|"
    r"(?:give|show)\s+(?:me\s+)?(?:a\s+|an\s+)?(?:quick\s+|short\s+|brief\s+)?(?:overview|summary)"
    r"(?:\s+of\s+(?:this|it|these|everything|(?:the|this|these)\s+(?:documents?|files?|index)))?|"
    r"(?:a\s+|an\s+)?(?:quick\s+|short\s+|brief\s+)?(?:overview|summary)(?:\s+please)?|tl;?\s?dr"
    r")(?:\s+please)?[\s.?!]*$", re.IGNORECASE)
_SCOPE = re.compile(r"^\s*(?:in|according to|from|per|within)\s+(?P<name>[^,;:?]{2,80}?)\s*[,:;]\s*(?P<rest>\S.*)$",
                    re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Intent:
    task: str  # summary | compare
    names: tuple[str, ...]


def detect(message: str) -> Intent | None:
    """"summarize the NDA" -> summary of ("the NDA",); "compare A and B" -> compare of (A, B); else None."""
    match = _SUMMARY.match(message)
    if match:
        return Intent("summary", (_clean(match.group("names")),))
    match = _COMPARE.match(message) or _DIFFER.match(message)
    if match:
        raw = match.group("names") or match.groupdict().get("names2") or ""
        names = tuple(n for n in (_clean(x) for x in _SPLIT.split(raw)) if n)
        if len(names) >= 2:
            return Intent("compare", names)
    return None


def nameless_summary(message: str) -> bool:
    """"What is this about?", "Summarize this", "Give me an overview": a summary of what is in scope."""
    return bool(_NAMELESS.match(message))


def names_of(message: str, task: str) -> tuple[str, ...]:
    """Document names for an explicit task when the request gave none: from the message's wording."""
    intent = detect(message)
    if intent is not None and intent.task == task:
        return intent.names
    if task == "compare":
        return tuple(n for n in (_clean(x) for x in _SPLIT.split(message)) if n)
    return (_clean(message),)


@dataclass(frozen=True)
class Scope:
    name: str  # the document name as written
    rest: str  # the question without the "in the X," lead


def scope_phrase(message: str) -> Scope | None:
    """"In the NDA, how long does it last?" -> Scope("the NDA", "how long does it last?")."""
    match = _SCOPE.match(message)
    if not match:
        return None
    return Scope(match.group("name").strip(), match.group("rest").strip())


def _clean(name: str) -> str:
    return name.strip().strip("\"'“”‘’").strip().rstrip(".?!").strip()
