"""One claim clause against the clauses of its sources: is every word bound as the source binds it?

The claim clause is aligned to the source clause that holds most of its words (names, numbers and
the heads of its subject, verb and object counting double). Then:

* a word the clause lacks may be taken from elsewhere in the passage — a heading or field next to
  it, the sentences a pronoun refers back to, the document's name — unless the clause has a word
  of its own in that place which the claim leaves out: the claim then put the borrowed word where
  the source has another ("Bob" for the clause's "Alice", 8443 for 9443, "stable" for the
  "latest" archive, "Employees" for the director who approves). A clause coordinated with the
  aligned one and with a subject of its own lends nothing ("the backup on 9443");
* two words of the claim bound to each other, where the passage binds one of them far more
  closely to another word the claim binds elsewhere, are swapped ("StartupXYZ is the Buyer" where
  the passage writes "TechCorp ("Buyer") and StartupXYZ ("Seller")");
* a word no clause holds is added, not said (nouns weigh more than verbs and adjectives);
* polarity, opposite words, modality ("may" is not "must"), scope ("all", "only", "always" need
  their source's), comparators ("at least 3" is not "up to 3"), and a condition the source puts on
  the clause and the claim drops — read from the clause that holds the claim's verb.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_system.grounding.findings import CONTRADICTED, UNSUPPORTED, Finding
from rag_system.grounding.roots import opposites, same_meaning, synonyms
from rag_system.grounding.tokens import LIGHT
from rag_system.grounding.units import COORDINATE, LABEL, Unit, Word

#: Modal strength a claim may not exceed: a plain statement asserts as much as "must".
STRENGTH = {"may": 1, "should": 2, None: 3, "must": 3, "will": 3}
#: Universal scope words a claim needs its source to share ("each" and "any" are left out: they
#: restate "either party" and "a request" as often as they generalise).
CLAIMED_SCOPE = frozenset("all every always entire entirely whole completely fully invariably ever "
                          "unconditionally regardless absolutely universally".split())
LIGHT_KEYS = frozenset(LIGHT) | {"is", "are", "was", "were", "has", "had"}
COMPARATOR_WORDS = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than", "==": "exactly"}
#: Prefixes that turn a word into its opposite ("inaccurate", "unsupported", "non-free").
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis")
#: Words by which a text names its writer, whose name a signature may give after it.
FIRST_PERSON = frozenset("i we me us my our".split())
#: Alignment scores this close to the best are read as ties.
TIE = 0.25
#: A word this many tree steps closer to another word than the claim's partner is bound to it instead.
SWAP_MARGIN = 2


@dataclass(frozen=True)
class Alignment:
    claim: Unit
    unit: Unit | None
    matched: frozenset[str]  # claim word keys the aligned unit holds
    findings: tuple[Finding, ...]


def holds(unit: Unit, word: Word) -> bool:
    keys = unit.keys()
    if word.key in keys or any(same_meaning(word.key, k) for k in keys):
        return True
    return word.key in unit.all_keys or bool(synonyms(word.key) & unit.all_keys)


def _score(claim: Unit, unit: Unit) -> float:
    """Claim words the unit holds (names, numbers and heads double); the unit's own facts the claim
    does not state count a little against it, so the more specific of two clauses wins a tie."""
    held = sum((2.0 if w.critical else 1.0) for w in claim.words if holds(unit, w))
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
    scored = sorted(((_score(claim, u), -u.source, -u.ident, u) for u in units), key=lambda s: s[:3], reverse=True)
    if not scored or scored[0][0] <= 0:
        said = [w for w in claim.words if w.pos in ("NUM", "PROPN")] or len(claim.words) > 1
        return Alignment(claim, None, frozenset(),
                         (Finding("added", UNSUPPORTED, f"no passage says this: \"{short(claim.text)}\""),)
                         if said else ())
    # Of clauses that hold the claim's words equally well, the one that supports it is the one it
    # restates ("an implementation which does not include a particular option ... another which
    # does include the option": each relative clause has the other's words).
    tied = [s[3] for s in scored if s[0] >= scored[0][0] - TIE]
    readings = [_read(claim, unit, units, context, asked, sentence_keys) for unit in tied]
    return min(readings, key=lambda a: (len(a.findings), tied.index(a.unit)))


def _read(claim: Unit, unit: Unit, units: Sequence[Unit], context: dict[int, frozenset[str]],
          asked: frozenset[str], sentence_keys: frozenset[str]) -> Alignment:
    matched = frozenset(w.key for w in claim.words if holds(unit, w))
    findings = _bindings(claim, unit, units, matched, context.get(unit.source, frozenset()), asked)
    findings += _swaps(claim, unit, matched)
    findings += _stance(claim, _predicate_unit(claim, unit, units, matched), units, asked | sentence_keys)
    return Alignment(claim, unit, matched, tuple(findings))


def _bindings(claim: Unit, unit: Unit, units: Sequence[Unit], matched: frozenset[str],
              context: frozenset[str], asked: frozenset[str]) -> list[Finding]:
    out: list[Finding] = []
    added: list[Word] = []
    keys = claim.keys()
    own, label = _own_words(unit, units)
    antecedent = _antecedent(unit, units)
    for word in claim.words:
        if word.key in matched:
            continue
        lenders = [u for u in units if u.source == unit.source and u.ident != unit.ident and holds(u, word)]
        in_context = word.key in context or bool(synonyms(word.key) & context)
        if not lenders and not in_context:
            added.append(word)
            continue
        rival = _rival(word, own, keys) or _label_rival(word, label, keys)
        lender = min(lenders, key=lambda u: (abs(u.sentence - unit.sentence), abs(u.ident - unit.ident))) \
            if lenders else None
        if rival is not None:
            out.append(_misbound(word, rival, lender, unit))
        elif lender is not None and not in_context and not _may_lend(word, lender, unit, antecedent):
            out.append(_misbound(word, None, lender, unit))
    if added:
        out += _added(added, asked, sum(1 for w in claim.words if w.key in asked and w.pos not in ("NUM", "PROPN")))
    return out


def _own_words(unit: Unit, units: Sequence[Unit]) -> tuple[list[Word], list[Word]]:
    """The clause's own words, and the names and numbers of the label it stands under ("E11:" for
    "Replace sensor part TS-71."): a field's or an error code's label is what the sentences after it
    are about."""
    words = [w for w in unit.words if not w.inherited]
    label: list[Word] = []
    if not _heading(unit):
        labels = [u for u in units if u.source == unit.source and _heading(u)
                  and 0 < unit.sentence - u.sentence <= 3]
        if labels:
            label = [w for w in max(labels, key=lambda u: u.sentence).words if w.pos in ("PROPN", "NUM")]
    return words, label


def _heading(unit: Unit) -> bool:
    """A label that heads what follows it ("E11:", "2. DataFlow Systems"), not a statement without a
    verb ("Steam boiler overpressure.")."""
    text = unit.text.rstrip()
    if unit.kind != LABEL or ":" in text[:-1]:
        return False  # a field ("HSR Filing Fee: $30,000") names its own value only
    return text.endswith(":") or not text.endswith((".", "!", "?")) or text.rstrip(".").replace(".", "").isdigit()


def _antecedent(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """What a clause's pronoun refers back to: the nearest clause before it with a subject of its own
    that is not itself a pronoun ("Protocol version 4 was added ... It adds ... It is the default")."""
    if not unit.pronoun:
        return None
    before = [u for u in units if u.source == unit.source and u.sentence < unit.sentence
              and unit.sentence - u.sentence <= 3 and u.subject and u.predicate]
    for u in sorted(before, key=lambda u: (-u.sentence, u.ident)):
        if not u.pronoun or any(w.critical and w.pos in ("NOUN", "PROPN") and w.role == "party" for w in u.words):
            return u
    return None


def _label_rival(word: Word, label: list[Word], keys: set[str]) -> Word | None:
    """The label's own name or number where the claim gives another ("For E57, replace sensor TS-71",
    under "E11:")."""
    if word.pos not in ("PROPN", "NUM"):
        return None
    for w in label:
        if w.pos == word.pos and w.key not in keys and not any(same_meaning(w.key, k) for k in keys):
            return w
    return None


def _may_lend(word: Word, lender: Unit, unit: Unit, antecedent: Unit | None) -> bool:
    """A clause coordinated with the aligned one, in the same sentence and with a subject of its own,
    lends nothing ("the backup on 9443" to "the primary server listens on 8443"), unless the
    aligned clause refers back with a pronoun ("those at Grade 7 ..."). A number comes only from the
    clause a pronoun refers to, a label or heading beside it, or a clause attached to it ("(3)").
    A heading, a field, the clause an antecedent comes from and a condition lend other words freely."""
    distance = abs(lender.sentence - unit.sentence)
    if antecedent is not None and lender.ident == antecedent.ident:
        return True
    if lender.sentence > unit.sentence and _heading(lender) and not FIRST_PERSON & unit.all_keys:
        return False  # the heading of a later record says nothing of this one ("we" is the signatory)
    if unit.pronoun and lender.sentence == unit.sentence:
        return True
    if lender.text.rstrip().endswith(":") and lender.sentence <= unit.sentence:
        return True  # "... SETTINGS_QPACK_MAX_TABLE_CAPACITY (0x01): The default value is zero."
    if word.pos == "NUM":
        attached = lender.attached == unit.ident or unit.attached == lender.ident
        return (attached and distance == 0) or (LABEL in (lender.kind, unit.kind) and distance <= 1)
    return not (distance == 0 and lender.predicate and lender.kind != LABEL and (
        (lender.kind == COORDINATE and lender.attached == unit.ident and lender.subject) or
        (unit.kind == COORDINATE and unit.attached == lender.ident and unit.subject)))


def _rival(word: Word, own: list[Word], keys: set[str]) -> Word | None:
    """The clause's own word in the place the claim gives `word`, which the claim leaves out: a number
    for a number; a name or noun doing or undergoing what the clause says for one that does; a word
    qualifying the same noun ("latest" for "stable" archive). A field's label ("Date" of "Filing
    Date: ...") names the value, not a thing."""
    kind = _kind_of(word)
    if kind is None or not word.attach:
        return None
    for w in own:
        if w.key in keys or any(same_meaning(w.key, k) for k in keys):
            continue
        if word.phrase and w.phrase and same_meaning(word.phrase, w.phrase) and kind != "NUM" and \
                _kind_of(w) in ("NAME", "QUALITY") and any(same_meaning(w.phrase, k) for k in keys):
            return w  # another qualifier of the same noun: "the marshal format" for "the pickle format"
        if _kind_of(w) != kind:
            continue
        if not w.attach or not same_meaning(word.attach, w.attach) or not any(same_meaning(w.attach, k) for k in keys):
            continue  # said of another word, or of a word the claim does not repeat
        if kind in ("NUM", "QUALITY") or word.role == w.role or "party" not in (word.role, w.role):
            return w
    return None


