"""The `compare` task: two to four documents along fixed dimensions, as a cited table.

Every cell is one document's answer to one dimension, checked on its own by
the answer validator; a cell nothing backs reads "Not stated in the
document.". With a model, each document is one headed prompt (map-reduce over
windows as in the summary); cells the model could not back, and the
"differences" row (what a document says that the others do not, which needs
all documents at once), are verbatim cited sentences.
"""

from __future__ import annotations

import threading

from common.errors import DomainError
from common.options import MAX_COMPARED, MIN_COMPARED
from rag_system.generation.events import Emit
from rag_system.generation.llm import GenerationParams, LLMBackend
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.tasks.documents import DocumentRef, display_name
from rag_system.tasks.outcome import Outcome, add_usage, run_model
from rag_system.tasks.parts import NOT_STATED, Part, checked, from_model, from_pick
from rag_system.tasks.picking import assign, distinctive, document_sentences, profile

MIN_DOCUMENTS, MAX_DOCUMENTS = MIN_COMPARED, MAX_COMPARED
DIMENSIONS = (
    (profile("scope", "Scope", "purpose scope cover covers apply applies regarding connection relate relates "
             "summarize summarizes describe describes concern concerns agreement report letter memo assessment "
             "opinion certification checklist", opening=1.5),
     "what the document is about and what it covers"),
    (profile("parties", "Parties or subjects", "party parties buyer seller between prepared company companies "
             "employee employees counsel subject client customer customers licensor licensee",
             names=1.0, opening=0.5),
     "who the document is between, for, or about"),
    (profile("numbers", "Key numbers", "price amount total revenue value cost fee payment ebitda cash debt rent salary "
             "rate percent", money=1.5, numbers=0.5),
     "the main amounts, counts or percentages"),
    (profile("obligations", "Obligations or methods", "shall must agree agrees obligation obligations require "
             "required covenant method methods procedure review reviewed process conduct conducted",
             rules=1.0),
     "what a party must do, or how the work was done"),
    (profile("dates", "Dates", "date dated effective closing term deadline expire expires period", dates=1.5),
     "the dates, terms and deadlines"),
)
DIFFERENCES = ("differences", "Differences")


class CompareError(DomainError, ValueError):
    """The comparison was asked for too few or too many documents."""

    status, code = 400, "invalid_task"


def compare(documents: list[DocumentRef], blocks_by_doc: list[list[EvidenceBlock]],
            all_blocks: list[EvidenceBlock], chain: list[LLMBackend], params: GenerationParams,
            emit: Emit, cancel: threading.Event | None = None) -> Outcome:
    if not MIN_DOCUMENTS <= len(documents) <= MAX_DOCUMENTS:
        raise CompareError(f"compare takes {MIN_DOCUMENTS} to {MAX_DOCUMENTS} documents, got {len(documents)}")
    headings = [(p.key, p.title, hint) for p, hint in DIMENSIONS]
    usage: dict[str, dict[str, int]] = {}
    parts: list[Part] = []
    backend, model, fallbacks, calls = "extractive", "none", [], 0
    texts = ["\n".join(b.text for b in blocks) for blocks in blocks_by_doc]
    for position, (doc, blocks) in enumerate(zip(documents, blocks_by_doc)):
        run = run_model(chain, doc.document_name, headings, blocks, params, emit, cancel, all_blocks)
        chain = chain if not run.fallbacks else [b for b in chain if b.name not in
                                                 {f["backend"] for f in run.fallbacks}]
        fallbacks += run.fallbacks
        if run.notes is not None:
            backend, model, calls = run.backend, run.model, calls + run.notes.calls
        usage = add_usage(usage, "compare", run.notes)
        sentences = document_sentences(blocks)
        extracted = assign(sentences, [p for p, _ in DIMENSIONS], 1)
        used = {s.order for chosen in extracted.values() for s in chosen.sentences}
        for prof, _ in DIMENSIONS:
            text = run.notes.texts.get(prof.key) if run.notes else None
            if text:
                part = from_model(prof.key, prof.title, text, all_blocks, checked(text, all_blocks), doc.document_id)
            else:
                chosen = extracted[prof.key]
                note = run.notes.rejected.get(prof.key) if run.notes else None
                part = from_pick(prof.key, prof.title, chosen, all_blocks, doc.document_id,
                                 note=f"model text replaced: {note}" if note else None)
            parts.append(part)
        others = [t for i, t in enumerate(texts) if i != position]
        chosen = distinctive([s for s in sentences if s.order not in used], others, 1)
        parts.append(from_pick(*DIFFERENCES, chosen, all_blocks, doc.document_id))
        # The table so far (one column per document done): the answer grows a column at a time while
        # the model reads the next document, instead of appearing whole at the end.
        emit("task_part", {"task": "compare", "document_id": doc.document_id,
                           "sources": [p.source for p in parts[-len(DIMENSIONS) - 1:]],
                           "markdown": render(documents[:position + 1], parts)})
    table = _table(documents, parts)
    extra = {"table": table, "model_calls": calls}
    return Outcome(render(documents, parts), parts, backend, model, usage, fallbacks, extra)


def _rows() -> list[tuple[str, str]]:
    return [(p.key, p.title) for p, _ in DIMENSIONS] + [DIFFERENCES]


def _table(documents: list[DocumentRef], parts: list[Part]) -> dict[str, object]:
    cells = {(p.document_id, p.key): p for p in parts}
    return {"documents": [d.to_json() for d in documents],
            "rows": [{"key": key, "title": title,
                      "cells": [cells[(d.document_id, key)].to_json() for d in documents]}
                     for key, title in _rows()]}


def render(documents: list[DocumentRef], parts: list[Part]) -> str:
    """A Markdown table: one row per dimension, one column per document."""
    cells = {(p.document_id, p.key): p for p in parts}
    head = "| Dimension | " + " | ".join(_cell(display_name(d.document_name)) for d in documents) + " |"
    rule = "|---|" + "---|" * len(documents)
    names = ", ".join(display_name(d.document_name) for d in documents)
    lines = [f"**Comparison of {names}**", "", head, rule]
    for key, title in _rows():
        row = [_cell(cells[(d.document_id, key)].shown) for d in documents]
        lines.append(f"| {title} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|") or NOT_STATED
