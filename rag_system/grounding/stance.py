"""How a clause asserts what it says: its negation, modality, scope words and comparators.

Why apart from the clause cutter: these are read from the clause's verb and the auxiliaries and
determiners bound to it, not from clauses nested in it ("No guarantee is made that the job runs"
denies the job's running; "leave taken without approval" does not deny the leave), and each reading
has its own exceptions ("no more than 3" is a comparator, not a negation; "every 60 days" says how
often, not how many).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rag_system.grounding.roots import root
from rag_system.grounding.tokens import NEGATING_WORDS, SUBJECT_DEPS, number_key, pos
from rag_system.grounding.words import (
    COMPARATORS, FRAMING, MODAL_ADVERBS, MODAL_WORDS, MODALS, NEGATING_HEADS, PRIVATIVE, UNIVERSAL)

@lru_cache(maxsize=1)
def _modal_roots() -> dict[str, str]:
    return {root(w): m for w, m in MODAL_WORDS.items()}


def chain(head: Any) -> list[Any]:
    """The unit's verb with its verbal complements ("is required to approve"), whose auxiliaries and
    determiners say how the unit asserts."""
    chain, t = [head], head
    while True:
        nxt = [c for c in t.children if c.dep_ in ("xcomp", "acomp", "auxpass", "attr") and c not in chain]
        if not nxt and t.lemma_.lower() in FRAMING:  # "Please note that X does not ...": X asserts
            nxt = [c for c in t.children if c.dep_ == "ccomp"]
        if not nxt:
            return chain
        t = nxt[0]
        chain.append(t)


def negated(head: Any, tokens: list[Any]) -> bool:
    """Does the clause deny what it says? Any negation among its own words ("not", "no" before its
    subject or object, "never", "by no one", "fails to"), except inside a phrase that qualifies one
    of its nouns ("leave taken without approval", "an address that is not yet validated" is a
    clause of its own). A verb sharing a negated subject, or joined by "nor"/"or" to a negated
    verb, is negated too ("No packages depend nor recommend ...")."""
    mine = {t.i for t in tokens}
    for t in tokens:
        if _nested(t, head, mine):
            continue
        if (t.dep_ == "neg" or t.lower_ in NEGATING_WORDS) and not _comparator_not(t) and not _with_none(t):
            return True
        if t.lemma_.lower() in NEGATING_HEADS and any(c.dep_ in ("xcomp", "prep") for c in t.children):
            return True  # "fails to start", "unable to connect"
    if head.dep_ == "acl" and _negating(head.head) and any(c.dep_ == "aux" and c.lower_ == "to" for c in head.children):
        return True  # "There is no need to set it", "no reason to back it up": setting it is not needed
    if head.dep_ == "conj" and not any(c.dep_ in SUBJECT_DEPS for c in head.children):
        cc = {c.lower_ for c in head.head.children if c.dep_ == "cc"}
        if any(c.dep_ in SUBJECT_DEPS and _negating(c) for c in head.head.children):
            return True
        if cc & {"nor", "or"}:
            siblings = [t for t in head.head.subtree if t.i not in mine]
            return negated(head.head, [t for t in siblings if _unit_root(t, head.head)])
    return False


def _with_none(token: Any) -> bool:
    """"no" of "with no additional conditions": what the statement comes without, not a denial."""
    return token.lower_ == "no" and token.dep_ == "det" and token.head.dep_ == "pobj" and \
        token.head.head.lower_ == "with"


def _negating(token: Any) -> bool:
    """"no"/"none"/"never" itself, or a noun whose determiner is "no" ("No packages")."""
    return (token.lower_ in NEGATING_WORDS and not _comparator_not(token)) or any(
        d.dep_ == "det" and d.lower_ in NEGATING_WORDS and not _comparator_not(d) for d in token.children)


def _nested(token: Any, head: Any, mine: set[int]) -> bool:
    """`token` sits in a prepositional phrase or clause attached to a noun of the clause."""
    t = token
    while t.i != head.i and t.head.i != t.i and t.head.i in mine:
        if t.dep_ in ("prep", "acl", "relcl", "appos") and t.head.pos_ in ("NOUN", "PROPN"):
            return True
        t = t.head
    return False


def _unit_root(token: Any, head: Any) -> bool:
    t = token
    while t.i != head.i and t.head.i != t.i:
        if t.dep_ in ("conj", "advcl", "relcl", "ccomp", "parataxis"):
            return False
        t = t.head
    return t.i == head.i


def _comparator_not(token: Any) -> bool:
    """"no more than 3", "not more than 3", "not to exceed": a comparator, not a negation; nor is
    "No." of "Application No. 17/456,789"."""
    nxt = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if nxt is None:
        return token.text == "No"
    if token.text == "No" and (nxt.text == "." or nxt.like_num):
        return True
    return nxt.lower_ in ("more", "less", "later", "longer", "fewer", "earlier", "exceed", "greater", "to", "only")


def modality(head: Any) -> str | None:
    rank = {"may": 1, "should": 2, "will": 3, "must": 3}
    strongest: str | None = None
    if head.dep_ == "acl" and root(head.head.lemma_) in _modal_roots():
        strongest = _modal_roots()[root(head.head.lemma_)]  # "(no) need to set it", "the option to use it"
    for verb in chain(head):
        found = [MODALS[c.lower_] for c in verb.children if c.dep_ == "aux" and c.lower_ in MODALS]
        key = root(verb.lemma_)
        if key in _modal_roots() and (any(c.dep_ == "xcomp" for c in verb.children) or pos(verb) == "ADJ"):
            found.append(_modal_roots()[key])  # "is required to", "needs to", "is optional"
        if verb.lemma_.lower() == "have" and any(c.dep_ == "xcomp" for c in verb.children):
            found.append("must")  # "has to"
        found += [MODAL_ADVERBS[c.lower_] for c in verb.children if c.dep_ == "advmod" and c.lower_ in MODAL_ADVERBS]
        for m in found:
            if strongest is None or rank[m] > rank[strongest]:
                strongest = m
    if strongest is None and head.dep_ == "ROOT" and head.tag_ == "VB" and head.lemma_.lower() not in FRAMING \
            and not any(c.dep_ in ("nsubj", "nsubjpass", "aux") for c in head.children):
        return "should"  # an instruction ("Recreate it at the new location") says what one should do
    return strongest


def comparators(sentence: Any, tokens: list[Any]) -> tuple[tuple[str, str], ...]:
    words = [t.lower_ for t in sentence]
    out: list[tuple[str, str]] = []
    for t in tokens:
        key = number_key(t)
        if key is not None:
            out.append((key, _operator(words, t.i - sentence.start)))
    return tuple(out)


def _operator(words: list[str], i: int) -> str:
    """The comparator written around the number at `i`: before it ("at least 3") or after it and its
    unit ("3 days or more"); "=" when none."""
    before = " " + " ".join(words[max(0, i - 4):i])
    after = words[i + 1:i + 5]
    for phrase, sign in COMPARATORS:
        if phrase.startswith("or "):
            if " ".join(after).startswith(phrase) or " ".join(after[1:]).startswith(phrase):
                return sign
        elif before.endswith(" " + phrase):
            return sign
    return "="


#: Nouns of time after which "every"/"each" says how often, not how many ("every 60 days").
TIME_WORDS = frozenset("second minute hour day week month year time cycle run call request".split())


def universal(tokens: list[Any]) -> frozenset[str]:
    out = set()
    for t in tokens:
        if t.lower_ not in UNIVERSAL:
            continue
        nxt = t.doc[t.i + 1] if t.i + 1 < len(t.doc) else None
        if t.lower_ in ("every", "each") and nxt is not None and (nxt.like_num or nxt.lemma_.lower() in TIME_WORDS):
            continue
        out.add(t.lower_)
    return frozenset(out)


def privative(head: Any) -> bool:
    """A verb that denies by itself what its object would be ("lacks", "omits", "leaves out"):
    "an implementation that leaves out an option" says "does not include" it. Only with an object
    or in the passive."""
    lemma = head.lemma_.lower()
    deps = {c.dep_ for c in head.children}
    if not deps & {"dobj", "nsubjpass", "auxpass"}:
        return False  # "the count drops to zero" denies nothing
    particles = {c.lower_ for c in head.children if c.dep_ == "prt"}
    return lemma in PRIVATIVE or any(f"{lemma} {p}" in PRIVATIVE for p in particles)
