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

import re
from dataclasses import dataclass, field
from typing import Any

import docent_native

from rag_system.generation.terms import WORD, ask_terms, stem, support, term_set
from rag_system.retrieval.packer import EvidenceBlock

_MARKER = re.compile(r"\[\d+(?:\s*[-–,]\s*\d+)*\]")
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
    # {"sentence": i, "terms": [...], "cited": [n...]}: what the question asks, restated by the
    # sentence, that none of its cited blocks says ("salary" cited to a signature block).
    unasked: list[dict[str, Any]] = field(default_factory=list)
    # Fact-level findings of `docent_native.check_claims`: {"sentence": i, "missing": [fact text...],
    # "cited": [n...], "opposite": block sentence or None, "unmatched": a yes/no no cited sentence
    # states} per sentence that is not supported.
    claims: list[dict[str, Any]] = field(default_factory=list)
    # The question asks for a quantity ("how many", "what value") and no sentence states one.
    no_quantity: bool = False

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
        for item in self.claims:
            sources = ", ".join(f"[{n}]" for n in item["cited"])
            for fact in item["missing"]:
                out.append(f"{fact!r} is not in {sources}")
            if item["opposite"]:
                out.append(f"{sources} says the opposite: \"{item['opposite']}\"")
            if item.get("unmatched"):
                out.append(f"no sentence of {sources} says yes or no to this: answer with the sentence that does, "
                           "or say the sources do not say")
        for item in self.unasked:
            sources = ", ".join(f"[{n}]" for n in item["cited"])
            out.append(f"{sources} does not mention {', '.join(repr(t) for t in item['words'])}: do not claim "
                       "what the sources do not say")
        if self.no_quantity:
            out.append("the question asks for a number and the answer gives none: state the number the source gives")
        if not any(s["citations"] for s in self.sentences):
            out.append("it cites no source at all")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "unknown": self.unknown, "uncited": self.uncited,
                "bad_quotes": self.bad_quotes, "unsupported": self.unsupported, "unasked": self.unasked,
                "claims": self.claims, "no_quantity": self.no_quantity, "attributed": self.attributed, "sentences": len(self.sentences)}


def validate(answer: str, blocks: list[EvidenceBlock]) -> Validation:
    report = docent_native.validate_citations(answer, [b.source_text for b in blocks])
    return Validation(report["valid"], report["sentences"], report["unknown"], report["uncited"],
                      report["bad_quotes"])


def check(answer: str, blocks: list[EvidenceBlock], verify: bool = True, question: str = "") -> Validation:
    """Native validation, plus (when `verify`) lexical support of each cited sentence by its blocks
    and, given the `question`, that what a sentence restates of the question's ask is in its blocks."""
    report = validate(answer, blocks)
    if verify:
        by_number = {b.number: b for b in blocks}
        asked = set(ask_terms(question)) if question else set()
        for index, s in enumerate(report.sentences):
            cited = [by_number[n] for n in s["citations"] if n in by_number]
            if not cited:
                continue
            sentence = answer[s["start"]:s["end"]]
            if support(sentence, "\n".join(b.source_text for b in cited)) < MIN_SUPPORT:
                report.unsupported.append(index)
            lacking = _unasked(sentence, asked, cited)
            if lacking:
                report.unasked.append({"sentence": index, "words": lacking, "cited": [b.number for b in cited]})
        report.claims = claim_findings(answer, blocks)
        report.no_quantity = bool(question) and asks_quantity(question) and not states_quantity(answer)
        report.valid = (report.valid and not report.unsupported and not report.unasked and not report.claims
                        and not report.no_quantity)
    return report


_QUANTITY_QUESTION = re.compile(
    r"\b(?:how (?:many|much|long|often|large|big|far|old)|what (?:value|percentage|number|amount|fee|price|"
    r"size|length|limit|year|date|deadline)|which (?:year|date|value|number))\b", re.IGNORECASE)
_QUANTITY = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
    r"fifty|sixty|hundred|thousand|million|billion|once|twice|daily|weekly|monthly|annually|yearly|"
    r"January|February|March|April|May|June|July|August|September|October|November|December)\b", re.IGNORECASE)


def asks_quantity(question: str) -> bool:
    """"How many ...", "What value ...": an answer without a number does not answer it."""
    return bool(_QUANTITY_QUESTION.search(question))


