"""The `summary` task: one document, fixed sections, each cited by page.

Sections come from the document's own chunks in document order. With a
model, each section is the model's text when the answer validator accepts it
and verbatim cited sentences otherwise; with the extractive backend, always
the latter. A section nothing in the document backs says "Not stated in the
document." rather than borrowing a sentence that does not fit.
"""

from __future__ import annotations

import threading

from rag_system.generation.events import Emit
from rag_system.generation.llm import GenerationParams, LLMBackend
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.tasks.documents import DocumentRef, display_name
from rag_system.tasks.outcome import Outcome, add_usage, run_model
from rag_system.tasks.parts import Part, checked, from_model, from_pick
from rag_system.tasks.picking import assign, document_sentences, profile

SECTIONS = (
    (profile("purpose", "Purpose and background",
             "purpose background recital recitals whereas introduction overview objective aim intend wish "
             "summary executive prepared entered explore scope",
             opening=1.5),
     "why the document exists and its context"),
    (profile("content", "Method or content",
             "method approach procedure process review reviewed analysis investigation assess assessment "
             "provision provisions terms purchase sale definition definitions scope covers include includes "
             "conducted examined",
             rules=0.5),
     "what the document does or contains"),
    (profile("figures", "Key figures and rules",
             "price payment amount fee total revenue value cost rate limit threshold term period deadline "
             "obligation obligations shall must required",
             money=1.5, numbers=0.3, rules=0.8, dates=0.3),
     "amounts, numbers, deadlines and binding rules"),
    (profile("conclusions", "Conclusions",
             "conclusion conclusions conclude concluded finding findings recommend recommendation opinion "
             "result therefore approve approved approval overall satisfactory accurate valid complete confirm",
             closing=0.8),
     "what the document concludes or decides"),
    (profile("limitations", "Limitations",
             "limitation limitations limited exclusion exclusions except exception excluded assumption caveat "
             "qualification qualified risk risks subject unless pending outstanding uncertainty",
             limits=1.5),
     "exceptions, risks, caveats or open points"),
)
EXTRACTIVE_SENTENCES = 2


def summarise(document: DocumentRef, blocks: list[EvidenceBlock], chain: list[LLMBackend],
              params: GenerationParams, emit: Emit, cancel: threading.Event | None = None) -> Outcome:
    headings = [(p.key, p.title, hint) for p, hint in SECTIONS]
    run = run_model(chain, document.document_name, headings, blocks, params, emit, cancel)
    extracted = assign(document_sentences(blocks), [p for p, _ in SECTIONS], EXTRACTIVE_SENTENCES)
    parts: list[Part] = []
    for prof, _ in SECTIONS:
        text = run.notes.texts.get(prof.key) if run.notes else None
        if text:
            parts.append(from_model(prof.key, prof.title, text, blocks, checked(text, blocks), document.document_id))
        else:
            note = run.notes.rejected.get(prof.key) if run.notes else None
            parts.append(from_pick(prof.key, prof.title, extracted[prof.key], blocks, document.document_id,
                                   note=f"model text replaced: {note}" if note else None))
        emit("task_part", {"task": "summary", "key": prof.key, "source": parts[-1].source,
                           "valid": parts[-1].validation["valid"] if parts[-1].validation else None,
                           "markdown": render(document, parts)})  # the summary so far, shown as it grows
    usage = add_usage({}, "summary", run.notes)
    extra = {"map_reduce": {"windows": run.notes.groups, "calls": run.notes.calls}} if run.notes else {}
    return Outcome(render(document, parts), parts, run.backend, run.model, usage, run.fallbacks, extra)


def render(document: DocumentRef, parts: list[Part]) -> str:
    lines = [f"**Summary of {display_name(document.document_name)}**", ""]
    for part in parts:
        lines += [f"### {part.title}", part.shown, ""]
    return "\n".join(lines).strip()

