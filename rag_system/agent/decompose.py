"""Query decomposition: split a compound question into at most three.

Why: "What is X and how does Y work?" asks two things whose evidence lives in
different places; one embedding of the whole sentence finds neither well. The
pipeline pools the first stage over the parts, reranks once and synthesises
once. Splitting an ordinary question wrongly ("terms and conditions") costs
recall, so the rules only split on clear signals:

- two or more question marks ("X? Also, Y?");
- "and" followed by a new question ("... and how does ...", "... and is there ...");
- comparisons ("compare A and B", "difference between A and B", "A vs B"):
  the original question plus one question about each side.

A later part that says "it"/"they" gets the first part's subject when that
subject is recognised ("What is QUIC and how does it handle loss?").
An optional LLM is asked only when the rules found nothing but the question
looks compound, and its parts are kept only if they stay on the question's
own words.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Literal

from rag_system.agent.text import as_question, content_words, question_subject, strip_question, \
    substitute_pronoun
from rag_system.agent.types import TextGenerator, ask_generator

log = logging.getLogger(__name__)

Method = Literal["none", "rules", "llm"]
MAX_PARTS = 3


@dataclass(frozen=True)
class Decomposition:
    """`parts` is `[query]` when nothing was split (method "none")."""

    parts: list[str] = field(default_factory=list)
    method: Method = "none"

    @property
    def is_compound(self) -> bool:
        return len(self.parts) > 1


_WH = r"(?:what|how|why|when|where|who|which|whose|whom)"
_AUX_SUBJ = (r"(?:(?:is|are|was|were|does|do|did|can|could|should|will|would|must|has|have)\s+"
             r"(?:there|it|they|i|we|you|he|she|the|a|an|this|that|these|those|my|our|your|its|their)\b)")
_IMPERATIVE = r"(?:explain|describe|summari[sz]e|define)\b"
_AND_SPLIT = re.compile(rf"(?:\s*,?\s+(?:and|and also|also|as well as|plus)\s+|\s*;\s*(?:and\s+|also\s+)?)"
                        rf"(?={_WH}\b|{_AUX_SUBJ}|{_IMPERATIVE})", re.I)
_LEAD = re.compile(r"^(?:and|also|plus|additionally|then|so|furthermore|moreover|next)\b[,\s]*", re.I)
_STARTS_QUESTION = re.compile(
    rf"^(?:{_WH}|is|are|was|were|does|do|did|can|could|should|will|would|must|has|have|explain|describe|"
    r"list|tell|give|summari[sz]e|define|show|name)\b", re.I)

_ASPECT = r"(?:\s+(?:in terms of|regarding|with respect to|with regard to|when it comes to)\s+(?P<aspect>.+?))?"
_COMPARE = (
    re.compile(rf"^(?:please\s+)?(?:compare|contrast)\s+(?P<a>.+?)\s+(?:and|with|to|vs\.?|versus|against)\s+"
               rf"(?P<b>.+?){_ASPECT}$", re.I),
    re.compile(rf"^(?:what(?:'s| is| are| were| was)|explain|describe|list)\s+(?:the\s+)?(?:main\s+|key\s+|major\s+)?"
               rf"(?:difference|differences|distinction|similarities)\s+between\s+(?P<a>.+?)\s+and\s+"
               rf"(?P<b>.+?){_ASPECT}$", re.I),
    re.compile(rf"^how\s+(?:does|do|is|are)\s+(?P<a>.+?)\s+(?:differ from|compare to|compare with|"
               rf"different from|compared to|compared with)\s+(?P<b>.+?){_ASPECT}$", re.I),
    re.compile(rf"^(?P<a>[\w.+#/-]+(?:\s+[\w.+#/-]+){{0,3}})\s+(?:vs\.?|versus)\s+"
               rf"(?P<b>[\w.+#/-]+(?:\s+[\w.+#/-]+){{0,3}}){_ASPECT}$", re.I),
)


def decompose(query: str, generator: TextGenerator | None = None, max_parts: int = MAX_PARTS) -> Decomposition:
    """Split `query` into at most `max_parts` standalone questions, or keep it whole."""
    query = (query or "").strip()
    max_parts = max(1, min(max_parts, MAX_PARTS))
    if not query or max_parts == 1:
        return Decomposition([query] if query else [], "none")
    parts = _rule_parts(query, max_parts)
    if parts:
        return Decomposition(parts, "rules")
    if generator is not None and _looks_compound(query):
        llm_parts = _llm_parts(query, generator, max_parts)
        if llm_parts:
            return Decomposition(llm_parts, "llm")
    return Decomposition([query], "none")


def _rule_parts(query: str, max_parts: int) -> list[str] | None:
    compared = _compare_parts(query)
    if compared:
        return compared if max_parts >= 3 else compared[1:]
    return _question_mark_parts(query, max_parts) or _and_parts(query, max_parts)


def _compare_parts(query: str) -> list[str] | None:
    body = strip_question(query)
    for pattern in _COMPARE:
        match = pattern.match(body)
        if not match:
            continue
        a, b = match.group("a").strip(" ,"), match.group("b").strip(" ,")
        aspect = (match.groupdict().get("aspect") or "").strip(" ,")
        # "compare the terms and conditions of A and B": which "and" splits is unclear.
        if any(re.search(r"\b(?:and|vs|versus)\b", side, re.I) for side in (a, b)) or not a or not b:
            return None
        if not content_words(a) or not content_words(b):
            return None
        def about(side: str) -> str:
            return f"What is the {aspect} of {side}?" if aspect else f"What is {side}?"

        return [query, about(a), about(b)]
    return None


def _question_mark_parts(query: str, max_parts: int) -> list[str] | None:
    segments = [s.strip() for s in re.findall(r"[^?]+\?", query)]
    questions = [_LEAD.sub("", s).strip() for s in segments]
    questions = [q for q in questions if len(q.split()) >= 2 and content_words(q)]
    if len(questions) < 2:
        return None
    return _finish(questions, max_parts)


def _and_parts(query: str, max_parts: int) -> list[str] | None:
    body = strip_question(query)
    if not _STARTS_QUESTION.match(body):
        return None
    pieces = [p.strip(" ,;") for p in _AND_SPLIT.split(body)]
    # A later piece of under four words ("... and which for backups") elides too
    # much to stand alone, unless it has its own subject ("... and is it refundable").
    if len(pieces) < 2 or len(pieces[0].split()) < 2:
        return None
    if any(len(p.split()) < 3 or (len(p.split()) == 3 and not re.match(_AUX_SUBJ, p, re.I)) for p in pieces[1:]):
        return None
    if not all(content_words(p) for p in pieces):
        return None
    return _finish(pieces, max_parts)


def _finish(pieces: list[str], max_parts: int) -> list[str]:
    """Cap the count (the rest joins the last part), carry the subject, format as questions."""
    if len(pieces) > max_parts:
        pieces = pieces[:max_parts - 1] + [" ".join(strip_question(p) + "?" for p in pieces[max_parts - 1:])]
    subject = question_subject(pieces[0]) or _named(pieces[0])
    out = [as_question(pieces[0])]
    for piece in pieces[1:]:
        if subject and not question_subject(piece):
            piece = substitute_pronoun(piece, subject) or piece
        out.append(as_question(piece) if "?" not in strip_question(piece) else piece.strip())
    return out


def _named(question: str) -> str | None:
    """The first name in a question ("What does Acme charge") when no subject pattern matched:
    a later "they" most likely means it, and a sub-query without it searches for nothing."""
    match = re.search(r"(?<=\s)[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3}", question)
    return match.group(0) if match else None


def _looks_compound(query: str) -> bool:
    """Worth asking an LLM: long, with a conjunction or clause break the rules did not split."""
    return len(query.split()) >= 10 and bool(re.search(r"\b(?:and|also|as well as|plus)\b|;", query, re.I))


_PROMPT = """Split the user's question into separate standalone search questions ONLY if it asks \
about several different things. Keep the user's words. Write one question per line, at most {n} lines. \
If it asks about one thing, write the question unchanged on one line.

