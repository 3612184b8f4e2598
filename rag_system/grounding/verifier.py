"""The verifier: each sentence of a text against the sources it cites, by what it says.

One verifier serves every door (Documentation/answering.md, "The verifier"): the synthesis loop
checks every draft with it, `POST /verify` and `python -m rag_system verify` check any text, and the
stream releases a sentence only once it passes. A sentence is split into clauses (`units.py`), each
clause is aligned to the source clause that carries it and compared with it (`compare.py`), and the
worst finding decides: `contradicted` (the source says otherwise: a moved word, a swapped number,
the opposite, a stronger modality or scope, a dropped condition), `unsupported` (the source does not
say it: an added fact or word, nothing cited) or `supported`.

Facts with many spellings (amounts, dates, identifiers) are also checked natively
(`docent_native.check_claims`) against the cited sources, so "$45 million" matches "$45,000,000".
Text that is not English is checked by its words and facts only (the parser reads English), and the
result says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import docent_native

from common.lexicon import WORD
from rag_system.generation.language import question_language
from rag_system.grounding.terms import MARKER, initialisms
from rag_system.grounding.compare import Alignment, align
from rag_system.grounding.findings import (
    SUPPORTED, UNSUPPORTED, Evidence, Finding, SentenceCheck, Verification, worst)
from rag_system.grounding.layout import fields, item_numbers, plain
from rag_system.grounding.links import link_findings
from rag_system.grounding.parser import Parser, parser
from rag_system.grounding.questions import plain_question
from rag_system.grounding.replies import reply_check, source_answer, split_reply
from rag_system.grounding.roots import root, synonyms
from rag_system.grounding.units import Unit, read_units
from rag_system.grounding.wording import lexical_findings


@dataclass(frozen=True)
class Source:
    """A passage a text may cite as `[n]`; `name` and `context` (its section) lend words to all of it."""

    n: int
    text: str
    name: str = ""
    context: str = ""


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    cited: tuple[int, ...]


def verify(text: str, sources: Sequence[Source], question: str = "", engine: Parser | None = None) -> Verification:
    """Every sentence of `text` against its cited sources (all of them when it cites none)."""
    numbered = {s.n: s for s in sources}
    sentences = _sentences(text, numbered)
    english = question_language(question or text) == "en"
    if not english:
        checks = tuple(_lexical(text, s, numbered) for s in sentences)
        return Verification(checks, language="other", notes=("not English: checked by its words and facts only",))
    engine = engine or parser()
    return Verification(tuple(_Checker(text, sentences, numbered, question, engine).run()))


def _sentences(text: str, numbered: dict[int, Source]) -> list[_Sentence]:
    out = []
    for start, end, cited in docent_native.parse_citations(text):
        if strip(text[start:end]).strip():
            out.append(_Sentence(start, end, tuple(dict.fromkeys(cited))))
    return out


def strip(text: str) -> str:
    return MARKER.sub(" ", text)


class _Checker:
    """One call's parses, shared by its sentences (a source sentence is parsed once)."""

    def __init__(self, text: str, sentences: list[_Sentence], numbered: dict[int, Source], question: str,
                 engine: Parser) -> None:
        self.text, self.sentences, self.numbered, self.question = text, sentences, numbered, question
        self.engine = engine

    def run(self) -> list[SentenceCheck]:
        parts = [split_reply(strip(self.text[s.start:s.end])) for s in self.sentences]
        wanted = set().union(*(_keys(body) for _, body in parts)) if parts else set()
        question = plain_question(self.question, [s.text for s in self.numbered.values()])  # in the documents' words
        if question and any(reply for reply, _ in parts):
            wanted |= _keys(question)  # a reply ("No [1].") is checked as the question, answered
        units, quotes = self._source_units(wanted)
        asked_doc = self.engine.parse([plain(question)])[0] if question else None
        asked = frozenset(_keys(self.question)) if self.question else frozenset()
        out = []
        for sentence, (_, body) in zip(self.sentences, parts):
            # Cut and read as the sources are, so a sentence quoted from a form reads as its source does.
            claim: list[Unit] = []
            for doc in self.engine.parse(fields(plain(body), claim=True)):
                claim += read_units(doc, first_ident=len(claim), first_sentence=len({u.sentence for u in claim}))
            out.append(self._check(sentence, claim, units, quotes, asked, asked_doc))
        return out

    def _source_units(self, wanted: set[str]) -> tuple[list[Unit], dict[tuple[int, int], tuple[int, int]]]:
        """The clauses of each source sentence that shares a word with the text, and of its neighbours."""
        units: list[Unit] = []
        quotes: dict[tuple[int, int], tuple[int, int]] = {}  # (source, parsed sentence) -> its native sentence
        native: dict[tuple[int, int], tuple[int, int]] = {}
        jobs: list[tuple[int, int, str]] = []
        alike = set().union(wanted, *(synonyms(k) for k in wanted))  # "sued" is read in "No litigation"
        for n, source in self.numbered.items():
            body = source.text[context_line(source):]
            offset = len(source.text) - len(body)
            spans = docent_native.split_sentences(body) or [(0, len(body))]
            items = item_numbers(plain(body))
            near = {i for i, (a, b) in enumerate(spans) if _keys(body[a:b]) & alike}
            near |= {i + d for i in near for d in (-2, -1, 1) if 0 <= i + d < len(spans)}
            for i in sorted(near):
                a, b = spans[i]
                native[(n, i)] = (offset + a, offset + b)
                jobs.extend((n, i, field) for field in fields(plain(body[a:b]), items))
        numbers: dict[int, int] = {}  # each source's sentences (as parsed) are numbered on
        for (n, i, _), doc in zip(jobs, self.engine.parse([j[2] for j in jobs])):
            first = numbers.get(n, 0)
            read = read_units(doc, source=n, first_ident=len(units), first_sentence=first)
            numbers[n] = first + len(list(doc.sents))
            for unit in read:
                quotes[(n, unit.sentence)] = native[(n, i)]
            units.extend(read)
        return units, quotes

    def _check(self, sentence: _Sentence, claim_units: list[Unit], units: list[Unit],
               quotes: dict[tuple[int, int], tuple[int, int]], asked: frozenset[str],
               asked_doc: object | None) -> SentenceCheck:
        raw = self.text[sentence.start:sentence.end]
        unknown = [n for n in sentence.cited if n not in self.numbered]
        if unknown:
            return SentenceCheck(raw, sentence.start, sentence.end, sentence.cited, UNSUPPORTED,
                                 (Finding("citation", UNSUPPORTED, f"it cites sources that do not exist: "
                                          f"{', '.join(f'[{n}]' for n in unknown)}"),))
        cited = sentence.cited or tuple(self.numbered)
        pool = [u for u in units if u.source in cited]
        context = {n: _context_keys(self.numbered[n]) for n in cited}
        reply, _ = split_reply(strip(raw))
        bare = not any(u.words for u in claim_units)  # "Yes, there is [2].": the reply is all it says
        if bare and reply and asked_doc is not None:
            claim_units = read_units(asked_doc)  # "No [1]." says the question, denied
            claim_units = [_negate(u) if reply == "no" else u for u in claim_units]
        said = frozenset(k for u in claim_units for k in u.all_keys)
        alignments = [align(u, pool, context, asked, said) for u in claim_units]
        findings = _merge_facts(_facts(raw, self.numbered, self.question) +
                                [f for a in alignments for f in a.findings] + link_findings(alignments, pool))
        if reply and asked_doc is not None:
            findings += reply_check(reply, read_units(asked_doc), pool, context, asked, bare)
        if not any(a.unit for a in alignments) and not any(u.words for u in claim_units):
            return SentenceCheck(raw, sentence.start, sentence.end, sentence.cited, SUPPORTED, tuple(findings),
                                 checked=False)
        verdict = worst([f.verdict for f in findings])
        return SentenceCheck(raw, sentence.start, sentence.end, sentence.cited, verdict, tuple(findings),
                             tuple(_evidence(alignments, quotes, self.numbered)))


