"""Sentences read as units: one clause each, with the words it binds and how it asserts them.

Why clauses: a fact is a binding inside one clause ("Employees at Grade 7 ... accrue 28 days";
"the backup [listens] on 9443"), and the errors the verifier exists to catch are words moved
between clauses. So each sentence is cut where a new clause starts (a coordinated verb, a
subordinate clause, a relative clause with a subject of its own, a clause after a semicolon, a
gapped "and the backup on 9443"), and each unit records its content words, and — read from its
verb and the auxiliaries and determiners bound to it, not from clauses nested in it — its
negation and modality, its scope words, the comparators before its numbers, and the condition it
states for another unit. A coordinated verb without a subject of its own shares its head's subject;
a gapped clause shares its head's verb and subject noun, so "the backup" reads "the backup [server
listens]".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from common.lexicon import STOP_WORDS
from rag_system.grounding.roots import root
from rag_system.grounding.words import (
    COMPARATORS, CONDITIONS, EXCLUSIVE, FRAMING, MODAL_WORDS, MODALS, NEGATING_HEADS, PARTIAL, UNIVERSAL)

CONTENT_POS = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "expl"})
OBJECT_DEPS = frozenset({"dobj", "attr", "oprd", "pobj", "dative", "acomp"})
#: Dependencies by which a word qualifies a noun ("the latest archive", "a FIFO queue", "the Seller's counsel").
MODIFIER_DEPS = frozenset({"amod", "compound", "poss", "nmod", "nummod"})
#: Light verbs that carry no fact of their own ("is", "has", "makes" in "makes a request").
LIGHT = frozenset({"be", "have", "do", "get", "make", "take", "go", "become", "exist", "apply", "happen"})
AUXILIARIES = frozenset("be have do will would shall should can could may might must ought".split())
PRONOUNS = frozenset("it its they them their this these those he she his her him such which who whose".split())
#: Determiners and pronouns that negate the clause whose subject or object they are.
NEGATING_WORDS = frozenset("no none nothing nobody neither never".split())
#: Scale words that multiply the number before them ("45 million").
SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "m": 1_000_000, "bn": 1_000_000_000}

MAIN, COORDINATE, SUBORDINATE, RELATIVE, LABEL = "main", "coordinate", "subordinate", "relative", "label"


@dataclass(frozen=True)
class Word:
    """A content word of a unit."""

    text: str
    key: str  # `roots.root` of its lemma
    pos: str
    critical: bool  # a number, a name, or the head of the unit's subject, object or predicate
    inherited: bool = False  # taken from the clause this one is coordinated with
    role: str = "other"  # "party": a subject, object or agent ("by"/"from" a director) of its clause
    index: int = -1  # its token's position in the parsed text
    attach: str = ""  # key of the word it is said of ("archive" for "latest", "approv" for "director")


@dataclass(frozen=True)
class Unit:
    """One clause of one sentence of one text."""

    source: int  # which text it comes from (a source's number; 0 for a claim)
    sentence: int  # sentence number within that text
    ident: int  # unit number within that text
    kind: str  # main | coordinate | subordinate | relative | label
    attached: int | None  # the unit it coordinates with, depends on or qualifies
    text: str
    words: tuple[Word, ...]
    head: str  # key of its verb (or head word)
    negated: bool
    modality: str | None
    ability: bool  # its "may" is "can"/"could": what can be done, not what is allowed or possible
    universal: frozenset[str]
    partial: frozenset[str]
    exclusive: bool
    comparators: tuple[tuple[str, str], ...]  # (number key, operator)
    condition: str | None  # "if", "unless", ...: this unit is a condition of `attached`
    predicate: bool  # it has a verb of its own
    subject: bool  # it has a subject of its own (a gapped "and the backup on 9443" has)
    pronoun: bool  # it refers back with a pronoun ("It requires ...", "its boiler")
    tree: tuple[int, ...]  # the head of every token of the parsed text it comes from (for distances)
    all_keys: frozenset[str]  # roots and forms of every token, function words included
    positions: tuple[tuple[str, int], ...] = ()  # (key, token index) of every content word of the unit

    def keys(self, own_only: bool = False) -> set[str]:
        return {w.key for w in self.words if not (own_only and w.inherited)}


def read_units(doc: Any, source: int = 0, first_ident: int = 0, first_sentence: int = 0) -> list[Unit]:
    """The clauses of every sentence of a parsed text, in order, numbered on from the given numbers."""
    units: list[Unit] = []
    for number, sent in enumerate(doc.sents):
        units.extend(_sentence_units(sent, source, first_sentence + number, first_ident + len(units)))
    return units


def _clause_head(token: Any) -> bool:
    dep = token.dep_
    if dep in ("ROOT", "advcl", "parataxis"):
        return True
    if dep in ("ccomp", "csubj"):
        # A complement ("No guarantee is made that the job runs") stays in its head's unit, whose
        # negation governs it, unless a semicolon or colon stands between them ("A approves X; B
        # approves Y", read as a complement) or it comes first ("X is created, so Y ...").
        lo, hi = sorted((token.i, token.head.i))
        return token.i < token.head.i or any(t.text in (";", ":") for t in token.doc[lo + 1:hi])
    if dep == "relcl" or (dep == "acl" and _pos(token) == "VERB"):
        return True  # "..., which indicates a multiplier of 8", "a request signed by a director"
    if dep == "conj":
        if _pos(token) == "VERB" or any(c.dep_ in SUBJECT_DEPS for c in token.children):
            return True
        return _gapped(token)
    return False


def _gapped(token: Any) -> bool:
    """"listens on 8443 and the backup on 9443": a noun coordinated with a verb, with a phrase of the
    same preposition as the verb's (or a number), standing for a clause whose verb is left out."""
    if token.dep_ != "conj" or _pos(token.head) not in ("VERB", "AUX") or token.pos_ not in ("NOUN", "PROPN"):
        return False
    mine = {c.lower_ for c in token.children if c.dep_ == "prep"}
    theirs = {c.lower_ for c in token.head.children if c.dep_ == "prep"}
    return bool(mine & theirs - {"of"}) or any(c.like_num for c in token.subtree if c.i != token.i)


