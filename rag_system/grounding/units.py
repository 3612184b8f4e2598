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
from typing import Any

from rag_system.grounding.roots import root, same_meaning, spelled_out, synonyms
from rag_system.grounding.stance import chain, comparators, modality, negated, privative, universal
from rag_system.grounding.tokens import (
    LIGHT, OBJECT_DEPS, PRONOUNS, SUBJECT_DEPS, is_content, key, number_key, pos)
from rag_system.grounding.words import CONDITIONS, EXCLUSIVE, FRAMING, LINKS, PARTIAL

MAIN, COORDINATE, SUBORDINATE, RELATIVE, LABEL = "main", "coordinate", "subordinate", "relative", "label"
#: Keys of the light verbs, as lemmas and as written.
LIGHT_KEYS = frozenset(LIGHT) | {"is", "are", "was", "were", "has", "had"}


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
    phrase: str = ""  # a modifier's noun ("format" for "pickle" in "the pickle serialization format")
    side: str = ""  # the preposition that places it ("from"/"to" an archive, "than" the other)
    aside: bool = False  # not the clause's predicate, said by the way ("try to install ... using X")
    subject: bool = False  # the head of its clause's subject ("value" of "The initial value is inherited")


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
    mark: str | None = None  # the word that links it to `attached` ("because", "when", "so", "why")
    privative: bool = False  # its verb denies by itself ("lacks", "omits", "leaves out")
    loose: bool = False  # a semicolon or colon stands between it and the unit it is attached to
    referring: bool = False  # its subject is a pronoun ("It is the default protocol")

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
        return token.i < token.head.i or any(t.text in (";", ":", "-", "–", "—") for t in token.doc[lo + 1:hi])
    if dep == "acl" and any(c.dep_ == "mark" and c.lower_ in ("that", "whether") for c in token.children):
        return False  # "no guarantee that the job runs": what the noun says, under its negation
    if dep == "relcl" or (dep == "acl" and pos(token) == "VERB"):
        return True  # "..., which indicates a multiplier of 8", "a request signed by a director"
    if dep == "conj":
        if pos(token) == "VERB" or any(c.dep_ in SUBJECT_DEPS for c in token.children):
            return True
        if pos(token) == "AUX" and any(c.dep_ in ("aux", "acomp", "attr", "neg", "auxpass") for c in token.children):
            return True  # "This is not acceptable for X but may be acceptable for Y"
        return _gapped(token)
    return False


def _gapped(token: Any) -> bool:
    """"listens on 8443 and the backup on 9443": a noun coordinated with a verb, with a phrase of the
    same preposition as the verb's (or a number), standing for a clause whose verb is left out."""
    if token.dep_ != "conj" or pos(token.head) not in ("VERB", "AUX") or token.pos_ not in ("NOUN", "PROPN"):
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


