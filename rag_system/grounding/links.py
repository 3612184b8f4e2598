"""The links a claim draws between its clauses, checked against the links its source draws.

Why: each clause of "Because its primary job is to support .pyc files, the pickle serialization
format is guaranteed to be backwards compatible" is in its passage, but the passage gives that
reason for another fact (marshal's format may change). A claim that links two facts — one the
reason, condition or time of the other — says something neither fact says alone, so the source
must link the clauses that carry them:

* a reason, condition or time the source attaches to a clause of another sentence is attached
  to another fact ("the connection is silently closed when it remains idle" does not make "an
  endpoint commits to an immediate close" happen when it is idle);
* facts from sentences that are not next to each other are not linked at all ("E42: Pump
  cavitation detected." and, three entries on, "Clean the inlet mesh filter.");
* a reason or result ("because", "so", "which is why") needs the source to say so: its words
  ("because", "since", "therefore", "due to", "reason" ...) in one of the two sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_system.grounding.compare import Alignment
from rag_system.grounding.findings import CONTRADICTED, UNSUPPORTED, Finding, short
from rag_system.grounding.lending import antecedent_of
from rag_system.grounding.roots import same_meaning
from rag_system.grounding.units import Unit, Word
from rag_system.grounding.words import CAUSAL, LINKS

#: Link words of a claim that state a reason ("so" is as often a loose "and so", and is left out).
REASONS = CAUSAL - {"so"}
#: Words by which a source says one fact is the reason for or the result of another.
CAUSAL_WORDS = CAUSAL | frozenset("due reason result consequently caus".split())


def link_findings(alignments: Sequence[Alignment], units: Sequence[Unit]) -> list[Finding]:
    """Findings for the links between a claim sentence's clauses (`alignments` in clause order;
    `units`: the source clauses they were aligned among)."""
    by_ident = {a.claim.ident: a for a in alignments}
    out: list[Finding] = _references(alignments, by_ident, units)
    for a in alignments:
        claim = a.claim
        mark = claim.mark or claim.condition
        if mark is None or mark not in LINKS | CAUSAL or claim.loose:
            continue
        partners = [by_ident[claim.attached]] if claim.attached in by_ident else \
            [b for b in alignments if b.claim.attached == claim.ident and not b.claim.mark and not b.claim.loose]
        for partner in partners:
            finding = _link(a, partner, mark, units)
            if finding is not None:
                out.append(finding)
                break
    return out


def _references(alignments: Sequence[Alignment], by_ident: dict[int, Alignment],
                units: Sequence[Unit]) -> list[Finding]:
    """A clause of the claim that refers back with a pronoun to the clause it depends on ("Because
    its primary job is ..., the pickle format is ..."), aligned to a source clause whose pronoun
    refers to another thing of the same kind ("The marshal format ... Because its primary job ...")."""
    out = []
    for a in alignments:
        claim, source = a.claim, a.unit
        parent = by_ident.get(claim.attached) if claim.attached is not None else None
        if not claim.pronoun or parent is None or parent.unit is None or source is None or not source.pronoun:
            continue
        earlier = antecedent_of(source, units)
        if earlier is None or earlier.ident == parent.unit.ident:
            continue
        mine, theirs = _subject_phrase(parent.claim), _subject_phrase(earlier)
        if not mine or not theirs or not same_meaning(mine[0].key, theirs[0].key):
            continue
        said = {w.key for w in mine}
        other = [w for w in theirs[1:] if w.key not in said]
        if other and any(w.key not in {t.key for t in theirs} for w in mine[1:]):
            out.append(Finding("binding", CONTRADICTED,
                               f"the passage says \"{short(source.text)}\" of the {other[0].text} {theirs[0].text}, "
                               f"not of \"{short(parent.claim.text)}\""))
    return out


def _subject_phrase(unit: Unit) -> list[Word]:
    """The head of a clause's subject, then the words that qualify it ("format", "marshal")."""
    head = next((w for w in unit.words if w.subject and not w.inherited), None)
    if head is None:
        return []
    return [head] + [w for w in unit.words if w.phrase == head.key and not w.inherited and w.key != head.key]


def _link(linked: Alignment, other: Alignment, mark: str, units: Sequence[Unit]) -> Finding | None:
    """`linked` is the claim clause with the link word, `other` the clause it links to."""
    a, b = linked.unit, other.unit
    if a is None or b is None or a.source != b.source:
        return None
    if a.ident == b.ident:  # both facts from one clause: the link is the claim's unless it says why
        return _reason(linked, other, mark, a, b, units)
    if abs(a.sentence - b.sentence) > 1:
        attached = a if a.attached is not None and _own_link(a) else b if b.attached is not None and _own_link(b) \
            else None
        if attached is not None:
            return Finding("binding", CONTRADICTED,
                           f"the passage says \"{short(attached.text)}\" of another statement, not of "
                           f"\"{short(_other(linked, other, attached).claim.text)}\"")
        return Finding("binding", UNSUPPORTED,
                       f"the passage does not link \"{short(linked.claim.text)}\" to "
                       f"\"{short(other.claim.text)}\": it says them in separate places")
    return _reason(linked, other, mark, a, b, units)


def _reason(linked: Alignment, other: Alignment, mark: str, a: Unit, b: Unit, units: Sequence[Unit]) -> Finding | None:
    if mark in REASONS and not _causal(a, b, units):
        return Finding("added", UNSUPPORTED,
                       f"the passage does not give a reason: \"{short(linked.claim.text)}\" "
                       f"and \"{short(other.claim.text)}\" are not linked there")
    return None


def _own_link(unit: Unit) -> bool:
    """A source clause attached to another by a link word of its own ("when it remains idle")."""
    return bool(unit.mark or unit.condition)


def _other(linked: Alignment, other: Alignment, attached: Unit) -> Alignment:
    return other if linked.unit is attached else linked


def _causal(a: Unit, b: Unit, units: Sequence[Unit]) -> bool:
    """The sentences of `a` and `b` say that one thing is the reason for another."""
    sentences = {(a.source, a.sentence), (b.source, b.sentence)}
    return any(CAUSAL_WORDS & u.all_keys or u.mark in CAUSAL for u in units if (u.source, u.sentence) in sentences)
