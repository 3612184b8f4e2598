"""One claim clause against the clauses of its sources: is every word bound as the source binds it?

The claim clause is aligned to the source clause that holds most of its words (names, numbers and
the heads of its subject, verb and object counting double); of clauses that tie, the one that says
the claim's predicate is read first, then the one with fewer findings. Then:

* a word the clause lacks may be taken from elsewhere in the passage — a heading or field before
  it, the sentence a pronoun refers back to, a clause its own depends on, the document's name, a
  nearby item of the same record for a number taken with the thing it counts — unless the clause
  has a word of its own in that place which the claim leaves out (`lending.may_lend` says which
  clauses may lend): the claim then put the borrowed word where the source has another ("Bob" for the clause's "Alice", 8443 for 9443, "stable" for
  the "latest" archive, "pickle" for the "marshal" format, "logs" for the verb "requires",
  "Employees" for the director who approves). A clause coordinated with the aligned one and with a
  subject of its own lends nothing ("the backup on 9443"), nor does the heading of a later record;
* a word no clause holds is added, not said (nouns weigh more than verbs and adjectives), unless
  the clause has its own word in its place (a subject, a number: then it is a swap);
* names exchanged and things put on the other side of a relation are found by `swaps.py`; how the
  clause asserts (polarity, modality, scope, comparators, conditions) by `asserts.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag_system.grounding.asserts import stance_findings
from rag_system.grounding.findings import CONTRADICTED, UNSUPPORTED, Finding, short
from rag_system.grounding.lending import FIRST_PERSON, antecedent_of, heading, may_lend
from rag_system.grounding.roots import abbreviates, named_in, opposites, root, same_meaning
from rag_system.grounding.swaps import sides, swaps, turned
from rag_system.grounding.units import LIGHT_KEYS, Unit, Word, holds, kind_of
from rag_system.grounding.words import PLAIN_QUALIFIERS

#: Words by which a claim names the writer of its source ("the author reinstalls once a year").
WRITER = frozenset("author writer".split())
#: What a clause that holds the claim's predicate gains: "Format 4 is the default" restates "It is the
#: default format", not "Format version 4 was added", which names more of its subject.
HEAD_BONUS = 0.0
#: Alignment scores this close to the best are read as ties.
TIE = 0.25


@dataclass(frozen=True)
class Alignment:
    claim: Unit
    unit: Unit | None
    matched: frozenset[str]  # claim word keys the aligned unit holds
    findings: tuple[Finding, ...]


def _score(claim: Unit, unit: Unit) -> float:
    """Claim words the unit holds (names, numbers and heads double); the unit's own facts the claim
    does not state count a little against it, so the more specific of two clauses wins a tie."""
    held = sum((2.0 if w.critical else 1.0) for w in claim.words if holds(unit, w))
    if held and claim.head not in LIGHT_KEYS and any(w.key == claim.head and holds(unit, w) for w in claim.words):
        held += HEAD_BONUS  # what the claim says of its subject, not only the subject
    held += 0.5 * len((claim.partial | claim.universal) & unit.all_keys)  # "by default", "only"
    keys = claim.keys()
    extra = sum(1 for w in unit.words if w.critical and not w.inherited and w.key not in keys)
    return held - 0.1 * extra if held else 0.0


def align(claim: Unit, units: Sequence[Unit], context: dict[int, frozenset[str]],
          asked: frozenset[str] = frozenset(), sentence_keys: frozenset[str] = frozenset()) -> Alignment:
    """The claim clause against the source clauses.

    `context[source]`: keys of the source's name and headings; `asked`: keys of the question;
    `sentence_keys`: keys of the whole claim sentence (a condition it states in another clause).
    """
    if not claim.words:
        return Alignment(claim, None, frozenset(), ())
    nowhere = Alignment(claim, None, frozenset(),
                        (Finding("added", UNSUPPORTED, f"no passage says this: \"{short(claim.text)}\""),))
    tied = readings(claim, units, context, asked, sentence_keys)
    if not tied:
        said = [w for w in claim.words if w.pos in ("NUM", "PROPN")] or len(claim.words) > 1
        return nowhere if said else Alignment(claim, None, frozenset(), ())
    best = min(enumerate(tied), key=lambda r: (not _speaks_of(claim, r[1].unit), len(r[1].findings), r[0]))[1]
    if best.unit and not _shares_a_thing(claim, best.unit) and any(f.verdict == CONTRADICTED for f in best.findings):
        return nowhere  # a clause about other things contradicts nothing
    return best


def readings(claim: Unit, units: Sequence[Unit], context: dict[int, frozenset[str]], asked: frozenset[str] = frozenset(),
             sentence_keys: frozenset[str] = frozenset(), within: float = TIE) -> list[Alignment]:
    """The claim read against each clause that holds its words about as well as the best one does
    (`within` of its score), best first. Of clauses that hold them equally well, the one that supports
    the claim is the one it restates ("an implementation which does not include a particular option
    ... another which does include the option": each relative clause has the other's words), so
    `align` reads every tied one."""
    scored = sorted(((_score(claim, u), -u.source, -u.ident, u) for u in units), key=lambda s: s[:3], reverse=True)
    if not scored or scored[0][0] <= 0:
        return []
    return [_read(claim, s[3], units, context, asked, sentence_keys)
            for s in scored if s[0] > 0 and s[0] >= scored[0][0] - within]


THINGS = ("NOUN", "PROPN", "NUM", "ADJ")  # what a clause is about: a verb shared alone aligns nothing


def _shares_a_thing(claim: Unit, unit: Unit) -> bool:
    """"The office canteen serves lunches" misreads nothing in "unless the employee has served 6 months"."""
    return not (ts := [w for w in claim.words if w.pos in THINGS and not w.inherited]) or any(holds(unit, w) for w in ts)


def _speaks_of(claim: Unit, unit: Unit | None) -> bool:
    """The clause says what the claim says of its subject, or its opposite: of two clauses that name
    the same things, the one the claim restates."""
    return unit is not None and (claim.head in unit.all_keys or any(same_meaning(claim.head, k) for k in unit.keys())
                                 or bool(opposites(claim.head) & unit.all_keys))


def _read(claim: Unit, unit: Unit, units: Sequence[Unit], context: dict[int, frozenset[str]],
          asked: frozenset[str], sentence_keys: frozenset[str]) -> Alignment:
    matched = frozenset(w.key for w in claim.words if holds(unit, w))
    findings = _bindings(claim, unit, units, matched, context.get(unit.source, frozenset()), asked, sentence_keys)
    findings += swaps(claim, unit, matched) or sides(claim, unit)
    stance = stance_findings(claim, _predicate_unit(claim, unit, units, matched), units, asked | sentence_keys,
                             sentence_keys)
    if turned(claim, unit):  # "B is slower than A" for "A is faster than B": the opposite restates it
        stance = [f for f in stance if f.kind != "opposite"]
    return Alignment(claim, unit, matched, tuple(findings + stance))


def _bindings(claim: Unit, unit: Unit, units: Sequence[Unit], matched: frozenset[str],
              context: frozenset[str], asked: frozenset[str], said: frozenset[str]) -> list[Finding]:
    out: list[Finding] = []
    added: list[Word] = []
    keys = claim.keys()
    own, label = _own_words(unit, units)
    antecedent = antecedent_of(unit, units)
    for word in claim.words:
        if word.key in matched:
            continue
        lenders = [u for u in units if u.source == unit.source and u.ident != unit.ident and holds(u, word)]
        in_context = named_in(word.key, context)
        if word.key in WRITER and FIRST_PERSON & unit.all_keys:
            continue  # "the author protects ..." restates "I protect ..."
        if not lenders and not in_context:
            rival = _rival(word, own, keys) if word.pos == "NUM" or (
                word.role == "party" and kind_of(word) == "NAME") else None
            if rival is not None and (word.pos == "NUM" or rival.role == "party" and word.pos == rival.pos):
                # "apt-get removes ..." where apt does; "at 1.45 bar" (another passage's) where it says 12
                out.append(_misbound(word, rival, None, unit))
            else:
                added.append(word)
            continue
        subject = in_context and word.role == "party" and kind_of(word) == "NAME" and not word.phrase  # "The Memo said"
        rival = None if subject else _rival(word, own, keys) or _label_rival(word, label, keys) or \
            (None if in_context else _verb_rival(word, claim, unit, said) or _subject_rival(word, claim, unit, lenders))
        lender = min(lenders, key=lambda u: (abs(u.sentence - unit.sentence), abs(u.ident - unit.ident))) \
            if lenders else None
        if rival is not None:
            out.append(_misbound(word, rival, lender, unit))
        elif lender is not None and not in_context and not any(
                may_lend(word, other, unit, antecedent, units) or _carried(word, claim, other, unit)
                for other in lenders):
            out.append(_misbound(word, None, lender, unit))
    if added:
        out += _added(added, asked, sum(1 for w in claim.words if w.key in asked and w.pos not in ("NUM", "PROPN")))
    return out


def _subject_rival(word: Word, claim: Unit, unit: Unit, lenders: list[Unit]) -> Word | None:
    """The clause's own subject, where the claim's subject comes from a statement about something
    else ("The initial value of the daemon flag is set through the daemon property" where the clause
    says the *flag* can be set so, and another sentence that the initial value is inherited)."""
    if not word.subject or word.pos not in ("NOUN", "PROPN") or any(u.sentence == unit.sentence for u in lenders):
        return None  # a clause of the same sentence may lend it ("raises ValueError if the generation ...")
    if any(same_meaning(u.head, claim.head) or claim.head in u.all_keys for u in lenders):
        return None  # a lender says the claim's verb of it: the claim restates that one
    parties = {w.key for w in claim.words if w.role == "party"}
    return next((w for w in unit.words if w.subject and not w.inherited and w.key != word.key
                 and w.pos in ("NOUN", "PROPN") and w.key not in parties), None)  # not turned passive


def _carried(word: Word, claim: Unit, lender: Unit, unit: Unit) -> bool:
    """A number taken with the thing it counts: the lender, a nearby item or field of the same
    record, holds the noun the claim binds the number to ("the 5 senior engineers" from "- 5 senior
    engineers critical to product development"; "working capital ($220,000)" from "Working Capital
    Adjustment: ($220,000)"). A number said of a verb is not carried: the lender's verb is said of
    its own subject ("account for 28% of revenue")."""
    if word.pos != "NUM" or lender.sentence > unit.sentence + 3 or unit.sentence > lender.sentence + 3:
        return False
    return any(w.key == word.attach and w.pos in ("NOUN", "PROPN") and holds(lender, w) for w in claim.words)


def _verb_rival(word: Word, claim: Unit, unit: Unit, said: frozenset[str]) -> Word | None:
    """The clause's own verb, where the claim puts a verb or predicate from another clause ("sudo
    logs the ordinary user's password" where the clause says sudo *requires* it, and another logs
    root activity; "Protocol 5 is the default" where protocol 5 *was added*, and another is the
    default)."""
    if claim.head not in (word.key, word.phrase) or word.pos not in ("VERB", "NOUN", "ADJ") or not unit.predicate or \
            unit.head in LIGHT_KEYS:
        return None
    if unit.head in claim.all_keys | said or any(same_meaning(unit.head, k) for k in claim.keys() | said):
        return None  # the claim says the clause's verb, elsewhere in its sentence
    return next((w for w in unit.words if w.key == unit.head and not w.inherited and w.pos == "VERB"), None)


def _own_words(unit: Unit, units: Sequence[Unit]) -> tuple[list[Word], list[Word]]:
    """The clause's own words, and the names and numbers of the label it stands under ("E11:" for
    "Replace sensor part TS-71."): a field's or an error code's label is what the sentences after it
    are about."""
    words = [w for w in unit.words if not w.inherited]
    label: list[Word] = []
    if not heading(unit):
        labels = [u for u in units if u.source == unit.source and heading(u)
                  and 0 < unit.sentence - u.sentence <= 3]
        if labels:
            label = [w for w in max(labels, key=lambda u: u.sentence).words if w.pos in ("PROPN", "NUM")]
    return words, label


def _label_rival(word: Word, label: list[Word], keys: set[str]) -> Word | None:
    """The label's own name or number where the claim gives another ("For E57, replace sensor TS-71",
    under "E11:")."""
    if word.pos not in ("PROPN", "NUM"):
        return None
    for w in label:
        if w.pos == word.pos and w.key not in keys and not any(same_meaning(w.key, k) for k in keys):
            return w
    return None


#: Nouns that name what a sentence is ("the solution", "the default", "the reason"), not a thing or party.
GENERIC_NOUNS = ("solution answer result way approach method option alternative thing default rule case example "
                 "reason purpose effect fix workaround remedy")


@lru_cache(maxsize=1)
def _generic_nouns() -> frozenset[str]:
    return frozenset(root(w) for w in GENERIC_NOUNS.split())


def _rival(word: Word, own: list[Word], keys: set[str]) -> Word | None:
    """The clause's own word in the place the claim gives `word`, which the claim leaves out: a number
    for a number; a name or noun doing or undergoing what the clause says for one that does; a word
    qualifying the same noun ("latest" for "stable" archive). A field's label ("Date" of "Filing
    Date: ...") names the value, not a thing."""
    kind = kind_of(word)
    if kind is None or not word.attach:
        return None
    for w in own:
        if w.key in keys or any(same_meaning(w.key, k) for k in keys) or \
                abbreviates(w.text, word.text) or abbreviates(word.text, w.text):
            continue  # "ACK" for "acknowledgment" is the same word
        if w.text.lower() in PLAIN_QUALIFIERS or w.key in _generic_nouns():
            continue  # "The solution is to ...": a word for what is said, not a thing the claim replaced
        if word.phrase and w.phrase and same_meaning(word.phrase, w.phrase) and kind != "NUM" and \
                kind_of(w) in ("NAME", "QUALITY") and any(same_meaning(w.phrase, k) for k in keys):
            return w  # another qualifier of the same noun: "the marshal format" for "the pickle format"
        if kind_of(w) != kind:
            continue
        if not w.attach or not same_meaning(word.attach, w.attach) or not any(same_meaning(w.attach, k) for k in keys):
            continue  # said of another word, or of a word the claim does not repeat
        if kind in ("NUM", "QUALITY") or word.role == w.role or "party" not in (word.role, w.role):
            return w
    return None