Question: {query}
Questions:
"""


def _llm_parts(query: str, generator: TextGenerator, max_parts: int) -> list[str] | None:
    raw = ask_generator(generator, _PROMPT.format(n=max_parts, query=query), 120, "decompose")
    if raw is None:
        return None
    lines = [re.sub(r"^\s*(?:[-*•]|\d+[.)]|q\d*[:.])\s*", "", line, flags=re.I).strip() for line in raw.splitlines()]
    parts = [line for line in lines if line]
    if not validate_parts(query, parts, max_parts):
        log.debug("decompose: discarded LLM parts %r", parts[:5])
        return None
    return [as_question(p) for p in parts]


def validate_parts(query: str, parts: list[str], max_parts: int = MAX_PARTS) -> bool:
    """LLM parts are usable when 2..max_parts distinct questions stay on the query's words.

    Each part must be mostly the query's own content words (at most one new
    word: small models drift), and together they must cover most of them.
    """
    if not 2 <= len(parts) <= max_parts:
        return False
    original = set(content_words(query))
    if not original:
        return False
    covered: set[str] = set()
    seen: set[str] = set()
    for part in parts:
        words = content_words(part)
        key = " ".join(words)
        if len(part) > 2 * len(query) or len(words) < 1 or key in seen:
            return False
        seen.add(key)
        if len([w for w in words if w not in original]) > 1 or not original.intersection(words):
            return False
        covered.update(original.intersection(words))
    return len(covered) >= 0.7 * len(original)
