"""Context expansion: widen each selected chunk with its neighbours in the document.

Why: a chunk is sized for the embedder, not for answering; the sentence that
makes a passage intelligible is often in the chunk before or after. Each
candidate becomes one passage spanning chunk_index i-window..i+window of its
document. Passages whose windows overlap are merged (at the better rank), so
the LLM never reads the same text twice and citations point at one block.
All neighbours come from ONE filtered table query per call.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from rag_system.chunking.sentences import split_sentences
from rag_system.indexing.store import ChunkTable, sql_string
from rag_system.retrieval.context_line import context_prefixes
from rag_system.retrieval.types import Candidate

log = logging.getLogger(__name__)

NEIGHBOUR_COLUMNS = ["chunk_id", "document_id", "document_name", "chunk_index", "page_start", "page_end",
                     "heading_path", "block_type", "text", "metadata"]
#: How many trailing sentences of a chunk may be repeated at the start of the next.
MAX_OVERLAP_SENTENCES = 3


class ExpansionError(ValueError):
    """The expansion window is unusable."""


@dataclass
class _Group:
    """Candidates of one document whose windows overlap, and the span they cover."""

    document_id: str
    lo: int
    hi: int
    members: list[tuple[int, Candidate]] = field(default_factory=list)  # (original rank, candidate)

    @property
    def best(self) -> tuple[int, Candidate]:
        return min(self.members, key=lambda m: m[0])


def expand_neighbours(table: ChunkTable, candidates: list[Candidate], window: int) -> list[Candidate]:
    """One candidate per merged span, ordered by the best original rank in it.

    The result keeps the best member's identity and scores (chunk_id,
    chunk_index, ranks); its text spans the window, its pages are widened,
    and its metadata JSON gains `span` ([lo, hi] chunk indexes),
    `span_chunk_ids` and `merged_chunk_ids` (the candidates merged into it).
    Chunks missing from the table (deleted meanwhile) are simply skipped.
    """
    if window < 0:
        raise ExpansionError(f"expansion window must be >= 0, got {window}")
    if not candidates:
        return []
    groups = _groups(candidates, window)
    rows = _fetch(table, groups) if window > 0 else {}
    out = [_merge(group, rows) for group in sorted(groups, key=lambda g: g.best[0])]
    log.debug("expanded %d candidates into %d passages (window %d)", len(candidates), len(out), window)
    return out


def _groups(candidates: list[Candidate], window: int) -> list[_Group]:
    by_doc: dict[str, list[tuple[int, Candidate]]] = {}
    for rank, cand in enumerate(candidates):
        by_doc.setdefault(cand.document_id, []).append((rank, cand))
    groups: list[_Group] = []
    for document_id, members in by_doc.items():
        members.sort(key=lambda m: (m[1].chunk_index, m[0]))
        current: _Group | None = None
        for rank, cand in members:
            lo, hi = max(0, cand.chunk_index - window), cand.chunk_index + window
            if current is not None and lo <= current.hi:  # windows share at least one chunk
                current.hi = max(current.hi, hi)
                current.members.append((rank, cand))
                continue
            current = _Group(document_id, lo, hi, [(rank, cand)])
            groups.append(current)
    return groups


def neighbour_filter(groups: list[tuple[str, int, int]]) -> str:
    """`(document_id = 'x' AND chunk_index BETWEEN a AND b) OR ...`, values quoted."""
    clauses = [f"(document_id = {sql_string(doc)} AND chunk_index BETWEEN {int(lo)} AND {int(hi)})"
               for doc, lo, hi in groups]
    return " OR ".join(clauses) if clauses else "false"


def _fetch(table: ChunkTable, groups: list[_Group]) -> dict[tuple[str, int], dict[str, Any]]:
    where = neighbour_filter([(g.document_id, g.lo, g.hi) for g in groups])
    rows = table.table.search().where(where).select(NEIGHBOUR_COLUMNS).limit(None).to_list()
    return {(r["document_id"], int(r["chunk_index"])): r for r in rows}


@dataclass(frozen=True)
class _Piece:
    index: int
    chunk_id: str
    text: str
    page_start: int
    page_end: int
    heading_path: str


def _merge(group: _Group, rows: dict[tuple[str, int], dict[str, Any]]) -> Candidate:
    best = group.best[1]
    own = {c.chunk_index: c for _, c in group.members}
    span: list[_Piece] = []
    for index in range(group.lo, group.hi + 1):
        src: Candidate | dict[str, Any] | None = own.get(index) or rows.get((group.document_id, index))
        if isinstance(src, Candidate):
            span.append(_Piece(index, src.chunk_id, src.text, src.page_start, src.page_end, src.heading_path))
        elif src is not None:
            span.append(_Piece(index, src["chunk_id"], src["text"], int(src["page_start"]),
                               int(src["page_end"]), src["heading_path"] or ""))
    text = span[0].text
    for prev, nxt in zip(span, span[1:]):
        text = _join(text, prev.text, nxt.text, context_prefixes(best.document_name, nxt.heading_path))
    metadata = _metadata(best.metadata, {
        "span": [span[0].index, span[-1].index],
        "span_chunk_ids": [p.chunk_id for p in span],
        "merged_chunk_ids": [c.chunk_id for _, c in sorted(group.members, key=lambda m: m[0])],
    })
    return replace(best, text=text, page_start=min(p.page_start for p in span),
                   page_end=max(p.page_end for p in span), metadata=metadata)


def _join(merged: str, prev: str, nxt: str, prefixes: set[str]) -> str:
    """Append `nxt` to `merged`, dropping a repeated context line and the sentence overlap."""
    first_line, sep, rest = nxt.partition("\n")
    if sep and first_line in prefixes and prev.startswith(first_line + "\n"):
        nxt, prev = rest, prev[len(first_line) + 1:]
    overlap = overlap_length(prev, nxt)
    remainder = nxt[overlap:]
    tail = remainder.lstrip()
    if not tail:
        return merged
    gap = remainder[:len(remainder) - len(tail)]
    joiner = " " if overlap and "\n" not in gap else "\n"
    return f"{merged}{joiner}{tail}"


def overlap_length(prev: str, nxt: str) -> int:
    """Length of the prefix of `nxt` that repeats `prev`'s last sentence(s), else 0.

    The chunker carries whole sentences into the next chunk with the same
    separators, so the repeat is an exact string; only a repeat that ends at
    a boundary of `nxt` (whitespace or its end) counts.
    """
    starts = _sentence_starts(prev)[-MAX_OVERLAP_SENTENCES:]
    for start in starts:  # earliest start first: the longest overlap wins
        tail = prev[start:].rstrip()
        if tail and nxt.startswith(tail) and (len(nxt) == len(tail) or nxt[len(tail)].isspace()):
            return len(tail)
    return 0


def _sentence_starts(text: str) -> list[int]:
    starts: list[int] = []
    cursor = 0
    for sentence in split_sentences(text):
        found = text.find(sentence, cursor)
        if found < 0:
            continue
        starts.append(found)
        cursor = found + len(sentence)
    return starts


def _metadata(raw: str, extra: dict[str, Any]) -> str:
    try:
        data = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        data = {}
    if not isinstance(data, dict):
        data = {"original": data}
    data.update(extra)
    return json.dumps(data, ensure_ascii=False, sort_keys=True)

