"""A "Yes" or "No" that opens a sentence, checked against what the source says of the question.

Why: the words after a reply can be the source's own while the reply says the opposite ("Can
parental leave be split into more than three blocks?" — "Yes, parental leave may be split into no
more than 3 separate blocks. [1]"). So the question itself is read as a claim and compared with the
sources: when they contradict it the answer is "no", when they state it the answer is "yes", and a
reply that says otherwise is contradicted. When the sources neither state nor contradict the
question, the reply is left to the rest of its sentence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from rag_system.grounding.compare import Alignment, align, readings
from rag_system.grounding.findings import CONTRADICTED, UNSUPPORTED, Finding
from rag_system.grounding.roots import named_in, root, synonyms
from rag_system.grounding.units import Unit, holds
from rag_system.grounding.words import POSSIBLE

#: "Yes," / "No." / "No —" / "Yes" alone: a reply, followed by punctuation ("No concerns raised." is a
#: statement whose subject is "no concerns").
_REPLY = re.compile(r"^\s*(yes|no)(?:\s*[,.;:!\u2014\u2013-]+\s*|\s*$)", re.IGNORECASE)
#: Findings that say the source answers the question "no".
DENIALS = frozenset({"polarity", "opposite", "comparator", "modality", "scope", "number"})


def split_reply(sentence: str) -> tuple[str | None, str]:
    """("yes" | "no" | None, the sentence after its reply)."""
    m = _REPLY.match(sentence)
    if m is None:
        return None, sentence
    return m.group(1).lower(), sentence[m.end():]


def source_answer(question: Sequence[Unit], pool: Sequence[Unit], context: dict[int, frozenset[str]],
                  asked: frozenset[str] = frozenset()) -> tuple[str | None, str]:
    """What the sources answer a yes/no question: ("yes" | "no" | None, the source clause that says so).

    Every clause of the question must be found in the sources. One the sources deny makes the
    answer "no", unless it is a condition ("If my days expire unused, do I get paid?" — "are not
    paid out on expiry" answers no, though the condition is worded otherwise there; "if I am off for
    a whole week" against "sick leave is paid for 12 weeks" denies nothing that was asked); a "yes"
    needs every clause said, as asked, in one source sentence, and not in a clause that is the
    condition of another (a word of the source's title or headings counts: "Can I backflush the
    Atlas-7 weekly?" in the Atlas-7 manual)."""
    said: str | None = None
    where = denied = ""
    unsettled = False
    places: set[tuple[int, int]] = set()  # a "yes" stitched from two sentences is no yes
    for unit in question:
        if not unit.words:
            continue
        a = align(unit, pool, context, asked)
        if a.unit is None:
            return None, ""
        # one clause says all of it, as a statement: a condition of another clause states nothing ("If
        # True (default), ProgrammingError will be raised if the connection is used by a thread other than
        # the one that created it" is no "yes" to "Can I use a connection from another thread?")
        stated = a.unit.condition is None and not a.findings and all(
            k in a.matched or named_in(k, context.get(a.unit.source, frozenset())) for k in unit.keys())
        # where the clause read first does not say it, any clause that denies it answers: "We have acted
        # as legal counsel to StartupXYZ" holds more of the question's words than "does not violate any
        # provision of the Company's organizational documents", which answers it
        others = [] if stated else readings(unit, pool, context, asked, within=math.inf)
        denial = next((r for r in [a, *others] if _denies(unit, r, question)), None)
        if denial is not None and denial.unit is not None:
            denied = denied or denial.unit.text
        elif not stated:
            unsettled = True
        else:
            said, where = "yes", a.unit.text
            places.add((a.unit.source, a.unit.sentence))
    if denied:
        return "no", denied
    return (None, "") if unsettled or len(places) > 1 else (said, where)


def _denies(asked: Unit, reading: Alignment, question: Sequence[Unit]) -> bool:
    """The clause denies what `asked` says, and is about it: a premise worded otherwise is not what was
    asked, nor is a clause that shares one word of the question ("there is no fallback reranker" for
    "Is the reranker switched on ...?"). The words shared are counted over the whole question, one at
    least of the asked clause: "Nothing in this NDA grants any rights to intellectual property" shares
    "IP" with "give TechCorp a licence to ... IP" and "NDA" with "signing the NDA", the means of it."""
    unit = reading.unit
    if unit is None or asked.condition is not None or not reading.matched & asked.keys():
        return False
    if not ({f.kind for f in reading.findings} & DENIALS or _forbidden(asked, unit)):
        return False
    shared = {w.key for clause in question for w in clause.words if holds(unit, w)}
    return len(shared) >= min(2, len(asked.keys()))


def _forbidden(asked: Unit, unit: Unit) -> bool:
    """A clause that forbids what a "Can I ...?" asks, in its own verb: "leading zeros in a decimal
    number are not allowed" for "Can I write a decimal literal with a leading zero?"; the verb asked
    ("write") is the person's, the passage rules on the thing."""
    if asked.modality != POSSIBLE:
        return False
    permits, forbids = synonyms(root("allow")), synonyms(root("forbid"))
    return unit.head in permits and unit.negated or unit.head in forbids and not unit.negated


def reply_check(reply: str, question: Sequence[Unit], pool: Sequence[Unit], context: dict[int, frozenset[str]],
                asked: frozenset[str] = frozenset(), bare: bool = False) -> list[Finding]:
    """`bare`: the sentence says nothing besides its reply ("Yes, there is [2]."), so the reply is all
    it claims: it stands only where the cited sources settle the question the same way."""
    answer, where = source_answer(question, pool, context, asked)
    if answer is None:
        return [Finding("reply", UNSUPPORTED, f"the passage does not answer the question {reply}")] if bare else []
    if answer == reply:
        return []
    return [Finding("reply", CONTRADICTED, f"the passage answers {answer}, not {reply}: \"{' '.join(where.split())}\"")]
