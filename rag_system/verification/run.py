"""Check a text with the verifier, against the sources it cites or against support retrieved for it.

The one code path behind `POST /verify` and `python -m rag_system verify` (local or through a
running RAG API), so every door gives the same verdicts, evidence and JSON. The verifier itself
(`rag_system/grounding/verifier.py`) decides; this module only feeds it and says where its evidence
is: in index mode each quote carries its document and the page the quote is on
(`Candidate.locate`), and `sources` lists the numbered chunks so a client can open the page.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from itertools import accumulate
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rag_system.grounding.findings import (
    CONTRADICTED, SUPPORTED, UNSUPPORTED, Evidence, Finding, SentenceCheck, worst)
from rag_system.grounding.verifier import Source, verify
from rag_system.verification.request import VerifyRequest
from rag_system.verification.support import NumberedChunk, Support, retrieve_support

if TYPE_CHECKING:
    from rag_system.retrieval.engine import RetrievalEngine


@dataclass(frozen=True)
class Outcome:
    """A checked text: its sentences (offsets in the text as sent) and what they were checked against."""

    request: VerifyRequest
    sentences: tuple[SentenceCheck, ...]
    chunks: tuple[NumberedChunk, ...] = ()  # index mode: the numbered chunks
    language: str = "en"
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    timings_ms: tuple[tuple[str, float], ...] = ()

    @property
    def supported(self) -> bool:
        return all(s.supported for s in self.sentences)

    def to_json(self) -> dict[str, Any]:
        names = {s.n: s.name for s in self.request.sources}
        chunks = {c.n: c for c in self.chunks}
        if self.request.indexes:
            sources = [c.to_json() for c in self.chunks]
        else:
            sources = [{"n": s.n, "document_name": s.name or None} for s in self.request.sources]
        return {
            "mode": self.request.mode, "supported": self.supported, "language": self.language,
            "sentences": [_sentence(s, names, chunks) for s in self.sentences],
            "sources": sources, "indexes": list(self.request.indexes), "notes": list(self.notes),
            "warnings": list(self.warnings), "timings_ms": {k: round(v, 1) for k, v in self.timings_ms},
        }


def check(request: VerifyRequest, engine: RetrievalEngine | None = None) -> Outcome:
    """The request's text, sentence by sentence; index mode needs `engine` (retrieval)."""
    t0 = time.perf_counter()
    if not request.indexes:
        done = verify(request.text, request.sources, request.question)
        return Outcome(request, done.sentences, language=done.language, notes=done.notes,
                       timings_ms=(("verify_ms", _ms(t0)),))
    if engine is None:
        raise ValueError("checking against an index needs the retrieval engine")
    support = retrieve_support(request.text, request.indexes, engine)
    t1 = time.perf_counter()
    sentences, language, notes = _check_each(request, support)
    timings = (("retrieval_ms", support.retrieval_ms), ("verify_ms", _ms(t1)))
    return Outcome(request, tuple(sentences), support.chunks, language, notes, support.warnings, timings)


def _check_each(request: VerifyRequest, support: Support) -> tuple[list[SentenceCheck], str, tuple[str, ...]]:
    """Each sentence against each chunk retrieved for it, one chunk at a time; the best reading wins.

    Why one chunk at a time: a claim stitched from two passages — the subject of one, the numbers
    or the verb of another — is exactly what the verifier must catch, and against the passages
    together it can pass ("recognises 12 public holidays" found "12" in a chunk about sick leave).
    A sentence is supported when one passage carries it; else contradicted when one passage says
    otherwise; else unsupported. Everything goes to the verifier in one call (each sentence once per
    chunk, each copy citing its chunk), so the text's language is judged on the whole text (a short
    English sentence alone can read as Italian) and each source sentence is parsed once.
    """
    pieces: list[str] = []
    owners: list[tuple[int, int]] = []  # each piece: (sentence, chunk number)
    bodies: list[tuple[int, int]] = []  # each sentence's body in the text as sent
    for i, sentence in enumerate(support.sentences):
        span = support.blanked[sentence.start:sentence.end]
        first = sentence.start + len(span) - len(span.lstrip())
        bodies.append((first, first + len(span.strip())))
        for n in sentence.numbers:
            pieces.append(f"{span.strip()} [{n}]")
            owners.append((i, n))
    starts = list(accumulate((len(p) + 2 for p in pieces[:-1]), initial=0))
    done = verify("\n\n".join(pieces), [_source(c) for c in support.chunks], request.question)
    parts: dict[int, list[SentenceCheck]] = {}  # piece -> the verifier's sentences in it (one, as a rule)
    for part in done.sentences:
        parts.setdefault(bisect_right(starts, part.start) - 1, []).append(part)
    readings: dict[int, list[SentenceCheck]] = {}  # sentence -> its reading against each of its chunks
    for piece, found in sorted(parts.items()):
        readings.setdefault(owners[piece][0], []).append(whole_reading(found))
    out = []
    for i, sentence in enumerate(support.sentences):
        start, end = bodies[i]
        best = best_reading(readings.get(i, []))
        out.append(replace(best, text=request.text[start:end], start=start, end=end, cited=sentence.numbers))
    return out, done.language, done.notes


def whole_reading(parts: list[SentenceCheck]) -> SentenceCheck:
    """One reading of a sentence the verifier cut in two: the worse part decides, all findings kept."""
    if len(parts) == 1:
        return parts[0]
    checked = [p for p in parts if p.checked] or parts
    return replace(checked[0], verdict=worst([p.verdict for p in checked]),
                   findings=tuple(f for p in checked for f in p.findings),
                   evidence=tuple(e for p in checked for e in p.evidence), checked=any(p.checked for p in parts))


def best_reading(checks: list[SentenceCheck]) -> SentenceCheck:
    """The reading of a sentence that one passage gives best: supported, else contradicted, else the
    unsupported one with the fewest findings (the first retrieved on a tie)."""
    if not checks:
        return SentenceCheck("", 0, 0, (), UNSUPPORTED,
                             (Finding("retrieval", UNSUPPORTED, "nothing in the index was found for it"),))
    if all(not c.checked for c in checks):
        return checks[0]
    order = {SUPPORTED: 0, CONTRADICTED: 1, UNSUPPORTED: 2}
    return min((c for c in checks if c.checked), key=lambda c: (order[c.verdict], len(c.findings)))


def _source(chunk: NumberedChunk) -> Source:
    c = chunk.candidate
    return Source(chunk.n, c.text, c.document_name, c.heading_path)


def _sentence(s: SentenceCheck, names: dict[int, str], chunks: dict[int, NumberedChunk]) -> dict[str, Any]:
    return {"text": s.text, "start": s.start, "end": s.end, "verdict": s.verdict, "checked": s.checked,
            "cited": list(s.cited), "findings": s.messages(),
            "details": [{"kind": f.kind, "verdict": f.verdict, "message": f.message} for f in s.findings],
            "evidence": [_evidence(e, names, chunks) for e in s.evidence]}


def _evidence(e: Evidence, names: dict[int, str], chunks: dict[int, NumberedChunk]) -> dict[str, Any]:
    out: dict[str, Any] = e.to_json()
    chunk = chunks.get(e.n)
    if chunk is None:
        if names.get(e.n):
            out["document"] = names[e.n]
        return out
    c = chunk.candidate
    exact = c.text[e.start:e.end] if 0 <= e.start < e.end <= len(c.text) else e.quote
    location = c.locate(exact)
    out.update(document=c.document_name, document_id=c.document_id,
               page=location.get("page") or c.page_start or None, location=location)
    return out


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
