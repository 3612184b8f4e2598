"""The one lexicon: what a word is, which words carry no topic, and a light stemmer.

Chunking (topic breaks), generation (key terms, coverage), the agent (content words of a
follow-up) and the native sentence scorer (`docent_native.select_evidence_sentences`, whose
`STOP_WORDS` in native/src/evidence.rs is this list; tests/unit/test_lexicon.py compares them) all
read text through it, so a word that is "no topic" for one of them is no topic for all. The
sentence splitter's abbreviations live here too (`ABBREVIATIONS`, native/src/sentences.rs).
"""

from __future__ import annotations

import re
from functools import lru_cache

#: A word: a run of Unicode word characters (Python's `\w`; the native side's `is_word`).
WORD = re.compile(r"\w+")
#: A word as a person writes it, inner apostrophes, dots and hyphens kept ("don't", "v2.1",
#: "e-mail"): the agent reads questions this way, because splitting "what's" or "X200's" changes
#: which words a follow-up or a reformulation keeps.
TOKEN = re.compile(r"[\w][\w'.-]*[\w]|[\w]")

#: Function words plus question scaffolding ("what", "tell", "explain", "summarise"): words that say
#: how something is asked, not what about, so they help neither a keyword search nor a coverage check.
STOP_WORDS = frozenset("""
a about above according actually after again against all also am an and any anything are aren as at
basically be because been before being below between bit both but by call called can could couldn
define describe did didn do does doesn doing don down during each exactly explain few find for from
further give had happen happens has have having he her here hers herself him himself his how hows i
if in into is isn it its itself just kind kindly know let list lot many may me mean meaning means
might more most much must my myself name need no nor not now of off on once one ones only or other
our ours ourselves out over own please provide really regarding s said same say says shall she
should shouldn show so some something sort such summarise summarize t tell than that the their
theirs them themselves then there these they thing things this those through to too type
under until up use used uses using very want was wasn way ways we were weren what whats when
where which while who whom whose why will with won would wouldn you your yours yourself yourselves
""".split())

#: Lower-case abbreviations, without their final dot, after which a sentence never ends ("e.g.",
#: "Dr.", "Fig."): `docent_native.split_sentences` reads them from `ABBREVIATIONS` in
#: native/src/sentences.rs, which tests/unit/test_lexicon.py holds equal to this list.
ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf al fig figs no nos vol pp p eq sec mr mrs ms dr prof st inc ltd co corp jr sr approx dept est".split()
)

#: Words that say how a question asks ("how much", "how long", "may"), not what about: kept as key
#: terms where a question's words are weighed, left out where the evidence's coverage is judged.
ASKING_WORDS = frozenset("much many may might how long often old far".split())

#: The number words from zero to twenty, each at its value's index: "ten" and "10" say the same number.
CARDINALS = tuple(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split()
)

#: `stem`'s suffixes, tried in this order (native/src/lexicon.rs `SUFFIXES`, compared by a test).
SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e")


def words(text: str) -> list[str]:
    """The lower-cased words of `text`, in order."""
    return WORD.findall((text or "").lower())


def tokens(text: str) -> list[str]:
    """The lower-cased written words (`TOKEN`) of `text`, in order."""
    return TOKEN.findall((text or "").lower())


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A deliberately light suffix stripper: enough to match "assumed" with "assume".

    Cached: chunking stems every word of every document (0.65 s of the 5.1 s a build of the
    localGPT corpora spends outside the embedder), and a corpus has few distinct words.
    """
    w = word.lower()
    for suffix in SUFFIXES:
        if len(w) - len(suffix) >= 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w