def _critical(token: Any, head: Any) -> bool:
    if number_key(token) is not None or token.pos_ == "PROPN":
        return True
    if token.i == head.i:
        return pos(token) in ("VERB", "NOUN", "PROPN", "ADJ")
    if token.dep_ in SUBJECT_DEPS or token.dep_ in OBJECT_DEPS:
        return token.pos_ in ("NOUN", "PROPN")
    if token.dep_ == "compound" and token.head.dep_ in SUBJECT_DEPS | OBJECT_DEPS:
        return True
    return token.dep_ == "xcomp" and pos(token) == "VERB"


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
        words = [_word(t, head) for t in tokens if is_content(t)]
        if head.dep_ == "conj" and parent is not None:
            words += _inherited(parent, members[parent.i], head, own_subject)
        if head.dep_ in ("relcl", "acl") and is_content(head.head):
            words.append(_word(head.head, head, inherited=True))  # what the relative clause is about
        marks = [c.lower_ for c in head.children if c.dep_ in ("mark", "advmod") and c.lower_ in CONDITIONS]
        if head.dep_ == "conj" and parent is not None and own_subject:
            words += _adjuncts(parent, members[parent.i], head)
        lowers = {t.lower_ for t in tokens}
        predicate = any(pos(t) == "VERB" or (t.pos_ == "AUX" and t.i == h) for t in tokens) or \
            any(c.dep_ in SUBJECT_DEPS for c in head.children)  # "Employees ... accrue[ADJ] 28 days"
        label = not predicate and head.dep_ == "ROOT" and (
            ":" in (t.text for t in tokens) or sum(is_content(t) for t in tokens) <= 4)
        units.append(Unit(
            source=source, sentence=number, ident=ident[h],
            kind=LABEL if label else _kind(head),
            attached=ident[parent.i] if parent is not None else None,
            text=doc[min(t.i for t in tokens):max(t.i for t in tokens) + 1].text,
            words=tuple(_dedupe(words)), head=_predicate(head), negated=negated(head, tokens),
            tree=tuple(t.head.i for t in doc), positions=tuple((key(t), t.i) for t in tokens if is_content(t)),
            modality=modality(head), universal=universal(tokens),
            ability=any(c.lower_ in ("can", "could", "cannot") for v in chain(head) for c in v.children if c.dep_ == "aux"),
            partial=_partial(tokens), exclusive=bool(lowers & EXCLUSIVE),
            comparators=comparators(sentence, tokens),
            condition=marks[0] if marks and head.dep_ == "advcl" else None, predicate=predicate,
            subject=own_subject or (head.dep_ == "conj" and pos(head) not in ("VERB", "AUX")),
            pronoun=any(t.lower_ in PRONOUNS and t.pos_ in ("PRON", "DET") for t in tokens) or (
                head.dep_ == "conj" and not own_subject and parent is not None and any(
                    c.dep_ in SUBJECT_DEPS and c.lower_ in PRONOUNS for c in parent.children)),
            all_keys=_all_keys(tokens), mark=_mark(head), privative=privative(head),
            loose=parent is not None and _broken(doc, head.i, parent.i),
            referring=any(t.dep_ in SUBJECT_DEPS and t.head.i == h and t.lower_ in PRONOUNS for t in tokens)))
    return units


def _partial(tokens: list[Any]) -> frozenset[str]:
    """The clause's words of partial scope; "default" only as "by default" ("the default protocol"
    names a thing)."""
    return frozenset(t.lower_ for t in tokens
                     if t.lower_ in PARTIAL and (t.lower_ != "default" or t.head.lower_ == "by"))


def _broken(doc: Any, a: int, b: int) -> bool:
    lo, hi = sorted((a, b))
    return any(t.text in (";", ":") for t in doc[lo + 1:hi])


def _mark(head: Any) -> str | None:
    """The word that links a clause to the one it depends on: its conjunction ("because", "when"),
    "so" before a coordinated clause, "why" of "which is why"."""
    for c in head.children:
        if c.dep_ in ("mark", "advmod", "cc") and c.lower_ in LINKS and c.i < head.i:
            nxt = c.doc[c.i + 1] if c.i + 1 < len(c.doc) else None
            if c.lower_ == "so" and nxt is not None and nxt.lower_ == "that":
                return None  # "so that": a purpose or manner, not a reason
            return c.lower_
        if c.dep_ in ("advcl", "ccomp", "attr") and c.i > head.i and any(
                g.lower_ == "why" and g.dep_ == "advmod" for g in c.children):
            return "why"
    if any(c.lower_ == "why" for c in head.children):
        return "why"
    return None


def _adjuncts(head: Any, head_tokens: list[Any], conj: Any) -> list[Word]:
    """The phrases that open a sentence and set the scene for all of its clauses ("With a priority
    queue, the entries are kept sorted and the lowest valued entry is retrieved first")."""
    subject = min((c.i for c in head.children if c.dep_ in SUBJECT_DEPS), default=head.i)
    mine = {t.i for t in head_tokens}
    out = []
    for c in head.children:
        if c.dep_ == "prep" and c.i < subject and c.i < conj.i:
            out += [_word(t, head, inherited=True) for t in c.subtree if t.i in mine and is_content(t)]
    return out


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
    return Word(token.text, key(token), "NUM" if number_key(token) else pos(token),
                inherited or _critical(token, head), inherited=inherited, role=_role(token), index=token.i,
                attach=_governor(token), phrase=_phrase(token), side=_side(token, head),
                aside=token.i not in _predicate_chain(head),
                subject=token.dep_ in SUBJECT_DEPS and token.head.i == head.i)


