"""Pure-Python reference of ``docent_native.check_claims`` (the fact-level claim check).

Why: like the other references, this is the readable statement of the rules
that the Rust code (``native/src/claims.rs`` and the modules it uses) must
equal on every ``str``; the property tests hold the two equal. The rules are
documented in the stub (``native/docent_native.pyi``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eval.native_reference import parse_citations_reference, split_sentences_reference
from eval.native_reference_facts import (
    Stance,
    answer_stance,
    evidence_stance,
    prepare,
    search_text,
    sentence_facts,
    strong_share,
)
from eval.native_reference_numbers import block_dates, block_values


def _at_word_start(hay: str, needle: str) -> bool:
    at = hay.find(needle)
    while at != -1:
        if at == 0 or not hay[at - 1].isalnum():
            return True
        at = hay.find(needle, at + 1)
    return False


class _Block:
    def __init__(self, text: str) -> None:
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
    if answer.conditional or not answer.stems:
        return None
    best = agreeing = None
    for n, block in checked:
        for start, end, stance in block.sentences:
            shared = strong_share(answer, stance)
            if shared is None:
                continue
            found = (shared, {"answer_negated": answer.negated, "evidence_negated": stance.negated,
                              "block": n, "start": start, "end": end})
            if stance.negated == answer.negated and (agreeing is None or shared > agreeing[0]):
                agreeing = found
            if best is None or shared > best[0]:
                best = found
    chosen = agreeing or best
    return None if chosen is None else chosen[1]


def check_claims_reference(answer: str, blocks: Sequence[str], min_quote_chars: int = 12) -> list[dict[str, Any]]:
    """The fact-level claim check of ``answer`` against 1-based ``blocks`` (see the stub)."""
    if isinstance(blocks, str):
        raise TypeError("blocks must be a sequence of str, not a str")
    if min_quote_chars < 1:
        raise ValueError("min_quote_chars must be >= 1")
    indexes: dict[int, _Block] = {}
    reports = []
    for sentence, (start, end, cited) in enumerate(parse_citations_reference(answer)):
        checked = [n for n in cited if n <= len(blocks)]
        report: dict[str, Any] = {"sentence": sentence, "start": start, "end": end, "blocks": checked,
                                  "facts": [], "polarity": None, "supported": True}
        if checked:
            for n in checked:
                if n not in indexes:
                    indexes[n] = _Block(blocks[n - 1])
            looked = [(n, indexes[n]) for n in checked]
            prepared = prepare(answer[start:end])
            for kind, f_start, f_end, key in sentence_facts(prepared, min_quote_chars):
                holding = [n for n, block in looked if block.holds(key)]
                report["facts"].append({"kind": kind, "text": answer[start + f_start : start + f_end],
                                        "start": start + f_start, "end": start + f_end,
                                        "found": bool(holding), "cited": holding})
            polarity = _compare(answer_stance(prepared), looked)
            report["polarity"] = polarity
            mismatch = polarity is not None and polarity["answer_negated"] != polarity["evidence_negated"]
            report["supported"] = not mismatch and all(f["found"] for f in report["facts"])
        reports.append(report)
    return reports
