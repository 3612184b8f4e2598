"""Token-level reading shared by the clause cutter and the stance reader: parts of speech put
right, numbers as digits, which tokens are content words, and each word's comparison key.

Why a module of its own: both `units.py` (which cuts clauses and collects their words) and
`stance.py` (which reads how a clause asserts them) must agree on what a number and a content word
are.
"""

from __future__ import annotations

import re
from typing import Any

from common.lexicon import STOP_WORDS
from rag_system.grounding.roots import root
from rag_system.grounding.words import FRAMING, MODALS, PARTIAL, UNIVERSAL

CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})
OBJECT_DEPS = frozenset({"dobj", "attr", "oprd", "pobj", "dative", "acomp"})
#: Light verbs that carry no fact of their own ("is", "has", "makes" in "makes a request").
LIGHT = frozenset({"be", "have", "do", "get", "make", "take", "go", "become", "exist", "apply", "happen"})
AUXILIARIES = frozenset("be have do will would shall should can could may might must ought".split())
PRONOUNS = frozenset("it its they them their this these those he she his her him such which who whose".split())
#: Determiners and pronouns that negate the clause whose subject or object they are.
NEGATING_WORDS = frozenset("no none nothing nobody neither never".split())
#: Scale words that multiply the number before them ("45 million").
SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "m": 1_000_000, "bn": 1_000_000_000}

def pos(token: Any) -> str:
    """The part of speech, with the small model's verbs taken for auxiliaries ("requires") put right."""
    if token.pos_ == "AUX" and token.lemma_.lower() not in AUXILIARIES:
        return "VERB"
    return str(token.pos_)


#: A number with its scale in one token: "1.8M", "$45m", "2bn".
_SCALED = re.compile(r"^[$€£]?(\d[\d,]*(?:\.\d+)?)(m|bn)$", re.IGNORECASE)


_MEASURED = re.compile(r"^(\d[\d.,]*)-[A-Za-z]+$")


def number_key(token: Any) -> str | None:
    """A number as digits ("ten" -> "10", "$45,000,000" -> "45000000", "45 million" -> "45000000").
    A number word counts when it is used as one: "one that includes it", "once the count ..." and
    "first written above" are not numbers; "twice" is ("twice the PTO")."""
    if not any(c.isdigit() for c in token.text):
        if token.lower_ in ("twice", "thrice"):
            return root(token.lower_)
        if token.tag_ != "CD" or token.lower_ == "one" and token.dep_ != "nummod":
            return None
    key = root(token.text)
    measured = _MEASURED.match(token.text)
    if measured:  # "2-byte", "36-month", "256-entry": the number of a measure written as one word
        return root(measured.group(1))
    scaled = _SCALED.match(token.text.rstrip("."))
    if scaled:  # "$1.8M" read as one token (before a full stop)
        return str(int(float(scaled.group(1).replace(",", "")) * SCALES[scaled.group(2).lower()]))
    nxt = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if nxt is not None and nxt.lower_ in SCALES:
        try:
            return str(int(float(key) * SCALES[nxt.lower_]))
        except ValueError:
            return key
    return None if token.lower_ in SCALES else key


def is_content(token: Any) -> bool:
    lower = token.lower_
    if not any(c.isalnum() for c in lower):
        return False
    if number_key(token) is not None:
        return True
    if pos(token) not in CONTENT_POS or token.is_punct:
        return False
    lemma = token.lemma_.lower()
    if lower in STOP_WORDS or lemma in STOP_WORDS or lower in PRONOUNS or lemma in FRAMING or lower in FRAMING:
        return False
    if lower == "default" and token.head.lower_ != "by":
        return True  # "the default protocol": a thing, not the scope word of "by default"
    if lemma in MODALS or lower in NEGATING_WORDS or lower in UNIVERSAL or lower in PARTIAL or lower in SCALES:
        return False
    if pos(token) == "VERB" and lemma in LIGHT:
        return False
    return len(lower) > 1


def key(token: Any) -> str:
    return number_key(token) or root(token.lemma_ if token.pos_ != "PROPN" else token.text)