def context_line(source: Source) -> int:
    """Where a source's text starts after a leading "<document> > <section>" line (0: none)."""
    first, sep, _ = source.text.partition("\n")
    if sep and (" > " in first or (source.name and first.startswith(source.name))):
        return len(first) + 1
    return 0


def _negate(unit: Unit) -> Unit:
    return replace(unit, negated=not unit.negated)


def _keys(text: str) -> set[str]:
    """The roots of its words of three letters or more, its numbers, and its two-letter initials ("IP")."""
    return {root(w) for w in WORD.findall(text) if len(w) > 2 or w.isdigit() or (len(w) == 2 and w.isupper())}


def _context_keys(source: Source) -> frozenset[str]:
    line = source.text[:context_line(source)]
    text = re.sub(r"[_./\\-]+", " ", f"{source.name} {source.context} {line}")
    return frozenset(_keys(text))


def _facts(raw: str, numbered: dict[int, Source], question: str = "") -> list[Finding]:
    """Numbers, dates, identifiers and names its cited sources do not hold (native: "$45 million" is
    "$45,000,000"). A name any source holds counts as said, and so does one the question names: it
    is what the passages were found for, not a fact the answer adds; so does a name the sources
    spell out ("GIL" where they write "Global Interpreter Lock"). A capitalised first word is not a
    name ("Since Python 3.1, ..."), unless a name goes on after it or it owns what follows ("Baker &
    Partners LLP expressed ...", "Hooli's consent ...")."""
    if not numbered or not strip(raw).strip():
        return []
    texts = [""] * max(numbered)
    for n, source in numbered.items():
        texts[n - 1] = f"{source.name}\n{source.context}\n{source.text}"
    line = raw if MARKER.search(raw) else f"{raw} [{', '.join(str(n) for n in sorted(numbered))}]"  # all of them
    first = len(line) - len(line.lstrip())
    reports = docent_native.check_claims(line, texts)
    asked = {w.lower() for w in WORD.findall(question)}
    spelled = initialisms(" ".join(texts))
    missing = list(dict.fromkeys(
        f["text"] for r in reports for f in r["facts"] if not f["found"] and not (
            f["kind"] == "name" and (f["start"] == first and not _NAMED.match(line, f["end"])
                                     or f["text"].lower() in asked
                                     or f["text"].replace(".", "") in spelled))))
    if not missing:
        return []
    return [Finding("fact", UNSUPPORTED, f"the passage does not give {', '.join(missing)}")]