def _kind_of(word: Word) -> str | None:
    if word.pos == "VERB" and word.role == "party":
        return "NAME"  # a gerund doing what the clause says ("Descaling must be performed ...")
    return {"NUM": "NUM", "PROPN": "NAME", "NOUN": "NAME", "ADJ": "QUALITY"}.get(word.pos)


def _misbound(word: Word, rival: Word | None, lender: Unit | None, unit: Unit) -> Finding:
    where = f"\"{short(unit.text)}\""
    if rival is not None:
        kind = "number" if word.pos == "NUM" else "binding"
        return Finding(kind, CONTRADICTED, f"the passage says {rival.text}, not {word.text}: {where}")
    elsewhere = f" (\"{short(lender.text)}\")" if lender is not None else ""
    return Finding("binding", CONTRADICTED,
                   f"the passage says \"{word.text}\" of another statement{elsewhere}, not in {where}")


def _swaps(claim: Unit, unit: Unit, matched: frozenset[str]) -> list[Finding]:
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
    words = [w for w in claim.words if not w.inherited and _kind_of(w) in ("NAME", "NUM")]
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
    numbers = [w for w in words if w.pos == "NUM" and not w.inherited]
    if numbers:  # numbers written as words too ("five years", "twice"), which the native check reads as words
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
    return near[0] if near else unit


