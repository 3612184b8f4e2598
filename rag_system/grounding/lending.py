"""Which clause of a passage may lend a word to the clause a claim is aligned with.

Why apart from the comparison: a claim often names what its source clause leaves to a heading, a
field label, the sentence a pronoun refers back to, or a clause it depends on; but a coordinated
clause with a subject of its own ("and the backup on 9443"), or another record's heading, says
nothing of it. These rules only answer "may this word come from there", on the parsed clauses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_system.grounding.units import COORDINATE, LABEL, Unit, Word

#: Words by which a text names its writer, whose name a signature may give after it ...
FIRST_PERSON = frozenset("i we me us my our".split())


def heading(unit: Unit) -> bool:
    """A label that heads what follows it ("E11:", "2. DataFlow Systems"), not a statement without a
    verb ("Steam boiler overpressure.")."""
    text = unit.text.rstrip()
    if unit.kind != LABEL or ":" in text[:-1]:
        return False  # a field ("HSR Filing Fee: $30,000") names its own value only
    return text.endswith(":") or not text.endswith((".", "!", "?")) or text.rstrip(".").replace(".", "").isdigit()


def antecedent_of(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """What a clause's pronoun refers back to: the nearest clause before it with a subject of its own
    that is not itself a pronoun ("Protocol version 4 was added ... It adds ... It is the default")."""
    if not unit.pronoun:
        return None
    before = [u for u in units if u.source == unit.source and u.sentence < unit.sentence
              and unit.sentence - u.sentence <= 3 and u.subject and u.predicate]
    for u in sorted(before, key=lambda u: (-u.sentence, u.ident)):
        if not u.pronoun or not u.referring and any(
                w.critical and w.pos in ("NOUN", "PROPN") and w.role == "party" for w in u.words):
            return u
    return None


def may_lend(word: Word, lender: Unit, unit: Unit, antecedent: Unit | None, units: Sequence[Unit]) -> bool:
    """A clause coordinated with the aligned one, in the same sentence and with a subject of its own,
    lends nothing ("the backup on 9443" to "the primary server listens on 8443"), unless the
    aligned clause refers back with a pronoun ("those at Grade 7 ..."). A number comes only from the
    clause a pronoun refers to, a label or heading beside it, or a clause attached to it ("(3)").
    A heading, a field, the clause an antecedent comes from and a condition lend other words freely."""
    distance = abs(lender.sentence - unit.sentence)
    if antecedent is not None and lender.ident == antecedent.ident:
        return True
    if _other_record(lender, unit, units) and not FIRST_PERSON & unit.all_keys:
        return False  # another record's heading or entries say nothing of this one ("we" is the signatory)
    if unit.pronoun and lender.sentence == unit.sentence:
        return True
    if lender.text.rstrip().endswith(":") and lender.sentence <= unit.sentence:
        return True  # "... SETTINGS_QPACK_MAX_TABLE_CAPACITY (0x01): The default value is zero."
    if word.pos == "NUM":
        return (distance == 0 and _joined(lender, unit, units)) or \
            (LABEL in (lender.kind, unit.kind) and distance <= 1) or _introduced(lender, unit, units) or \
            _refers_back(lender, unit, units)
    return not (distance == 0 and lender.predicate and lender.kind != LABEL and (
        (lender.kind == COORDINATE and lender.attached == unit.ident and lender.subject) or
        (unit.kind == COORDINATE and unit.attached == lender.ident and unit.subject)))


def _refers_back(lender: Unit, unit: Unit, units: Sequence[Unit]) -> bool:
    """The lender's sentence, the next one, refers back to the aligned clause with a pronoun: "The ack
    delay exponent is an integer ... If this value is absent, a default value of 3 is assumed" says 3
    of the exponent. (A number the aligned clause says itself is a rival and found before this.)"""
    return lender.sentence == unit.sentence + 1 and any(
        u.source == lender.source and u.sentence == lender.sentence and u.pronoun
        and (ante := antecedent_of(u, units)) is not None and ante.sentence == unit.sentence for u in units)


def _other_record(lender: Unit, unit: Unit, units: Sequence[Unit]) -> bool:
    """A heading stands between the two ("2.2 Integration Costs" between the mitigation of 2.1 and
    the integration costs of 2.2), or the lender is the heading of a later record."""
    low, high = sorted((lender.sentence, unit.sentence))
    return any(u.source == unit.source and _numbered(u) and low < u.sentence <= high and u.ident != lender.ident
               for u in units) or (lender.sentence > unit.sentence and heading(lender))


#: A numbered heading: "2.2 Integration Costs (MEDIUM)", "2.", "E11:".
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?(?:\s|$)|[A-Z]+\d+:$)")


def _numbered(unit: Unit) -> bool:
    """A heading that starts a record of a list: its own number, or a code and a colon."""
    return unit.kind == LABEL and bool(_NUMBERED.match(unit.text.strip()))


def _joined(a: Unit, b: Unit, units: Sequence[Unit]) -> bool:
    """One clause depends on the other, directly or through the clauses between, and none of those
    is a coordinated statement with a subject of its own ("and the backup on 9443")."""
    by_ident = {u.ident: u for u in units if u.source == a.source}
    for low, high in ((a, b), (b, a)):
        u = low
        while u.attached is not None and u.attached in by_ident and not (u.kind == COORDINATE and u.subject):
            u = by_ident[u.attached]
            if u.ident == high.ident:
                return True
    return False


def _introduced(lender: Unit, unit: Unit, units: Sequence[Unit]) -> bool:
    """The lender is the value a colon at the end of the aligned clause's sentence introduces ("run at
    temperature: 0 (deterministic routing)", which the parser reads as two sentences)."""
    return lender.sentence == unit.sentence + 1 and any(
        u.source == unit.source and u.sentence == unit.sentence and u.text.rstrip().endswith(":") for u in units)
