"""One comparison key per word: its root, so "approval" and "approves", "requirement" and "required" meet.

Why not the lexicon's `stem`: that one strips inflections for ranking and coverage; a claim restates
its source with other word classes ("requires written approval from a director" / "a director must
approve it"), so the verifier strips one derivational suffix as well, after the parser's lemma.
Agent nouns keep their suffix: "employer" and "employee" are different parties.
"""

from __future__ import annotations

import re
from functools import lru_cache

from common.lexicon import CARDINALS, STOP_WORDS
from rag_system.grounding.words import ANTONYMS, SYNONYMS

_SUFFIXES = ("izations", "ization", "isations", "isation", "ations", "ation", "itions", "ition", "ments", "ment",
             "nesses", "ness", "ities", "ity", "ances", "ance", "ences", "ence", "ively", "ive", "ably", "ibly",
             "able", "ible", "ally", "als", "al", "ions", "ion", "ings", "ing", "ly", "ies", "ied", "es", "ed", "s")

#: Number words up to twenty, and the tens: "ten" and "10" say the same number.
NUMBER_WORDS = {w: str(n) for n, w in enumerate(CARDINALS)}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                     "eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000", "once": "1",
                     "twice": "2", "single": "1", "double": "2", "dozen": "12", "half": "0.5"})

#: Consonants doubled before "-ing"/"-ed" ("running", "stopped"); "ll", "ss", "ff" belong to the stem.
_DOUBLED = frozenset("bdgmnprt")
_NUMERIC = re.compile(r"^[$€£]?\d[\d,]*(?:\.\d+)?%?$")


@lru_cache(maxsize=1 << 16)
def root(word: str) -> str:
    """The comparison key of a word (lemma or written form): lower case, one suffix off, numbers plain."""
    w = word.lower().strip(".,;:'\"()[]-")
    if w in NUMBER_WORDS:
        return NUMBER_WORDS[w]
    if _NUMERIC.match(w):
        return w.lstrip("$€£").rstrip("%").replace(",", "")
    if not w.isalpha():
        return w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4 and not (suffix == "ive" and w.endswith("eive")) \
                and not (suffix == "s" and w.endswith("ss")):  # "compress", "process": no plural
            w = w[: -len(suffix)]
            if suffix in ("ing", "ed") and w[-1] == w[-2] and w[-1] in _DOUBLED:
                w = w[:-1]  # "running" -> "run", "committed" -> "commit"
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 4 and w.endswith("i"):  # "copies" -> "copi", "copy" -> "copy": one key
        w = w[:-1] + "y"
    return w


@lru_cache(maxsize=1)
def _synonym_groups() -> dict[str, frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for group in SYNONYMS:
        keys = {root(w) for w in group}
        for key in keys:
            groups.setdefault(key, set()).update(keys)
    return {k: frozenset(v) for k, v in groups.items()}


def same_meaning(a: str, b: str) -> bool:
    """Two roots say the same thing: equal, or in one synonym group."""
    return a == b or b in _synonym_groups().get(a, frozenset())


def abbreviates(short: str, long: str) -> bool:
    """`short` is a clipped form of `long`, as written ("ACK" of "acknowledgment", "config" of
    "configuration"): at least three letters, the first ones of the longer word."""
    s, lo = short.lower(), long.lower()
    return 3 <= len(s) < len(lo) and s.isalpha() and lo.startswith(s)


def synonyms(key: str) -> frozenset[str]:
    """The roots that say what `key` says, itself included."""
    return _synonym_groups().get(key, frozenset()) | {key}


@lru_cache(maxsize=1)
def _antonyms() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in ANTONYMS:
        ra, rb = root(a), root(b)
        out.setdefault(ra, set()).add(rb)
        out.setdefault(rb, set()).add(ra)
    return {k: frozenset(v) for k, v in out.items()}


def opposites(key: str) -> frozenset[str]:
    """The roots that say the opposite of `key` ("disabl" for "enabl")."""
    return _antonyms().get(key, frozenset())


def named_in(key: str, context: frozenset[str]) -> bool:
    """The source's name or headings say `key` (a root): itself, a synonym, or every part of a joined
    name ("atlas-7" where the title reads "Atlas-7 Espresso Machine", whose keys are "atla" and "7")."""
    if key in context or synonyms(key) & context:
        return True
    parts = [p for p in re.split(r"[-_./\\]+", key) if p]
    return len(parts) > 1 and all(root(p) in context for p in parts)


_INITIALISM = re.compile(r"^[A-Z]{2,5}s?$")
_SPELLING_WORD = re.compile(r"[A-Za-z][a-z]+")


def spelled_out(word: str, text: str) -> bool:
    """`word` is an initialism that `text` spells out in full: "IP" in "rights to intellectual
    property", "NDA" in "non-disclosure agreement" (the words' first letters, function words
    skipped, in a row)."""
    if not _INITIALISM.match(word):
        return False
    letters = word.rstrip("s").lower() if len(word) > 2 and word.endswith("s") else word.lower()
    words = [w.lower() for w in _SPELLING_WORD.findall(text) if w.lower() not in STOP_WORDS]
    n = len(letters)
    return any("".join(w[0] for w in words[i:i + n]) == letters for i in range(len(words) - n + 1))