def _stance(claim: Unit, unit: Unit, units: Sequence[Unit], asked: frozenset[str]) -> list[Finding]:
    out: list[Finding] = []
    held = {w.key for w in claim.words if holds(unit, w)}
    light = claim.head in LIGHT_KEYS
    if (claim.head not in held and not light) or (light and unit.head not in LIGHT_KEYS and unit.predicate
                                                   and unit.head not in claim.all_keys):
        # Its verb is not this clause's ("The gasket is part MG-311" from "The gasket (part MG-311)
        # should be replaced"): how the clause asserts its own verb says nothing of the claim —
        # unless the claim restates all the clause says: then the clause's denial holds ("there is
        # no curses module for Windows" / "the Windows distribution includes the curses module").
        out = _scope(claim, unit) + _comparators(claim, unit)
        if _denies(claim) != _denies(unit) and _restates(claim, unit) and not _unless(claim, unit, units):
            return out + [Finding("polarity", CONTRADICTED, f"the passage says the opposite: \"{short(unit.text)}\"")]
        return out + _opposites(claim, unit)
    same_verb = same_meaning(claim.head, unit.head) or (light and unit.head in LIGHT_KEYS)
    until = claim.condition in ("until", "before") and unit.negated and not claim.negated  # "until it is
    if _denies(claim) != _denies(unit) and not _unless(claim, unit, units) and not until:  # validated": not yet
        out.append(Finding("polarity", CONTRADICTED, f"the passage says the opposite: \"{short(unit.text)}\""))
    else:
        out += _opposites(claim, unit)
    ability = unit.modality == "may" and unit.ability and claim.modality is None  # "can be avoided" / "avoids"
    if same_verb and not ability and (STRENGTH[claim.modality] > STRENGTH[unit.modality] or (
            unit.modality in ("must", "will") and claim.modality in ("may", "should"))):
        out.append(Finding("modality", CONTRADICTED,
                           f"the passage says \"{unit.modality or 'it as a fact'}\", not "
                           f"\"{claim.modality or 'it as a fact'}\": \"{short(unit.text)}\""))
    out += _scope(claim, unit)
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
        against = (opposites(key) & unit.all_keys) | _prefixed(key, theirs)
        if against and not (synonyms(key) & unit.all_keys):
            return [Finding("opposite", CONTRADICTED,
                            f"the passage says \"{sorted(against)[0]}\", not \"{key}\": \"{short(unit.text)}\"")]
    return []


def _prefixed(key: str, keys: frozenset[str]) -> set[str]:
    """The words of `keys` that are `key` with a negating prefix, or `key` without one."""
    if len(key) < 4 or not key.isalpha():
        return set()
    out = {p + key for p in NEGATING_PREFIXES} | {p + "-" + key for p in NEGATING_PREFIXES}
    out |= {key[len(p):].lstrip("-") for p in NEGATING_PREFIXES if key.startswith(p) and len(key) - len(p) >= 5}
    return out & keys


def _unless(claim: Unit, unit: Unit, units: Sequence[Unit]) -> bool:
    """"not paid out unless X" says what "paid out only when X" says: the polarity flips with the
    condition's form."""
    theirs = {c.condition for c in units if c.attached == unit.ident and c.source == unit.source and c.condition}
    return ("unless" in theirs and "only" in claim.all_keys) or (unit.exclusive and "unless" in claim.all_keys)


def _scope(claim: Unit, unit: Unit) -> list[Finding]:
    if "default" in claim.partial and "default" not in unit.all_keys and not unit.partial:
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


def short(text: str, limit: int = 140) -> str:
    text = " ".join(text.split()).strip(" ,;")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