def _misbound(word: Word, rival: Word | None, lender: Unit | None, unit: Unit) -> Finding:
    where = f"\"{short(unit.text)}\""
    if rival is not None:
        kind = "number" if word.pos == "NUM" else "binding"
        return Finding(kind, CONTRADICTED, f"the passage says {rival.text}, not {word.text}: {where}")
    elsewhere = f" (\"{short(lender.text)}\")" if lender is not None else ""
    return Finding("binding", CONTRADICTED,
                   f"the passage says \"{word.text}\" of another statement{elsewhere}, not in {where}")


#: How much an added word weighs, by part of speech: a claim restates its source's verbs, adjectives
#: and adverbs in its own words more often than it adds one; an added noun is usually an added thing.
ADDED_WEIGHT = {"NOUN": 1.0, "VERB": 0.5, "ADJ": 0.5, "ADV": 0.5}
#: Added weight at which a clause says something its source does not.
MAX_ADDED = 1.5


def _added(words: list[Word], asked: frozenset[str], restated: int) -> list[Finding]:
    """Words no clause of the passage holds. Numbers and names are the native fact check's
    (`verifier._facts`: it knows their spellings); other words count by `ADDED_WEIGHT`, half when the
    question says them ("the peer is *supposed* to assume" restates how it was asked) — unless most
    of what the claim restates of the question is missing ("The annual salary of James Mitchell is
    ..." cited to a signature block): then it claims what was asked without its source saying it."""
    # Numbers written as words ("five years", "twice"), which the native check reads as words; one
    # written in digits is the native check's alone (it finds "120" in "no_application_protocol(120)").
    numbers = [w for w in words if w.pos == "NUM" and not w.inherited and not any(c.isdigit() for c in w.text)]
    if numbers:
        return [Finding("fact", UNSUPPORTED, f"the passage does not give {', '.join(w.text for w in numbers)}")]
    words = [w for w in words if w.pos not in ("NUM", "PROPN")]
    echoed = [w for w in words if w.key in asked]
    lenient = 0.5 if 2 * len(echoed) <= restated else 1.0
    weight = sum(ADDED_WEIGHT.get(w.pos, 0.5) * (lenient if w.key in asked else 1.0) for w in words)
    if weight >= MAX_ADDED:
        return [Finding("added", UNSUPPORTED,
                        f"the passage does not say {', '.join(repr(w.text) for w in words)}")]
    return []


def _predicate_unit(claim: Unit, unit: Unit, units: Sequence[Unit], matched: frozenset[str]) -> Unit:
    """The clause whose verb is the claim's: the aligned one, or one beside it that holds the claim's
    verb ("... comes with a curses module, though it's not compiled by default")."""
    if claim.head in unit.all_keys or claim.head in LIGHT_KEYS or same_meaning(claim.head, unit.head):
        return unit
    near = [u for u in units if u.source == unit.source and abs(u.sentence - unit.sentence) <= 1
            and u.ident != unit.ident and (u.head == claim.head or same_meaning(u.head, claim.head))]
    # Of several ("an implementation which does not include an option ... with another which does
    # include it"), the one that shares most of the claim's words and then asserts as it does.
    near.sort(key=lambda u: (-len(claim.keys() & u.keys()), u.negated != claim.negated,
                             abs(u.sentence - unit.sentence)))
    return near[0] if near else unit


