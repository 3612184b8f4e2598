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

from rag_system.generation.quantities import asks_quantity, other_quantity, states_quantity
from rag_system.generation.replies import yes_then_no
from rag_system.generation.terms import (
    MARKER, WORD, ask_terms, is_yes_no, key_terms, stem, strip_markers, support, term_set)
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
    # {"sentence": i, "terms": [...], "cited": [n...]}: what the question asks, restated by the
    # sentence, that none of its cited blocks says ("salary" cited to a signature block).
    unasked: list[dict[str, Any]] = field(default_factory=list)
    # Fact-level findings of `docent_native.check_claims`: {"sentence": i, "missing": [fact text...],
    # "cited": [n...], "opposite": block sentence or None, "unmatched": a yes/no no cited sentence
    # states} per sentence that is not supported.
    claims: list[dict[str, Any]] = field(default_factory=list)
    # The question asks for a quantity ("how many", "what value") and no sentence states one.
    no_quantity: bool = False
    # The dimension the question asks for ("temperature") when the answer's numbers are all of another.
    other_quantity: str | None = None
    # The answer says nothing the question did not: every content word of it is the question's own.
    echo: bool = False

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
            if item.get("yes_then_no"):
                out.append("this sentence says yes and then the opposite: if the source says no, answer no")
            if item.get("unmatched"):
                out.append(f"no sentence of {sources} says yes or no to this: answer with the sentence that does, "
                           "or say the sources do not say")
        for item in self.unasked:
            sources = ", ".join(f"[{n}]" for n in item["cited"])
            out.append(f"{sources} does not mention {', '.join(repr(t) for t in item['words'])}: do not claim "
                       "what the sources do not say")
        if self.no_quantity:
            out.append("the question asks for a number or formula and the answer gives none: state the one the "
                       "source gives")
        if self.other_quantity:
            out.append(f"the question asks for a {self.other_quantity} and the answer gives a number of another kind: "
                       "state the one the source gives, or say the sources do not give one")
        if self.echo:
            out.append("the answer only repeats the question: say what the source says in answer to it")
        if not any(s["citations"] for s in self.sentences):
            out.append("it cites no source at all")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "unknown": self.unknown, "uncited": self.uncited,
                "bad_quotes": self.bad_quotes, "unsupported": self.unsupported, "unasked": self.unasked,
                "claims": self.claims, "no_quantity": self.no_quantity,
                "other_quantity": self.other_quantity, "echo": self.echo, "attributed": self.attributed, "sentences": len(self.sentences)}


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
        report.claims += [{"sentence": i, "cited": s["citations"], "missing": [], "opposite": None, "unmatched": False,
                           "yes_then_no": True} for i, s in enumerate(report.sentences)
                          if question and yes_then_no(question, answer[s["start"]:s["end"]])]
        report.no_quantity = bool(question) and asks_quantity(question) and not states_quantity(answer)
        report.other_quantity = other_quantity(question, answer) if question else None
        report.echo = bool(question) and echoes(question, answer, report.sentences, by_number)
        report.valid = (report.valid and not report.unsupported and not report.unasked and not report.claims
                        and not report.no_quantity and not report.other_quantity and not report.echo)
    return report


#: "Yes," or "No," before a restated question: the reply, not a word the sentence says of the documents.
_REPLY = re.compile(r"^\s*(?:yes|no)\b[\s,.;:!\u2014-]*", re.IGNORECASE)


def only_restates(question: str, sentence: str) -> bool:
    """Every content word of `sentence` is the question's own (an initialism of its words counts).

    A leading "Yes," does not make "Yes, Python keeps a registry of every instance a class has
    created [3]" say more than the question (neg_pydocs_02, where the documents say it does not).
    """
    text = _REPLY.sub("", strip_markers(sentence))
    said = set(key_terms(text)) - {stem(a.lower()) for a in _abbreviations(text, question)}
    return bool(said) and said <= term_set([question])


#: Share of a restated yes/no sentence's content words one sentence of its cited blocks must hold.
RESTATED_MIN_SUPPORT = 0.75


def echoes(question: str, answer: str, sentences: list[dict[str, Any]], blocks: dict[int, EvidenceBlock]) -> bool:
    """The answer hands the question back instead of answering it.

    Asked "what / which / how", the 1.5B model sometimes restates the question
    as a cited statement ("The round-trip time estimate should a QUIC sender
    start from before it has measured any samples [1]"): each word is in its
    block, so support and facts pass, and it says nothing; flagged when every
    sentence does. Asked yes or no, restating the question is an answer, "yes"
    ("The agent does pattern matching on the query before it asks a model to
    route it [2]", where the documents say "There is no regex or keyword stage
    in the agent"): so one sentence of a cited block must say most of it
    itself, not the block's words scattered over a paragraph.
    """
    if is_yes_no(question):
        for s in sentences:
            sentence = answer[s["start"]:s["end"]]
            cited = [blocks[n] for n in s["citations"] if n in blocks]
            if cited and only_restates(question, sentence) and _best_sentence(sentence, cited) < RESTATED_MIN_SUPPORT:
                return True
        return False
    said = [answer[s["start"]:s["end"]] for s in sentences if s["citations"]]
    return bool(said) and all(only_restates(question, sentence) for sentence in said)