def _kind(token: Any) -> str:
    return {"ROOT": MAIN, "conj": COORDINATE, "parataxis": COORDINATE, "relcl": RELATIVE, "acl": RELATIVE}.get(
        token.dep_, COORDINATE if token.dep_ in ("ccomp", "csubj") else SUBORDINATE)


def _unit_of(token: Any, heads: set[int]) -> Any:
    t = token
    while t.i not in heads and t.head.i != t.i:
        t = t.head
    return t


@lru_cache(maxsize=1)
def _modal_roots() -> dict[str, str]:
    return {root(w): m for w, m in MODAL_WORDS.items()}


def _pos(token: Any) -> str:
    """The part of speech, with the small model's verbs taken for auxiliaries ("requires") put right."""
    if token.pos_ == "AUX" and token.lemma_.lower() not in AUXILIARIES:
        return "VERB"
    return str(token.pos_)


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
    nxt = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if nxt is not None and nxt.lower_ in SCALES:
        try:
            return str(int(float(key) * SCALES[nxt.lower_]))
        except ValueError:
            return key
    return None if token.lower_ in SCALES else key


def _is_content(token: Any) -> bool:
    lower = token.lower_
    if not any(c.isalnum() for c in lower):
        return False
    if number_key(token) is not None:
        return True
    if _pos(token) not in CONTENT_POS or token.is_punct:
        return False
    lemma = token.lemma_.lower()
    if lower in STOP_WORDS or lemma in STOP_WORDS or lower in PRONOUNS or lemma in FRAMING or lower in FRAMING:
        return False
    if lemma in MODALS or lower in NEGATING_WORDS or lower in UNIVERSAL or lower in PARTIAL or lower in SCALES:
        return False
    if _pos(token) == "VERB" and lemma in LIGHT:
        return False
    return len(lower) > 1


def _critical(token: Any, head: Any) -> bool:
    if number_key(token) is not None or token.pos_ == "PROPN":
        return True
    if token.i == head.i:
        return _pos(token) in ("VERB", "NOUN", "PROPN", "ADJ")
    if token.dep_ in SUBJECT_DEPS or token.dep_ in OBJECT_DEPS:
        return token.pos_ in ("NOUN", "PROPN")
    if token.dep_ == "compound" and token.head.dep_ in SUBJECT_DEPS | OBJECT_DEPS:
        return True
    return token.dep_ == "xcomp" and _pos(token) == "VERB"


def _chain(head: Any) -> list[Any]:
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