#: Modifiers of a noun: what makes "the marshal format" another format than "the pickle format".
NOUN_MODIFIERS = frozenset({"amod", "compound", "poss", "nmod"})
#: Prepositions that place a thing on one side of a relation ("from" / "to" an archive, "than").
SIDES = frozenset({"from", "to", "into", "than", "before", "after"})


def _predicate_chain(head: Any) -> set[int]:
    """The tokens that make up what a clause says of its subject: its head and the verbs and
    complements chained to it ("is not guaranteed to be portable", "are valid, enforceable, and free"),
    a light verb's object, which says what the verb does not ("do not have any cryptographic
    protection" says "are not protected"), and what a framing verb frames ("Note that ...", as
    `_predicate` reads it)."""
    out, todo = {head.i}, [head]
    while todo:
        for c in todo.pop().children:
            verb = c.head.lemma_.lower()
            if (c.dep_ in ("xcomp", "acomp", "attr", "oprd", "conj") or c.dep_ == "dobj" and verb in LIGHT
                    or c.dep_ == "ccomp" and verb in FRAMING) and c.i not in out:
                out.add(c.i)
                todo.append(c)
    return out


def _phrase(token: Any) -> str:
    """The key of the noun a modifier qualifies, through the modifiers between ("pickle" in "the
    pickle serialization format" qualifies "format"); "" for a word that qualifies no noun."""
    t = token
    while t.dep_ in NOUN_MODIFIERS and t.head.i != t.i and t.head.pos_ in ("NOUN", "PROPN"):
        t = t.head
    return key(t) if t.i != token.i else ""


def _side(token: Any, head: Any) -> str:
    """The nearest preposition above `token` that places it on one side of a relation."""
    t = token
    while t.i != head.i and t.head.i != t.i:
        if t.dep_ == "prep" and t.lower_ in SIDES and not (t.lower_ == "than" and _other_than(t)):
            return t.lower_
        t = t.head
    return ""


def _other_than(than: Any) -> bool:
    """"longer than 10 consecutive working days" compares a quantity, "any purpose other than
    debugging" excepts: neither compares two things."""
    before = than.doc[than.i - 1].lower_ if than.i > 0 else ""
    return before in ("other", "rather") or any(
        (c.like_num or c.tag_ == "CD") and c.lower_ != "one" for o in than.children for c in o.subtree)


def _governor(token: Any) -> str:
    """The key of the content word `token` is said of: the verb of a subject or object, the noun a
    modifier qualifies, the word a preposition's object hangs from ("approval from a director")."""
    t = token
    while t.head.i != t.i:
        t = t.head
        if t.dep_ == "prep" or t.pos_ in ("ADP", "AUX", "PART", "DET") or not is_content(t):
            if t.lemma_.lower() == "be" and t.dep_ == "ROOT":
                return "be"
            continue
        return key(t)
    return ""


def _predicate(head: Any) -> str:
    """The key of what a clause says of its subject: its verb, or for "is" its complement
    ("executable" in "the file is executable by no one")."""
    if head.lemma_.lower() == "be":
        for c in head.children:
            if c.dep_ in ("acomp", "attr") and is_content(c):
                return key(c)
    if head.lemma_.lower() in FRAMING:  # "The certification concluded that the patents are free of liens"
        for c in head.children:
            if c.dep_ == "ccomp":
                return _predicate(c)
    return key(head)


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
    gapped = pos(conj) not in ("VERB", "AUX")
    for t in head_tokens:
        if not is_content(t):
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


def holds(unit: Unit, word: Word) -> bool:
    """The unit says `word`: as one of its content words, any of its tokens, or a synonym of either."""
    keys = unit.keys()
    if word.key in keys or any(same_meaning(word.key, k) for k in keys):
        return True
    return word.key in unit.all_keys or bool(synonyms(word.key) & unit.all_keys) or spelled_out(word.text, unit.text)


def kind_of(word: Word) -> str | None:
    """What place a word fills: a number, a name (a thing or party), or a quality."""
    if word.pos == "VERB" and word.role == "party":
        return "NAME"  # a gerund doing what the clause says ("Descaling must be performed ...")
    return {"NUM": "NUM", "PROPN": "NAME", "NOUN": "NAME", "ADJ": "QUALITY"}.get(word.pos)