def _best_sentence(sentence: str, cited: list[EvidenceBlock]) -> float:
    """The largest share of `sentence`'s content words that one sentence of the cited blocks holds."""
    best = 0.0
    for block in cited:
        text = block.source_text
        for start, end in docent_native.split_sentences(text):
            best = max(best, support(sentence, text[start:end]))
    return best


def _abbreviations(answer: str, question: str) -> set[str]:
    """The answer's initialisms of the question's own words ("RTT" for "round-trip time")."""
    words = [w for w in re.split(r"[^A-Za-z]+", question) if w]
    spelled = {"".join(w[0] for w in words[i:j]).upper()
               for i in range(len(words)) for j in range(i + 2, min(len(words), i + 6) + 1)}
    return {a for a in re.findall(r"\b[A-Z]{2,6}s?\b", answer) if a.rstrip("s") in spelled}


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
    present = term_set((located_text(b) for b in cited), camel=True)
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


#: A block that corroborates a sentence holds this share of its content words (besides all its facts):
#: the bar every citation meets. At 0.6, "... a size of 256 entries [1]" did not also cite the block
#: that says "memoised in a 256-entry lru_cache" (0.56 of its words; docs_d09).
CORROBORATION_MIN_SUPPORT = MIN_SUPPORT
#: ... and a block that states the facts a sentence's own citation lacks (`recite`).
RECITE_MIN_SUPPORT = 0.4
#: Facts specific enough that a second block stating them says the same thing (not names: a name
#: is in many blocks that say other things of it).
_SPECIFIC = frozenset({"number", "date", "identifier", "code", "quote"})


def corroborate(answer: str, blocks: list[EvidenceBlock], validation: Validation, most: int = 2,
                only: set[int] | None = None, min_support: float = CORROBORATION_MIN_SUPPORT,
                instead: bool = False) -> tuple[str, int]:
    """Also cite the other blocks that state a sentence's specific facts; return (answer, sentences changed).

    A small model cites one block of several that say the same thing, and not
    always the one a reader would check first ("frame types 0x30 and 0x31 [3]"
    cited to the IANA registry row while [1], the definition, says "the values
    0x30 and 0x31"). Every block added is checked as the model's own citation
    is: each number, date, identifier, code and quoted term of the sentence in
    it, the same polarity, and most of the sentence's words; a sentence with
    no such fact gains nothing (lexical overlap alone would cite look-alikes).
    `only`: the sentences (by index) to look at; `min_support`: the share of the sentence's words
    a block added must hold; `instead`: the blocks found replace the sentence's last citation.
    """
    edits: list[tuple[int, int, str]] = []
    for index, s in enumerate(validation.sentences):
        if not s["citations"] or (only is not None and index not in only):
            continue
        sentence = answer[s["start"]:s["end"]]
        plain = strip_markers(sentence).strip()
        markers = list(MARKER.finditer(sentence))
        if not plain or not markers:
            continue
        extra: list[int] = []
        for block in blocks:
            if block.number in s["citations"] or len(extra) >= most:
                continue
            report = docent_native.check_claims(f"{plain} [1]", [located_text(block)])
            if report and report[0]["supported"] and any(f["kind"] in _SPECIFIC for f in report[0]["facts"]) \
                    and support(plain, block.source_text) >= min_support:
                extra.append(block.number)
        if extra:
            last = markers[-1]
            marker = (f"[{', '.join(map(str, extra))}]" if instead
                      else last.group()[:-1] + "".join(f", {n}" for n in extra) + "]")
            edits.append((s["start"] + last.start(), s["start"] + last.end(), marker))
    for start, end, marker in sorted(edits, reverse=True):
        answer = answer[:start] + marker + answer[end:]
    return answer, len(edits)


def recite(answer: str, blocks: list[EvidenceBlock], validation: Validation,
           instead: bool = False) -> tuple[str, int]:
    """Cite the block that states the facts a sentence's own citation lacks; return (answer, sentences changed).

    Asked which alert number TLS assigns, the model wrote "120" and cited the
    QUIC passage about the alert ([1]) instead of the ALPN registry beside it
    that says "no_application_protocol(120)" ([4]): the fact was read, the
    number put on the wrong block. The block added must state every specific
    fact of the sentence, as in `corroborate`, and `RECITE_MIN_SUPPORT` of its
    words (a registry line, `no_application_protocol(120)`, says little else:
    3 of the sentence's 7 words); the sentence must then pass every check with
    both citations. A fact no block states stays missing, and the answer goes
    on to the model's repair round. `instead`: the block replaces the citation
    that lacked the facts (tried first: a citation should not stay on a block
    that does not say the sentence).
    """
    misplaced = {c["sentence"] for c in validation.claims
                 if c["missing"] and not c.get("opposite") and not c.get("unmatched")}
    if not misplaced:
        return answer, 0
    return corroborate(answer, blocks, validation, most=1, only=misplaced, min_support=RECITE_MIN_SUPPORT,
                       instead=instead)


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
