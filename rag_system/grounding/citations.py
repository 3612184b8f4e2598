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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import docent_native

from rag_system.grounding.quantities import asks_quantity, other_quantity, states_quantity
from rag_system.grounding.terms import MARKER, is_yes_no, key_terms, stem, strip_markers, support, term_set
from rag_system.grounding.findings import SUPPORTED, SentenceCheck
from rag_system.grounding.verifier import Source
from rag_system.grounding.verifier import verify as verify_text
from rag_system.retrieval.evidence import EvidenceBlock

if TYPE_CHECKING:
    from docent_native import BadQuote, CitedSentence

ATTRIBUTION_MIN_SUPPORT = 0.75
#: Share of a sentence's content words a block must hold to be cited beside the block it cites.
MIN_SUPPORT = 0.5


@dataclass(frozen=True)
class Validation:
    valid: bool
    sentences: list[CitedSentence]  # the native split: {"start", "end", "citations"} per sentence
    unknown: list[int]
    uncited: list[int]
    bad_quotes: list[BadQuote]
    attributed: int = 0
    # The verifier's check of each sentence, in the order of `sentences` (empty when not verified).
    checks: tuple[SentenceCheck, ...] = ()
    # The question asks for a quantity ("how many", "what value") and no sentence states one.
    no_quantity: bool = False
    # The dimension the question asks for ("temperature") when the answer's numbers are all of another.
    other_quantity: str | None = None
    # The answer says nothing the question did not: every content word of it is the question's own.
    echo: bool = False

    @property
    def unsupported(self) -> list[int]:
        """Sentences the verifier did not find supported by what they cite."""
        return [i for i, c in enumerate(self.checks) if not c.supported]

    @property
    def claims(self) -> list[dict[str, Any]]:
        """Per sentence not supported: the facts its sources lack, the source sentence it contradicts,
        and every finding in plain words."""
        out = []
        for i in self.unsupported:
            c = self.checks[i]
            missing = [m for f in c.findings if f.kind == "fact" for m in f.message.split(" give ", 1)[1:]]
            opposite = next((e.quote for f in c.findings if f.kind in ("polarity", "reply") for e in c.evidence[:1]),
                            None)
            out.append({"sentence": i, "cited": list(c.cited), "verdict": c.verdict,
                        "missing": [x.strip() for m in missing for x in m.split(", ")], "opposite": opposite,
                        "unmatched": False, "findings": c.messages()})
        return out

    def with_attributed(self, count: int) -> Validation:
        return replace(self, attributed=count)

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
            c = self.checks[index]
            sources = ", ".join(f"[{n}]" for n in c.cited) or "the sources"
            said = f" ({'; '.join(c.messages())})" if c.findings else ""
            out.append(f"{sources} does not say this: \"{' '.join(strip_markers(c.text).split())}\"{said}")
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
                "bad_quotes": self.bad_quotes, "unsupported": self.unsupported, "claims": self.claims,
                "no_quantity": self.no_quantity, "other_quantity": self.other_quantity, "echo": self.echo,
                "attributed": self.attributed, "sentences": len(self.sentences),
                "checks": [{"sentence": i, "verdict": c.verdict, "findings": c.messages(),
                            "evidence": [e.to_json() for e in c.evidence]} for i, c in enumerate(self.checks)]}


def validate(answer: str, blocks: list[EvidenceBlock]) -> Validation:
    report = docent_native.validate_citations(answer, [b.source_text for b in blocks])
    return Validation(report["valid"], report["sentences"], report["unknown"], report["uncited"],
                      report["bad_quotes"])


def sources_of(blocks: list[EvidenceBlock]) -> list[Source]:
    """The blocks as the verifier reads them: numbered, with their document and section."""
    return [Source(b.number, b.source_text, b.candidate.document_name, b.candidate.heading_path) for b in blocks]


def check(answer: str, blocks: list[EvidenceBlock], verify: bool = True, question: str = "",
          whole: bool = True) -> Validation:
    """Native validation (markers, uncited sentences, quotes) and, when `verify`, the verifier's check
    of what each sentence says against the blocks it cites (rag_system/grounding/), and whether the
    answer gives what the question asks (a number, a value in its units, more than the question).
    `whole=False` checks one sentence of an answer still being written: it need not give the number
    asked for (a later sentence may), but it may not give one of another kind or only restate."""
    report = validate(answer, blocks)
    if not verify:
        return report
    verified = verify_text(answer, sources_of(blocks), question)
    by_start = {c.start: c for c in verified.sentences}
    checks = tuple(by_start.get(s["start"]) or _unchecked(answer, s) for s in report.sentences)
    no_quantity = whole and bool(question) and asks_quantity(question) and not states_quantity(answer, question)
    other = other_quantity(question, answer) if question else None
    echo = bool(question) and echoes(question, answer, report.sentences, {b.number: b for b in blocks})
    valid = report.valid and all(c.supported for c in checks) and not no_quantity and not other and not echo
    return replace(report, valid=valid, checks=checks, no_quantity=no_quantity, other_quantity=other, echo=echo)


def _unchecked(answer: str, s: CitedSentence) -> SentenceCheck:
    return SentenceCheck(answer[s["start"]:s["end"]], s["start"], s["end"], tuple(s["citations"]), SUPPORTED,
                         checked=False)


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


def echoes(question: str, answer: str, sentences: list[CitedSentence], blocks: dict[int, EvidenceBlock]) -> bool:
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


def located_text(block: EvidenceBlock) -> str:
    """A block's text with where it is (document name, section): names there count as said."""
    return f"{block.candidate.document_name}\n{block.candidate.heading_path}\n{block.source_text}"


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
