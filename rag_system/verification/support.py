"""Support for a text that cites nothing: retrieve, for each sentence, the passages that may carry it.

Why per sentence: a draft — a colleague's memo, another assistant's answer — makes claims about
several things; one search for the whole text finds the passages of its main topic and leaves the
other sentences nothing to be checked against. Each sentence is searched on its own (in every index
asked, best first across them), its top few chunks are kept, and the chunks of all sentences are
pooled and numbered once, so two sentences carried by one passage cite the same `[n]`.

The text's own `[n]` markers (from whatever wrote it) name nothing here: they are blanked, offsets
kept, before anything is searched or checked.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import docent_native

from rag_system.verification.request import MARKER

if TYPE_CHECKING:
    from rag_system.retrieval.engine import RetrievalEngine
    from rag_system.retrieval.types import Candidate

log = logging.getLogger(__name__)

#: Chunks kept per sentence (after pooling its indexes). Three cover a claim whose words sit in a
#: neighbouring chunk without drowning a short sentence in passages about something else.
PER_SENTENCE = 3
#: First-stage candidates asked per sentence and index before the best PER_SENTENCE are kept.
SEARCH_K = 10


@dataclass(frozen=True)
class NumberedChunk:
    """A retrieved chunk as the sources of the check number it."""

    n: int
    index: str
    candidate: Candidate

    def to_json(self) -> dict[str, object]:
        c = self.candidate
        return {"n": self.n, "index": self.index, "chunk_id": c.chunk_id, "document_id": c.document_id,
                "document_name": c.document_name, "page_start": c.page_start, "page_end": c.page_end,
                "heading_path": c.heading_path, "text": c.text}


@dataclass(frozen=True)
class SentenceSupport:
    """One sentence of the text (offsets in it) and the numbers of the chunks retrieved for it."""

    start: int
    end: int
    numbers: tuple[int, ...]


@dataclass(frozen=True)
class Support:
    blanked: str  # the text with its own markers replaced by spaces (same offsets)
    sentences: tuple[SentenceSupport, ...]
    chunks: tuple[NumberedChunk, ...]
    warnings: tuple[str, ...]
    retrieval_ms: float


def blank_markers(text: str) -> str:
    return MARKER.sub(lambda m: " " * len(m.group(0)), text)


def retrieve_support(text: str, indexes: tuple[str, ...], engine: RetrievalEngine) -> Support:
    """Each sentence's best chunks over `indexes`, pooled and numbered in order of first use.

    Opens every index first, so an unknown index (404) or another embedder's index (409) is refused
    before the first search.
    """
    t0 = time.perf_counter()
    for index in indexes:
        engine.table(index)
    blanked = blank_markers(text)
    options = engine.options(k=SEARCH_K)
    numbers: dict[str, NumberedChunk] = {}
    sentences: list[SentenceSupport] = []
    warnings: list[str] = []
    for start, end, _ in docent_native.parse_citations(blanked):
        query = " ".join(blanked[start:end].split())
        if not query:
            continue
        found: list[tuple[float, str, Candidate]] = []
        for index in indexes:
            result = engine.retrieve(index, query, options)
            warnings.extend(w for w in result.warnings if w not in warnings)
            ranked = result.final if result.final is not None else result.candidates
            found.extend((c.score, index, c) for c in ranked[:PER_SENTENCE])
        found.sort(key=lambda item: -item[0])
        chosen: list[int] = []
        for _, index, candidate in found:
            key = f"{index}\x00{candidate.chunk_id}"
            if key not in numbers:
                numbers[key] = NumberedChunk(len(numbers) + 1, index, candidate)
            if numbers[key].n not in chosen:
                chosen.append(numbers[key].n)
            if len(chosen) == PER_SENTENCE:
                break
        sentences.append(SentenceSupport(start, end, tuple(chosen)))
    elapsed = (time.perf_counter() - t0) * 1000
    log.debug("verify support: %d sentences, %d chunks in %.0f ms", len(sentences), len(numbers), elapsed)
    return Support(blanked, tuple(sentences), tuple(numbers.values()), tuple(warnings), elapsed)
