"""Pure-Python reference of ``docent_native.check_claims`` (the fact-level claim check).

Why: like the other references, this is the readable statement of the rules
that the Rust code (``native/src/claims.rs`` and the modules it uses) must
equal on every ``str``; the property tests hold the two equal. The rules are
documented in the stub (``native/docent_native.pyi``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from testkit.native_reference import _markers, parse_citations_reference, split_sentences_reference
from testkit.native_reference_facts import (
    Stance,
    answer_stance,
    evidence_stance,
    prepare,
    search_text,
    sentence_facts,
    strong_match,
)
from testkit.native_reference_numbers import block_dates, block_values


def _at_word_start(hay: str, needle: str) -> bool:
    at = hay.find(needle)
    while at != -1:
        if at == 0 or not hay[at - 1].isalnum():
            return True
        at = hay.find(needle, at + 1)
    return False


class _Block:
    def __init__(self, text: str) -> None:
        chars = list(text)
        for start, end, _ in _markers(text):
            chars[start:end] = " " * (end - start)
        text = "".join(chars)
        self.search = search_text(text)
        self.numbers = block_values(text)
        self.dates = block_dates(text)
        self.sentences = [(s, e, evidence_stance(text[s:e])) for s, e in split_sentences_reference(text)]

    def holds(self, key: tuple[str, Any]) -> bool:
        kind, value = key
        if kind == "values":
            return any(v in self.numbers for v in value)
        if kind == "date":
            return value in self.dates
        if kind == "text":
            return value in self.search
        return _at_word_start(self.search, value)


def _compare(answer: Stance, checked: list[tuple[int, _Block]]) -> dict[str, Any] | None:
    top: list[tuple[tuple[int, bool, bool, bool], int, int, int]] = []
    for n, block in checked:
        for start, end, stance in block.sentences:
            match = strong_match(answer, stance)
            if match is None:
                continue
            if top and match[0] > top[0][0][0]:
                top = []
            if not top or match[0] == top[0][0][0]:
                top.append((match, n, start, end))
    if not top:
        return None
    (_, a_neg, e_neg, agrees), n, start, end = next((t for t in top if t[0][3]), top[0])
    return {"answer_negated": a_neg, "evidence_negated": e_neg, "agrees": agrees, "block": n,
            "start": start, "end": end}


def _sentence_polarity(prepared: str, entities: list[tuple[int, int]],
                       checked: list[tuple[int, _Block]]) -> dict[str, Any] | None:
    first = None
    start = 0
    for end in [k for k, ch in enumerate(prepared) if ch == ";"] + [len(prepared)]:
        spans = [(s - start, e - start) for s, e in entities if start <= s and e <= end]
        found = _compare(answer_stance(prepared[start:end], spans), checked)
        if found is not None and not found["agrees"]:
            return found
        first = first or found
        start = end + 1
    return first


def check_claims_reference(answer: str, blocks: Sequence[str], min_quote_chars: int = 12) -> list[dict[str, Any]]:
    """The fact-level claim check of ``answer`` against 1-based ``blocks`` (see the stub)."""
    if isinstance(blocks, str):
        raise TypeError("blocks must be a sequence of str, not a str")
    if min_quote_chars < 1:
        raise ValueError("min_quote_chars must be >= 1")
    indexes: dict[int, _Block] = {}

    def index(n: int) -> _Block:
        if n not in indexes:
            indexes[n] = _Block(blocks[n - 1])
        return indexes[n]

    reports = []
    for sentence, (start, end, cited) in enumerate(parse_citations_reference(answer)):
        checked = [n for n in cited if n <= len(blocks)]
        report: dict[str, Any] = {"sentence": sentence, "start": start, "end": end, "blocks": checked,
                                  "facts": [], "polarity": None, "supported": True}
        if checked:
            prepared = prepare(answer[start:end])
            facts = sentence_facts(prepared, min_quote_chars)
            looked = [(n, index(n)) for n in checked]
            for kind, f_start, f_end, key in facts:
                holding = [n for n, block in looked if block.holds(key)]
                found = bool(holding) or (
                    kind == "name" and any(index(n).holds(key) for n in range(1, len(blocks) + 1)))
                report["facts"].append({"kind": kind, "text": answer[start + f_start : start + f_end],
                                        "start": start + f_start, "end": start + f_end,
                                        "found": found, "cited": holding})
            entities = [(s, e) for kind, s, e, _ in facts if kind in ("name", "identifier", "code", "quote")]
            polarity = _sentence_polarity(prepared, entities, looked)
            report["polarity"] = polarity
            mismatch = polarity is not None and not polarity["agrees"]
            report["supported"] = not mismatch and all(f["found"] for f in report["facts"])
        reports.append(report)
    return reports
