"""Is the question's ask found *together* with its subject, in one passage of one block?

Why: the coverage check asks whether the evidence mentions the question's
words somewhere, and the block-level ask rule whether one block does. Over
documents on the right topic both pass for questions the documents cannot
answer. "What is the annual salary of a Grade 7 employee?" over a leave policy
finds "Grade 7", "annual" and "employee" in the annual-leave paragraph and
"salary" in the sick-pay one ("100 percent of base salary"), and the model
then answers "The annual salary of a Grade 7 employee is 23 days of paid annual
leave [1]": every fact it states is in the block it cites. What the question
asks for (the salary) and what it asks about (Grade 7) are never said
together, so no sentence can answer it.

The rule: one sentence of one block must hold the *head* of the ask
("salary" in "the annual salary of ...", "litres" in "how many litres
does ...", "bank" in "which bank is ..."), and that sentence with its
neighbours (and the block's document name and section, which name what all
of it is about) at least half of the question's subject (its names, codes and
numbers). The head must be written as a word of its own: not a word of a
name ("Department of People Operations" does not say people), of an
identifier (`download_url`), of the block's heading ("Espresso Machine ·
Service Manual" does not say how many machines were sold), nor a verb of the
same spelling ("port the code" is no port). A head that names a
dimension or a kind ("the duration of", "which component") is answered by a
value or an instance, not by the word, so it is not required; where the value
has a shape of its own (a percentage), the window must hold one.
Documentation/answering.md, "Refusing", has the measured effect on the gold
and answer sets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import docent_native

from common.lexicon import ASKING_WORDS, STOP_WORDS, WORD, stem
from rag_system.grounding.parser import parser
from rag_system.grounding.terms import ask_terms, compound_words, initialisms, term_set, weighted_terms

#: Neighbouring sentences on each side of a window's centre sentence.
WINDOW_RADIUS = 1
#: Share of the question's subject terms a window must hold.
MIN_SUBJECT = 0.5
#: Heads that name a dimension or a kind, not a thing: the answer is a value or an instance ("36 months"
#: for "the duration of", "TS-71" for "which component"), so the word itself need not be written.
GENERIC_HEADS = frozenset(stem(w) for w in """
    number value values dimension duration temperature threshold difference amount size length time period percentage
    level limit maximum minimum count total speed frequency date year day month deadline age
    kind type sort name part component product thing way identifier code option setting parameter
    colour color shape material weight height width depth distance area volume capacity pressure voltage power
    location place position order role language
    default format unit term form codepoint status state mode result effect purpose reason version revision
    """.split())

#: Dimension heads whose value has a shape of its own: "what percentage" is answered by a percentage,
#: so a window without one (a signature block naming the founder) cannot answer it.
VALUE_SHAPES = {stem("percentage"): re.compile(r"\d\s*%|\bper\s?cent\b", re.IGNORECASE)}

_AUX_WORDS = frozenset("does do did is are was were has have had can could will would should must may might".split())
_AUX = "(?:" + "|".join(sorted(_AUX_WORDS)) + ")"
_PHRASE = r"(?P<x>(?:[\w'-]+\s+){0,3}?[\w'-]+)"
#: "What is the annual salary of ...", "What are the opening hours for ...": the ask is before "of".
_OF_FORM = re.compile(rf"^\s*(?:what|which)\s+(?:is|are|was|were)\s+(?:the|a|an)\s+{_PHRASE}\s+"
                      r"(?:of|for|in|on|at|between)\b", re.IGNORECASE)
#: "What salary does ...", "Which bank is lending ...", "How many litres does ...", "Under which ticker does ...".
_PREPOSITION = r"(?:in|under|on|at|for|by|from|to|with|above|below|over|after|before|since|until)"
_AUX_FORM = re.compile(rf"^\s*(?:{_PREPOSITION}\s+)?(?:what|which|how\s+many|how\s+much)\s+{_PHRASE}\s+{_AUX}\b",
                       re.IGNORECASE)


#: "How many people work at ...": the counted noun, when no auxiliary verb follows it.
_COUNT_FORM = re.compile(rf"^\s*(?i:(?:{_PREPOSITION}\s+)?how\s+many)\s+(?P<x>[a-z][\w'-]*)\b")


def ask_head(question: str) -> str | None:
    """The stem of the noun the question asks for, when its form says which one it is.

    Only the two commonest forms are read; any other question has no head and
    is judged by its ask words alone. A head that is a name or code is part of
    the subject instead ("What RFC 9000 section ...").
    """
    for form in (_OF_FORM, _AUX_FORM, _COUNT_FORM):
        m = form.search(question)
        if m is None:
            continue
        words = m.group("x").split()
        if "of" in (w.lower() for w in words):  # "how many days of annual leave": the days
            words = words[:[w.lower() for w in words].index("of")] or words
        if any(w.lower() in _AUX_WORDS for w in words):
            return None
        head = words[-1].lower().removesuffix("'s")
        if len(head) < 3 or head in STOP_WORDS or head in ASKING_WORDS:
            return None
        key = stem(head)
        return key if weighted_terms(question).get(key, 0.0) == 1.0 else None
    return None


@dataclass(frozen=True)
class AskMatch:
    """The window that holds the ask (or the closest one); words as the question writes them."""

    found: bool
    block: int  # index into the texts given; -1 when there were none
    text: str  # the window's sentences
    head: str | None  # the noun asked for, when it must be written
    subject: tuple[str, ...]  # names, codes and numbers of the question
    lacking: tuple[str, ...]  # head, subject and ask words the window does not hold

    def reason(self) -> str:
        """Why nothing can answer, for the refusal and the inspector."""
        if self.block < 0:
            return "no passage was given"
        together = [w for w in (self.head, *self.subject) if w]
        return f"no passage says {', '.join(together)} together (the closest lacks {', '.join(self.lacking)})"


def ask_together(question: str, texts: Sequence[str], names: Sequence[str] = ()) -> AskMatch:
    """The first window of `texts` holding the question's ask head with half its subject.

    `names[i]` is what block i is called (its document name and section): a
    word there counts as said in every window of the block, and so it cannot
    tell one window from another. The share is taken of the subject the name
    does not say: over a policy whose every section is headed "Northwind
    Robotics", "the annual salary of a Grade 7 employee at Northwind Robotics"
    needs "Grade 7" beside "salary", as the question without the company does.
    """
    head = ask_head(question)
    shape = VALUE_SHAPES.get(head) if head else None
    if head in GENERIC_HEADS:
        head = None
    subject = [t for t, w in weighted_terms(question).items() if w > 1.0]
    units = _subject_units(question, subject)
    asked = [t for t in ask_terms(question) if t != head]
    wanted = ([head] if head else []) + subject + asked
    written = _as_written(question)

    def match(found: bool, index: int, window: str, present: set[str]) -> AskMatch:
        return AskMatch(found, index, window, written.get(head) if head else None,
                        tuple(written.get(t, t) for t in subject),
                        tuple(written.get(t, t) for t in wanted if t not in present))

    closest, closest_score = match(False, -1, "", set(wanted)), -1.0
    for index, text in enumerate(texts):
        context = term_set([names[index]]) if index < len(names) else set()
        specific = [u for u in units if _said(u, context) < 1.0]  # what the block's name says is not specific
        for sentence, window in _windows(text):
            present = term_set([window]) | context | _initials(window)
            has_head = (head is None or head in _common_words(sentence)) and \
                (shape is None or shape.search(window) is not None)
            subject_share = sum(_said(u, present) for u in specific) / len(specific) if specific else 1.0
            if has_head and head is not None and subject_share >= MIN_SUBJECT and \
                    not _said_as_thing(head, written.get(head, head), sentence):
                has_head = False
            if has_head and subject_share >= MIN_SUBJECT:
                return match(True, index, window, present)
            if subject_share + has_head > closest_score:
                closest, closest_score = match(False, index, window, present), subject_share + has_head
    return closest


@dataclass(frozen=True)
class _Unit:
    """One name of the subject: its stems, and the name run together ("http3" for "HTTP/3")."""

    terms: frozenset[str]
    joined: str


def _subject_units(question: str, subject: list[str]) -> list[_Unit]:
    """The subject as names, one vote each: "ASN.1" or "Qwen3-Embedding-4B" is one name, not two
    votes of the share ("asn" and "1")."""
    units: list[_Unit] = []
    for compound in compound_words(question):
        terms = frozenset(t for t in term_set([compound]) if t in subject)
        if terms and all(u.terms != terms for u in units):
            units.append(_Unit(terms, re.sub(r"\W+", "", compound.lower())))
    grouped = set().union(*(u.terms for u in units))
    return units + [_Unit(frozenset([t]), t) for t in subject if t not in grouped]


def _said(unit: _Unit, present: set[str]) -> float:
    """How much of the name `present` says: all of it run together ("HTTP3" in a file name), else the
    share of its parts."""
    if unit.joined in present:
        return 1.0
    return sum(t in present for t in unit.terms) / len(unit.terms)


#: Two or more capitalised words in a row: a name ("Department of People Operations"), whose words
#: say what it is called, not what it is.
_TITLE_RUN = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of|and|&|for|the)?\s*[A-Z][\w'-]*)+")


def _common_words(sentence: str) -> set[str]:
    """Stems of the words that can say the head: not the parts of an identifier (`download_url` is not
    downloads) nor the words of a name ("People Operations" is not people)."""
    plain = _TITLE_RUN.sub(" ", sentence)
    return {stem(w) for w in WORD.findall(plain.lower()) if "_" not in w}


def _said_as_thing(head: str, word: str, sentence: str) -> bool:
    """The head is written as the thing asked for, not as a verb of the same spelling that carries no
    value: "Which port does a PostgreSQL server listen on?" is not answered by "... and then port the
    code to a larger database such as PostgreSQL" (seen in the web app over the sqlite3 reference, which
    then quoted three unrelated sentences instead of refusing). A verb still says it where the question
    writes another form of it ("is rated for 52 watts" says the rating) or where it holds a number
    ("costs $5" says the cost). `word`: the head as the question writes it. The parser reads only a
    sentence that would otherwise answer."""
    tokens = [t for t in parser().parse([sentence])[0] if stem(t.text.lower()) == head]
    return not tokens or any(t.pos_ != "VERB" or t.lemma_.lower() != word.lower()
                             or any(c.like_num for c in t.subtree) for t in tokens)


def _windows(text: str) -> Iterator[tuple[str, str]]:
    """Each sentence, and it with its neighbours (`WINDOW_RADIUS` on each side), in order."""
    spans = docent_native.split_sentences(text) or [(0, len(text))]
    for centre, (start, end) in enumerate(spans):
        lo, hi = max(centre - WINDOW_RADIUS, 0), min(centre + WINDOW_RADIUS, len(spans) - 1)
        yield text[start:end], text[spans[lo][0]:spans[hi][1]]


def _as_written(question: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in WORD.findall(question):
        out.setdefault(stem(word.lower()), word)
    return out


def _initials(text: str) -> set[str]:
    """"FTC" is said where "Federal Trade Commission" is written."""
    return {stem(i.lower()) for i in initialisms(text)}
