"""How the claim clause asserts what it says, against how its source clause does: polarity,
opposite words, modality, scope, comparators and conditions.

Why apart from the binding check: these are read from the clause that holds the claim's verb,
which need not be the clause that holds most of its words, and each has its own way of being
restated ("not paid out unless X" says "paid out only when X"; "leaves out an option" says "does
not include" it).
"""

from __future__ import annotations

from collections.abc import Sequence

from common.lexicon import STOP_WORDS
from rag_system.grounding.findings import CONTRADICTED, Finding, short
from rag_system.grounding.roots import opposites, same_meaning, synonyms
from rag_system.grounding.units import LIGHT_KEYS, Unit, holds

#: Modal strength a claim may not exceed: a plain statement asserts as much as "must".
STRENGTH = {"may": 1, "should": 2, None: 3, "must": 3, "will": 3}
#: Universal scope words a claim needs its source to share ("each" and "any" are left out: they
#: restate "either party" and "a request" as often as they generalise).
CLAIMED_SCOPE = frozenset("all every always entire entirely whole completely fully invariably ever "
                          "unconditionally regardless absolutely universally".split())
COMPARATOR_WORDS = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than", "==": "exactly"}
#: Prefixes that turn a word into its opposite ("inaccurate", "unsupported", "non-free").
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")


def stance_findings(claim: Unit, unit: Unit, units: Sequence[Unit], asked: frozenset[str],
                    said: frozenset[str] = frozenset()) -> list[Finding]:
    """`asked`: keys of the question and of the whole claim sentence; `said`: of the claim sentence."""
    out: list[Finding] = []
    held = {w.key for w in claim.words if holds(unit, w)}
    light = claim.head in LIGHT_KEYS
    aside = not same_meaning(claim.head, unit.head) and any(
        w.aside and same_meaning(w.key, claim.head) for w in unit.words)  # "do not try to install ... using X"
    held |= {claim.head} if same_meaning(claim.head, unit.head) else set()  # "use", not a content word
    if (claim.head not in held and not light) or aside or (
            light and unit.head not in LIGHT_KEYS and unit.predicate and unit.head not in claim.all_keys):
        # Its verb is not this clause's ("The gasket is part MG-311" from "The gasket (part MG-311)
        # should be replaced"): how the clause asserts its own verb says nothing of the claim —
        # unless the claim restates all the clause says: then the clause's denial holds ("there is
        # no curses module for Windows" / "the Windows distribution includes the curses module").
        out = _scope(claim, unit, units) + _comparators(claim, unit)
        if _denies(claim) != _denies(unit) and _restates(claim, unit) and not _unless(claim, unit, units, said):
            return out + [Finding("polarity", CONTRADICTED, f"the passage says the opposite: \"{short(unit.text)}\"")]
        return out + _opposites(claim, unit)
    same_verb = same_meaning(claim.head, unit.head) or (light and unit.head in LIGHT_KEYS)
    until = claim.condition in ("until", "before") and unit.negated and not claim.negated  # "until it is
    if _denies(claim) != _denies(unit) and not _unless(claim, unit, units, said) and not until:  # validated": not yet
        out.append(Finding("polarity", CONTRADICTED, f"the passage says the opposite: \"{short(unit.text)}\""))
    else:
        out += _opposites(claim, unit)
    ability = unit.modality == "may" and unit.ability and claim.modality is None  # "can be avoided" / "avoids"
    named = claim.modality is None and unit.modality in claim.all_keys  # "SHOULD means ...": the word, named
    if same_verb and not ability and not named and (STRENGTH[claim.modality] > STRENGTH[unit.modality] or (
            unit.modality in ("must", "will") and claim.modality in ("may", "should"))):
        out.append(Finding("modality", CONTRADICTED,
                           f"the passage says \"{unit.modality or 'it as a fact'}\", not "
                           f"\"{claim.modality or 'it as a fact'}\": \"{short(unit.text)}\""))
    out += _scope(claim, unit, units)
    out += _comparators(claim, unit)
    out += _conditions(claim, unit, units, asked)
    return out


def _denies(unit: Unit) -> bool:
    """The clause denies what it names: negated, or a verb that denies by itself, not both."""
    return unit.negated != unit.privative


def _restates(claim: Unit, unit: Unit) -> bool:
    """The claim says what the clause says, in other words for its verb: it holds the clause's verb,
    or every name and noun the clause binds ("It is **not** the SQLite message history")."""
    if any(same_meaning(unit.head, w.key) for w in claim.words) or unit.head in claim.all_keys:
        return unit.head not in LIGHT_KEYS
    said = claim.keys() | set(claim.all_keys)
    own = [w for w in unit.words if not w.inherited and w.critical and w.pos in ("NOUN", "PROPN", "NUM")]
    return bool(own) and all(w.key in said or synonyms(w.key) & said for w in own)


def _opposites(claim: Unit, unit: Unit) -> list[Finding]:
    said = {w.key for w in claim.words if not w.inherited} | {k for k in claim.all_keys if opposites(k)}
    theirs = unit.keys(own_only=True)
    for key in said - unit.all_keys:
        against = {o for o in (opposites(key) & unit.all_keys) | _prefixed(key, theirs) if _said_of_alike(claim, key, unit, o)}
        if against and not (synonyms(key) & unit.all_keys):
            return [Finding("opposite", CONTRADICTED,
                            f"the passage says \"{sorted(against)[0]}\", not \"{key}\": \"{short(unit.text)}\"")]
    return []


