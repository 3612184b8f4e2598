"""Words the claim binds to each other where its passage binds them to others: names exchanged
within one sentence, and things put on the other side of a relation.

Why apart from the binding check (`compare.py`): there every word is in the aligned clause, so no
word is borrowed; the error is in which word goes with which ("StartupXYZ is the Buyer" against
"TechCorp ("Buyer") and StartupXYZ ("Seller")"; packages moved "from testing to unstable" against
"from unstable to testing"; "GnuPG's signature is cheaper than the MD5 sum" against the reverse).
"""

from __future__ import annotations

from rag_system.grounding.findings import CONTRADICTED, Finding, short
from rag_system.grounding.roots import opposites
from rag_system.grounding.units import Unit, Word, kind_of

#: A word this many tree steps closer to another word than the claim's partner is bound to it instead.
SWAP_MARGIN = 2


def swaps(claim: Unit, unit: Unit, matched: frozenset[str]) -> list[Finding]:
    """Two names exchanged inside one sentence: the claim binds name A to word B, where the passage
    binds B directly to name Z, which the claim binds elsewhere ("StartupXYZ is the Buyer" against
    "TechCorp ("Buyer") and StartupXYZ ("Seller")")."""
    at: dict[str, list[int]] = {}
    for key, index in unit.positions:
        at.setdefault(key, []).append(index)
    pairs = _claim_pairs(claim)
    bound = {(x.key, y.key) for x, y in pairs}
    for a, b in pairs:
        if a.pos != "PROPN" or a.key not in at or b.key not in at:
            continue
        near = _closest(unit.tree, at[a.key], at[b.key])
        for z in claim.words:
            if z.pos != "PROPN" or z.key in (a.key, b.key) or z.key not in at or (z.key, b.key) in bound:
                continue
            partners = [w for x, w in bound if x == z.key and w != b.key and w in at]
            if not partners:
                continue  # the claim must bind Z elsewhere: a pair exchanged, not a name left out
            close = _closest(unit.tree, at[z.key], at[b.key])
            exchanged = any(_closest(unit.tree, at[a.key], at[w]) <= 2 for w in partners)
            if close <= 2 and close + SWAP_MARGIN <= near and exchanged:
                return [Finding("binding", CONTRADICTED,
                                f"the passage says {b.text} of {z.text}, not of {a.text}: \"{short(unit.text)}\"")]
    return []


def _closest(tree: tuple[int, ...], a: list[int], b: list[int]) -> int:
    return min((_distance(tree, x, y) for x in a for y in b), default=99)


def _claim_pairs(claim: Unit) -> list[tuple[Word, Word]]:
    """Name, noun and number words of the claim bound within two steps of each other (through a verb
    "is", a preposition), both ways."""
    words = [w for w in claim.words if not w.inherited and kind_of(w) in ("NAME", "NUM")]
    out = []
    for a in words:
        for b in words:
            if a.index < b.index and _distance(claim.tree, a.index, b.index) <= 2:
                out.append((a, b))
                out.append((b, a))
    return out


def _distance(tree: tuple[int, ...], a: int, b: int) -> int:
    if a < 0 or b < 0 or a >= len(tree) or b >= len(tree):
        return 99
    up: dict[int, int] = {}
    steps, t = 0, a
    while t not in up:
        up[t] = steps
        if tree[t] == t:
            break
        t, steps = tree[t], steps + 1
    steps, t = 0, b
    seen: set[int] = set()
    while t not in up and t not in seen:
        seen.add(t)
        if tree[t] == t:
            return 99
        t, steps = tree[t], steps + 1
    return up[t] + steps if t in up else 99


#: Pairs of sides that exchange what goes where ("from unstable to testing").
OPPOSED_SIDES = (frozenset({"from", "to"}), frozenset({"from", "into"}))


def sides(claim: Unit, unit: Unit) -> list[Finding]:
    """A thing the claim puts on the other side of a relation than its source: moved "to" where the
    source moves it "from"; compared "than" where the source compares the other with it — unless
    the claim also turns the comparison round ("the MD5 sum is cheaper" / "GnuPG's signature is
    dearer than the MD5 sum")."""
    count: dict[str, int] = {}
    for key, _ in unit.positions:
        count[key] = count.get(key, 0) + 1
    theirs = {w.key: w for w in unit.words if not w.inherited and count.get(w.key) == 1}
    for word in claim.words:
        if word.inherited or word.pos not in ("NOUN", "PROPN", "ADJ") or word.key not in theirs:
            continue
        mine, other = word.side, theirs[word.key].side
        if mine == other:
            continue
        if frozenset({mine, other}) in OPPOSED_SIDES:
            return [Finding("binding", CONTRADICTED, f"the passage says {other} {theirs[word.key].text}, "
                                                     f"not {mine} {word.text}: \"{short(unit.text)}\"")]
        if _turned(word, theirs[word.key]) and not any(opposites(k) & unit.all_keys for k in claim.keys()):
            compared = "compares the other with" if mine == "than" else "compares it with the other"
            return [Finding("binding", CONTRADICTED, f"the passage {compared} {word.text}, the other way "
                                                     f"round: \"{short(unit.text)}\"")]
    return []


def turned(claim: Unit, unit: Unit) -> bool:
    """The claim compares the other way round: a thing its source compares something with ("than")
    is the one the claim compares, or the reverse."""
    theirs = {w.key: w for w in unit.words if not w.inherited}
    if not any(w.side == "than" for w in claim.words) or not any(w.side == "than" for w in unit.words):
        return False  # two comparisons, one turned round
    return any(_turned(w, theirs[w.key]) for w in claim.words
               if not w.inherited and w.pos in ("NOUN", "PROPN", "ADJ") and w.key in theirs)


def _turned(mine: Word, theirs: Word) -> bool:
    if "than" not in (mine.side, theirs.side) or mine.side == theirs.side:
        return False
    return (theirs.role if mine.side == "than" else mine.role) == "party"  # a thing compared, not a quality
