"""Checking an answer's citations, attributing uncited sentences, building citation records.

Validation itself is native (`docent_native.validate_citations`); this module
turns its report into readable findings for the repair prompt and into the
structured citations the response carries. The one thing done here in Python
is *attribution*: an uncited sentence whose content words are almost all in a
single evidence block gets that block's number. That is a check, not a guess:
the sentence must be supported by the block's text, otherwise it stays
uncited and the answer goes to repair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import docent_native

from rag_system.generation.terms import support
from rag_system.retrieval.packer import EvidenceBlock

ATTRIBUTION_MIN_SUPPORT = 0.75
#: A cited sentence whose content words are less than half in its cited blocks
#: is "unsupported": a citation that names a block but not what the block says.
MIN_SUPPORT = 0.5


@dataclass
class Validation:
    valid: bool
    sentences: list[dict[str, Any]]
    unknown: list[int]
    uncited: list[int]
    bad_quotes: list[dict[str, Any]]
    attributed: int = 0
    unsupported: list[int] = field(default_factory=list)

    def problems(self, answer: str) -> list[str]:
        """Findings phrased for the model (and for humans reading the response)."""
        out: list[str] = []
        if self.unknown:
            out.append("it cites sources that do not exist: " + ", ".join(f"[{n}]" for n in self.unknown))
        for index in self.uncited:
            s = self.sentences[index]
            out.append(f"this sentence has no citation: \"{answer[s['start']:s['end']]}\"")
        for bad in self.bad_quotes:
            out.append(f"this quote is not in the cited source: \"{bad['quote']}\"")
        for index in self.unsupported:
            s = self.sentences[index]
            out.append(f"the cited source does not say this: \"{answer[s['start']:s['end']]}\"")
        if not any(s["citations"] for s in self.sentences):
            out.append("it cites no source at all")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "unknown": self.unknown, "uncited": self.uncited,
                "bad_quotes": self.bad_quotes, "unsupported": self.unsupported, "attributed": self.attributed,
                "sentences": len(self.sentences)}


def validate(answer: str, blocks: list[EvidenceBlock]) -> Validation:
    report = docent_native.validate_citations(answer, [b.text for b in blocks])
    return Validation(report["valid"], report["sentences"], report["unknown"], report["uncited"],
                      report["bad_quotes"])


def check(answer: str, blocks: list[EvidenceBlock], verify: bool = True) -> Validation:
    """Native validation, plus (when `verify`) lexical support of each cited sentence by its blocks."""
    report = validate(answer, blocks)
    if verify:
        by_number = {b.number: b.text for b in blocks}
        for index, s in enumerate(report.sentences):
            cited = [by_number[n] for n in s["citations"] if n in by_number]
            if cited and support(answer[s["start"]:s["end"]], "\n".join(cited)) < MIN_SUPPORT:
                report.unsupported.append(index)
        report.valid = report.valid and not report.unsupported
    return report


def attribute(answer: str, blocks: list[EvidenceBlock], validation: Validation) -> tuple[str, int]:
    """Append `[n]` to uncited sentences that one block clearly supports; return (answer, count)."""
    if not validation.uncited or not blocks:
        return answer, 0
    inserts: list[tuple[int, str]] = []
    for index in validation.uncited:
        s = validation.sentences[index]
        sentence = answer[s["start"]:s["end"]]
        scores = [support(sentence, b.text) for b in blocks]
        best = max(range(len(blocks)), key=lambda i: (scores[i], -i))
        if scores[best] >= ATTRIBUTION_MIN_SUPPORT:
            inserts.append((s["end"], f" [{blocks[best].number}]"))
    fixed = answer
    for offset, marker in sorted(inserts, reverse=True):
        # Put the marker before the sentence's final punctuation when it has one.
        head = fixed[:offset]
        stripped = head.rstrip(".!?")
        cut = len(stripped) if stripped != head and stripped else offset
        fixed = fixed[:cut] + marker + fixed[cut:]
    return fixed, len(inserts)


def cited_numbers(validation: Validation) -> list[int]:
    seen: dict[int, None] = {}
    for s in validation.sentences:
        for n in s["citations"]:
            seen.setdefault(n, None)
    return list(seen)


def citation_records(answer: str, blocks: list[EvidenceBlock], validation: Validation) -> list[dict[str, Any]]:
    """One record per cited block: where it is, and the block sentence that best backs the answer."""
    by_number = {b.number: b for b in blocks}
    records: list[dict[str, Any]] = []
    for n in cited_numbers(validation):
        block = by_number.get(n)
        if block is None:
            continue
        claims = " ".join(answer[s["start"]:s["end"]] for s in validation.sentences if n in s["citations"])
        picked = docent_native.select_evidence_sentences(claims, [block.text], 1, 0.0)
        quote = block.text[picked[0][1]:picked[0][2]] if picked else block.text[:240]
        c = block.candidate
        records.append({"n": n, "chunk_id": c.chunk_id, "document_id": c.document_id,
                        "document_name": c.document_name, "page_start": c.page_start,
                        "page_end": c.page_end, "quote": quote, "location": c.locate(quote)})
    return records