def _said_of_alike(claim: Unit, key: str, unit: Unit, other: str) -> bool:
    """Opposite modifiers contradict only when said of the same thing: "another day off" is not denied
    by "a substitute day off within the same quarter". Only for modifiers the parse keeps out of the
    content words ("same", "another"), each said of the word after it; a content word's attachment
    varies with the parse ("the maximum of the values" against "the minimum of the values" did), so
    content words, and unknown followers, count as said of the same thing."""
    if any(w.key == key for w in claim.words) or any(w.key == other for w in unit.words):
        return True
    mine, theirs = _said_before(claim, key), _said_before(unit, other)
    return not mine or not theirs or bool(mine & theirs) or any(synonyms(a) & theirs for a in mine)


def _said_before(unit: Unit, key: str) -> set[str]:
    """The content words that follow `key` in the unit ("day" for "another" in "another day off")."""
    after = {k.split("-", 1)[1] for k in unit.all_keys if k.startswith(key + "-") and k.count("-") == 1}
    return {k for k in after if len(k) >= 3 and k.isalpha() and k not in STOP_WORDS}


def _prefixed(key: str, keys: set[str] | frozenset[str]) -> set[str]:
    """The words of `keys` that are `key` with a negating prefix, or `key` without one."""
    if len(key) < 4 or not key.isalpha():
        return set()
    out = {p + key for p in NEGATING_PREFIXES} | {p + "-" + key for p in NEGATING_PREFIXES}
    out |= {key[len(p):].lstrip("-") for p in NEGATING_PREFIXES if key.startswith(p) and len(key) - len(p) >= 5}
    return out & keys


def _unless(claim: Unit, unit: Unit, units: Sequence[Unit], said: frozenset[str]) -> bool:
    """"not paid out unless X" says what "paid out only when X" says: the polarity flips with the
    condition's form."""
    theirs = {c.condition for c in units if c.attached == unit.ident and c.source == unit.source and c.condition}
    return ("unless" in theirs and "only" in claim.all_keys | said) or (unit.exclusive and "unless" in claim.all_keys)


def _scope(claim: Unit, unit: Unit, units: Sequence[Unit] = ()) -> list[Finding]:
    around = [u for u in units if u.source == unit.source and abs(u.sentence - unit.sentence) <= 1]
    if "default" in claim.partial and "by default" in claim.text.lower() and "default" not in unit.all_keys \
            and not unit.partial and not any("default" in u.all_keys for u in around):
        # "by default" added ("the default value" says nothing of the kind; a "By default, ..." in the
        # sentence beside the clause says it of what the claim combines)
        return [Finding("scope", CONTRADICTED, f"the passage does not say \"by default\": \"{short(unit.text)}\"")]
    if claim.exclusive and not unit.exclusive and "only" in claim.all_keys:
        return [Finding("scope", CONTRADICTED, f"the passage does not say \"only\": \"{short(unit.text)}\"")]
    claimed = (claim.universal & CLAIMED_SCOPE) - unit.universal
    if claimed and not unit.universal & CLAIMED_SCOPE:
        word = sorted(claimed)[0]
        partial = f"it says \"{sorted(unit.partial)[0]}\"" if unit.partial else "it does not say so"
        return [Finding("scope", CONTRADICTED, f"the passage does not say \"{word}\" ({partial}): "
                                               f"\"{short(unit.text)}\"")]
    if claim.universal & {"never", "none", "nothing"} and not unit.negated and not unit.universal:
        return [Finding("scope", CONTRADICTED, f"the passage does not say \"never\": \"{short(unit.text)}\"")]
    return []


def _comparators(claim: Unit, unit: Unit) -> list[Finding]:
    said = dict(unit.comparators)
    for number, op in claim.comparators:
        if number not in said or op == "=":
            continue
        if said[number] != op and not (op == "==" and said[number] == "="):
            theirs = COMPARATOR_WORDS.get(said[number], "")
            return [Finding("comparator", CONTRADICTED,
                            f"the passage says {theirs + ' ' if theirs else ''}{number}, not "
                            f"{COMPARATOR_WORDS[op]} {number}")]
    return []


def _conditions(claim: Unit, unit: Unit, units: Sequence[Unit], asked: frozenset[str]) -> list[Finding]:
    """A condition the source puts on the clause ("only if ...", "unless ...") that the claim drops."""
    heads = {unit.ident} | ({unit.attached} if unit.kind == "coordinate" and unit.attached is not None else set())
    for cond in units:
        if cond.source != unit.source or cond.condition is None or cond.attached not in heads:
            continue
        keys = cond.keys(own_only=True)
        if not keys or keys & (claim.all_keys | asked) or any(synonyms(k) & (claim.all_keys | asked) for k in keys):
            continue
        return [Finding("condition", CONTRADICTED,
                        f"the passage says this only {cond.condition} {short(_after_mark(cond))}")]
    return []


def _after_mark(unit: Unit) -> str:
    words = unit.text.split()
    return " ".join(words[1:]) if words and words[0].lower().strip(",") == unit.condition else unit.text