#: After a capitalised first word: what makes it a name ("Baker & Partners", "Hooli's consent").
_NAMED = re.compile(r"\s*&|['’]s\b")


def _merge_facts(findings: list[Finding]) -> list[Finding]:
    """One finding for the facts a sentence's sources lack, each fact named once (the native check's first)."""
    facts = [f for f in findings if f.kind == "fact"]
    if len(facts) <= 1:
        return findings
    named = list(dict.fromkeys(x.strip() for f in facts for x in f.message.split(" give ", 1)[-1].split(", ")))
    merged = Finding("fact", UNSUPPORTED, f"the passage does not give {', '.join(named)}")
    return [merged] + [f for f in findings if f.kind != "fact"]


def _evidence(alignments: list[Alignment], quotes: dict[tuple[int, int], tuple[int, int]],
              numbered: dict[int, Source]) -> list[Evidence]:
    seen: dict[tuple[int, int], Evidence] = {}
    for a in alignments:
        if a.unit is None:
            continue
        key = (a.unit.source, a.unit.sentence)
        if key in seen or key not in quotes:
            continue
        start, end = quotes[key]
        text = numbered[a.unit.source].text
        seen[key] = Evidence(a.unit.source, " ".join(text[start:end].split()), start, end)
    return list(seen.values())


def _lexical(text: str, sentence: _Sentence, numbered: dict[int, Source]) -> SentenceCheck:
    raw = text[sentence.start:sentence.end]
    cited = sentence.cited or tuple(numbered)
    findings = lexical_findings(strip(raw), [numbered[n].text for n in cited if n in numbered])
    findings += _facts(raw, numbered)
    return SentenceCheck(raw, sentence.start, sentence.end, sentence.cited, worst([f.verdict for f in findings]),
                         tuple(findings))


def answer_to(question: str, sources: Sequence[Source], engine: Parser | None = None) -> str | None:
    """What the sources answer a yes/no question: "yes", "no", or None when they say neither
    in one clause (the question read as a claim, as a reply to it is checked)."""
    if question_language(question) != "en":
        return None
    question = plain_question(question, [s.text for s in sources])
    engine = engine or parser()
    numbered = {s.n: s for s in sources}
    checker = _Checker(question, [], numbered, question, engine)
    units, _ = checker._source_units(_keys(question))
    asked = read_units(engine.parse([plain(question)])[0])
    context = {n: _context_keys(s) for n, s in numbered.items()}
    return source_answer(asked, units, context, frozenset(_keys(question)))[0]
