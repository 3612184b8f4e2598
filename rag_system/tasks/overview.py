"""An overview of an index: its documents and what each is about, every line cited.

"What is this about?" over an index of several documents has no one document to summarise. The
overview lists them (in name order), each with the sentence that best says what it is for —
picked with the summary's *Purpose and background* profile, copied verbatim and cited with its
block, so it is true to the page by construction. It is extractive on every backend: one model
call per document would take minutes on a CPU for a question that wants a glance. A document
nothing in it describes says so; beyond `MAX_DOCUMENTS` the rest are named, not read.
"""

from __future__ import annotations

from rag_system.generation.events import Emit
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.tasks.documents import DocumentRef, display_name
from rag_system.tasks.outcome import Outcome
from rag_system.tasks.parts import Part, from_pick
from rag_system.tasks.picking import assign, document_sentences
from rag_system.tasks.summary import SECTIONS

MAX_DOCUMENTS = 12
_PURPOSE = SECTIONS[0][0]
_CONTENT = SECTIONS[1][0]


def overview(documents: list[tuple[DocumentRef, list[EvidenceBlock]]], more: list[DocumentRef],
             emit: Emit) -> Outcome:
    """One cited line per document; `more` are the documents past the limit (named only)."""
    parts: list[Part] = []
    numbered = [b for _, blocks in documents for b in blocks]  # one numbering across the documents
    for doc, blocks in documents:
        picked = assign(document_sentences(blocks), [_PURPOSE, _CONTENT], 1)
        chosen = picked[_PURPOSE.key] if picked[_PURPOSE.key].sentences else picked[_CONTENT.key]
        parts.append(from_pick(doc.document_id, display_name(doc.document_name), chosen, numbered, doc.document_id))
        emit("task_part", {"task": "overview", "key": doc.document_id, "source": parts[-1].source,
                           "valid": parts[-1].validation["valid"] if parts[-1].validation else None,
                           "markdown": render(parts, len(documents) + len(more), more)})
    return Outcome(render(parts, len(documents) + len(more), more), parts)


def render(parts: list[Part], total: int, more: list[DocumentRef]) -> str:
    lines = [f"**Overview of {total} document{'s' if total != 1 else ''}**", ""]
    for part in parts:
        lines += [f"### {part.title}", part.shown, ""]
    if more:
        names = ", ".join(display_name(d.document_name) for d in more)
        lines += [f"Also in the index (not read for this overview): {names}.", ""]
    return "\n".join(lines).strip()