def _negated(head: Any, tokens: list[Any]) -> bool:
    """Does the clause deny what it says? Any negation among its own words ("not", "no" before its
    subject or object, "never", "by no one", "fails to"), except inside a phrase that qualifies one
    of its nouns ("leave taken without approval", "an address that is not yet validated" is a
    clause of its own). A verb sharing a negated subject, or joined by "nor"/"or" to a negated
    verb, is negated too ("No packages depend nor recommend ...")."""
    mine = {t.i for t in tokens}
    for t in tokens:
        if _nested(t, head, mine):
            continue
        if (t.dep_ == "neg" or t.lower_ in NEGATING_WORDS) and not _comparator_not(t):
            return True
        if t.lemma_.lower() in NEGATING_HEADS and any(c.dep_ in ("xcomp", "prep") for c in t.children):
            return True  # "fails to start", "unable to connect"
    if head.dep_ == "conj" and not any(c.dep_ in SUBJECT_DEPS for c in head.children):
        cc = {c.lower_ for c in head.head.children if c.dep_ == "cc"}
        if any(c.dep_ in SUBJECT_DEPS and _negating(c) for c in head.head.children):
            return True
        if cc & {"nor", "or"}:
            siblings = [t for t in head.head.subtree if t.i not in mine]
            return _negated(head.head, [t for t in siblings if _unit_root(t, head.head)])
    return False


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


def _modality(head: Any) -> str | None:
    rank = {"may": 1, "should": 2, "will": 3, "must": 3}
    strongest: str | None = None
    for verb in _chain(head):
        found = [MODALS[c.lower_] for c in verb.children if c.dep_ == "aux" and c.lower_ in MODALS]
        key = root(verb.lemma_)
        if key in _modal_roots() and (any(c.dep_ == "xcomp" for c in verb.children) or _pos(verb) == "ADJ"):
            found.append(_modal_roots()[key])  # "is required to", "needs to", "is optional"
        if verb.lemma_.lower() == "have" and any(c.dep_ == "xcomp" for c in verb.children):
            found.append("must")  # "has to"
        for m in found:
            if strongest is None or rank[m] > rank[strongest]:
                strongest = m
    return strongest


def _comparators(sentence: Any, tokens: list[Any]) -> tuple[tuple[str, str], ...]:
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


def _sentence_units(sentence: Any, source: int, number: int, first: int) -> list[Unit]:
    heads = {t.i for t in sentence if _clause_head(t)} | {sentence.root.i}
    members: dict[int, list[Any]] = {h: [] for h in heads}
    for t in sentence:
        members[_unit_of(t, heads).i].append(t)
    order = sorted(heads)
    ident = {h: first + k for k, h in enumerate(order)}
    doc = sentence.doc
    units: list[Unit] = []
    for h in order:
        head, tokens = doc[h], members[h]
        parent = _unit_of(head.head, heads) if head.head.i != h else None
        own_subject = any(t.dep_ in SUBJECT_DEPS and t.head.i == h for t in tokens)
        words = [_word(t, head) for t in tokens if _is_content(t)]
        if head.dep_ == "conj" and parent is not None:
            words += _inherited(parent, members[parent.i], head, own_subject)
        if head.dep_ in ("relcl", "acl") and _is_content(head.head):
            words.append(_word(head.head, head, inherited=True))  # what the relative clause is about
        marks = [c.lower_ for c in head.children if c.dep_ in ("mark", "advmod") and c.lower_ in CONDITIONS]
        lowers = {t.lower_ for t in tokens}
        predicate = any(_pos(t) == "VERB" or (t.pos_ == "AUX" and t.i == h) for t in tokens) or \
            any(c.dep_ in SUBJECT_DEPS for c in head.children)  # "Employees ... accrue[ADJ] 28 days"
        label = not predicate and head.dep_ == "ROOT" and (
            ":" in (t.text for t in tokens) or sum(_is_content(t) for t in tokens) <= 4)
        units.append(Unit(
            source=source, sentence=number, ident=ident[h],
            kind=LABEL if label else _kind(head),
            attached=ident[parent.i] if parent is not None else None,
            text=doc[min(t.i for t in tokens):max(t.i for t in tokens) + 1].text,
            words=tuple(_dedupe(words)), head=_predicate(head), negated=_negated(head, tokens),
            tree=tuple(t.head.i for t in doc), positions=tuple((_key(t), t.i) for t in tokens if _is_content(t)),
            modality=_modality(head), universal=_universal(tokens),
            ability=any(c.lower_ in ("can", "could", "cannot") for v in _chain(head) for c in v.children if c.dep_ == "aux"),
            partial=frozenset(lowers & PARTIAL), exclusive=bool(lowers & EXCLUSIVE),
            comparators=_comparators(sentence, tokens),
            condition=marks[0] if marks and head.dep_ == "advcl" else None, predicate=predicate,
            subject=own_subject or (head.dep_ == "conj" and _pos(head) not in ("VERB", "AUX")),
            pronoun=any(t.lower_ in PRONOUNS and t.pos_ in ("PRON", "DET") for t in tokens) or (
                head.dep_ == "conj" and not own_subject and parent is not None and any(
                    c.dep_ in SUBJECT_DEPS and c.lower_ in PRONOUNS for c in parent.children)),
            all_keys=_all_keys(tokens)))
    return units