def states_quantity(answer: str) -> bool:
    """A number, a number word, a frequency or a month, outside the citation markers."""
    return bool(_QUANTITY.search(_MARKER.sub(" ", answer)))


def claim_findings(answer: str, blocks: list[EvidenceBlock]) -> list[dict[str, Any]]:
    """The facts (numbers, dates, identifiers, names, quoted terms) a sentence states that its
    cited blocks do not, and a polarity opposite to the block sentence it restates
    (`docent_native.check_claims`, Documentation/native.md). Block n is checked with its
    document name and section, so a name that is only in a file name still counts as said."""
    if not blocks:
        return []
    numbered = {b.number: b for b in blocks}
    texts = [located_text(numbered[n]) if n in numbered else "" for n in range(1, max(numbered) + 1)]
    out: list[dict[str, Any]] = []
    for report in docent_native.check_claims(answer, texts):
        # "Yes, ..."/"No, ..." with no cited sentence close enough to compare its polarity with: the
        # model asserted an answer nothing cited states (rfc negation rows: "Yes, QUIC stateless resets
        # are cryptographically protected [1]"). Of the claims gold set's 9 correct yes/no sentences,
        # one goes to the repair round for it.
        unmatched = bool(report["blocks"]) and report["polarity"] is None and \
            bool(_YES_NO.match(answer[report["start"]:report["end"]]))
        if report["supported"] and not unmatched:
            continue
        polarity = report["polarity"]
        opposite = None
        if polarity is not None and polarity["answer_negated"] != polarity["evidence_negated"]:
            opposite = " ".join(texts[polarity["block"] - 1][polarity["start"]:polarity["end"]].split())
        out.append({"sentence": report["sentence"], "cited": list(report["blocks"]),
                    "missing": [f["text"] for f in report["facts"] if not f["found"]], "opposite": opposite,
                    "unmatched": unmatched})
    return out


_YES_NO = re.compile(r"\s*(?:yes|no)\b(?!\s+(?:more|less|later|earlier|longer|fewer)\b)", re.IGNORECASE)


def located_text(block: EvidenceBlock) -> str:
    """A block's text with where it is (document name, section): names there count as said."""
    return f"{block.candidate.document_name}\n{block.candidate.heading_path}\n{block.source_text}"


def _unasked(sentence: str, asked: set[str], cited: list[EvidenceBlock]) -> list[str]:
    """The question's ask words a sentence restates when most of them are missing from its blocks.

    "The annual salary of James Mitchell is $415,550 [1]", cited to a
    signature block: both of "annual", "salary" are missing -> flagged. A
    sentence that echoes the question's scaffolding ("the peer is *supposed*
    to assume a default value of 3 [1]") while its block holds the rest of
    what it restates (peer, assume, value) is not: on the rfc gold set that
    one word sent right model answers to the repair round and then to a
    quote. So: flagged when more than half of the restated ask stems are
    absent from every cited block (and its document name and section).
    """
    if not asked:
        return []
    present = term_set(located_text(b) for b in cited)
    restated: dict[str, str] = {}
    for word in WORD.findall(sentence):
        key = stem(word.lower())
        if key in asked:
            restated.setdefault(key, word.lower())
    missing = [word for key, word in restated.items() if key not in present]
    return missing if 2 * len(missing) > len(restated) else []


def attribute(answer: str, blocks: list[EvidenceBlock], validation: Validation) -> tuple[str, int]:
    """Append `[n]` to uncited sentences that one block clearly supports; return (answer, count)."""
    if not validation.uncited or not blocks:
        return answer, 0
    inserts: list[tuple[int, str]] = []
    for index in validation.uncited:
        s = validation.sentences[index]
        sentence = answer[s["start"]:s["end"]]
        scores = [support(sentence, b.source_text) for b in blocks]
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
        source = block.source_text
        picked = docent_native.select_evidence_sentences(claims, [source], 1, 0.0)
        quote = source[picked[0][1]:picked[0][2]] if picked else source[:240]
        c = block.candidate
        records.append({"n": n, "chunk_id": c.chunk_id, "document_id": c.document_id,
                        "document_name": c.document_name, "page_start": c.page_start,
                        "page_end": c.page_end, "quote": quote, "location": c.locate(quote)})
    return records