#: Nouns of time after which "every"/"each" says how often, not how many ("every 60 days").
TIME_WORDS = frozenset("second minute hour day week month year time cycle run call request".split())


def _universal(tokens: list[Any]) -> frozenset[str]:
    out = set()
    for t in tokens:
        if t.lower_ not in UNIVERSAL:
            continue
        nxt = t.doc[t.i + 1] if t.i + 1 < len(t.doc) else None
        if t.lower_ in ("every", "each") and nxt is not None and (nxt.like_num or nxt.lemma_.lower() in TIME_WORDS):
            continue
        out.add(t.lower_)
    return frozenset(out)


def _all_keys(tokens: list[Any]) -> frozenset[str]:
    """Every token's key and written form, each hyphenated word's parts, and each two words in a row
    joined ("third party" says "third-party"; "working days" says "workdays")."""
    keys = {root(t.lemma_) for t in tokens} | {t.lower_ for t in tokens}
    for t in tokens:
        if "-" in t.text or "–" in t.text:
            keys.update(root(part) for part in re.split(r"[-–]", t.lower_) if part)  # "3.0–3.7", "third-party"
    for a, b in zip(tokens, tokens[1:]):
        if a.is_alpha and b.is_alpha:
            keys.update({f"{a.lower_}-{b.lower_}", root(a.lower_ + b.lower_)})
    return frozenset(keys)


def _word(token: Any, head: Any, inherited: bool = False) -> Word:
    return Word(token.text, _key(token), "NUM" if number_key(token) else _pos(token),
                inherited or _critical(token, head), inherited=inherited, role=_role(token), index=token.i,
                attach=_governor(token))


def _governor(token: Any) -> str:
    """The key of the content word `token` is said of: the verb of a subject or object, the noun a
    modifier qualifies, the word a preposition's object hangs from ("approval from a director")."""
    t = token
    while t.head.i != t.i:
        t = t.head
        if t.dep_ == "prep" or t.pos_ in ("ADP", "AUX", "PART", "DET") or not _is_content(t):
            if t.lemma_.lower() == "be" and t.dep_ == "ROOT":
                return "be"
            continue
        return _key(t)
    return ""


def _key(token: Any) -> str:
    return number_key(token) or root(token.lemma_ if token.pos_ != "PROPN" else token.text)


def _predicate(head: Any) -> str:
    """The key of what a clause says of its subject: its verb, or for "is" its complement
    ("executable" in "the file is executable by no one")."""
    if head.lemma_.lower() == "be":
        for c in head.children:
            if c.dep_ in ("acomp", "attr") and _is_content(c):
                return _key(c)
    return _key(head)


def _role(token: Any) -> str:
    """"party" for the nouns that do or undergo what the clause says: subjects, objects, and the
    agent of a verb or of a noun made from one ("approval from a director", "approved by Alice")."""
    t = token
    while t.dep_ in ("compound", "conj", "appos", "poss") and t.head.i != t.i:
        t = t.head
    if t.dep_ in SUBJECT_DEPS or t.dep_ in ("dobj", "attr", "oprd", "dative"):
        return "party"
    if t.dep_ == "pobj" and t.head.lower_ in ("by", "from", "to", "for", "with") and t.head.head.pos_ in ("VERB", "NOUN"):
        return "party"
    return "other"


def _inherited(head: Any, head_tokens: list[Any], conj: Any, own_subject: bool) -> list[Word]:
    """What a coordinated clause shares with the clause it is coordinated with.

    A verb without its own subject shares the subject ("The server starts and listens on 8443");
    a gapped noun shares the verb and the subject's head noun ("and the backup [server listens] on 9443").
    """
    out: list[Word] = []
    gapped = _pos(conj) not in ("VERB", "AUX")
    for t in head_tokens:
        if not _is_content(t):
            continue
        in_subject = t.dep_ in SUBJECT_DEPS or (t.dep_ == "compound" and t.head.dep_ in SUBJECT_DEPS)
        shared = (gapped and (t.i == head.i or t.dep_ in SUBJECT_DEPS or t.dep_ in ("prt", "xcomp"))) or \
            (not gapped and not own_subject and in_subject)
        if shared:
            out.append(_word(t, head, inherited=True))
    return out


def _dedupe(words: Iterable[Word]) -> list[Word]:
    seen: dict[str, Word] = {}
    for w in words:
        if w.key not in seen or (w.critical and not seen[w.key].critical):
            seen[w.key] = w
    return list(seen.values())
