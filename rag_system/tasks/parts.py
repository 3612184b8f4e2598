"""A task's parts (summary sections, comparison cells), each checked by the answer validator.

Why per part: one failing cell must not throw away a whole table. Each
part's text is validated on its own with the same `check` the answers use
(native citation validation plus lexical support); a "not stated" part has no
text to check and says so in the fixed wording.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from rag_system.grounding.citations import Validation, check, citation_records
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.tasks.picking import Pick, cite

log = logging.getLogger(__name__)

NOT_STATED = "Not stated in the document."


@dataclass
class Part:
    key: str
    title: str
    text: str  # cited text, or "" when the document does not state it
    source: str  # llm | extractive | not_stated
    document_id: str | None = None
    validation: dict[str, Any] | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None  # why the model's text was replaced, when it was

    @property
    def shown(self) -> str:
        return self.text or NOT_STATED

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "text": self.shown, "source": self.source,
                "document_id": self.document_id, "validation": self.validation,
                "citations": [c["n"] for c in self.citations], "note": self.note}


def checked(text: str, blocks: list[EvidenceBlock]) -> Validation:
    """The answers' validator, on one part's text."""
    return check(text, blocks, verify=True)


def from_pick(key: str, title: str, chosen: Pick, blocks: list[EvidenceBlock],
              document_id: str | None = None, note: str | None = None) -> Part:
    """An extractive part: the picked sentences, cited; "not stated" when nothing was picked."""
    if not chosen.sentences:
        return Part(key, title, "", "not_stated", document_id, note=note)
    text = " ".join(cite(s) for s in chosen.sentences)
    report = checked(text, blocks)
    if not report.valid:  # verbatim sentences always validate; a bug if not
        log.error("extractive part %s failed validation: %s", key, report.to_json())
        return Part(key, title, "", "not_stated", document_id, note="internal: extract did not validate")
    return Part(key, title, text, "extractive", document_id, report.to_json(),
                citation_records(text, blocks, report), note)


def from_model(key: str, title: str, text: str, blocks: list[EvidenceBlock], report: Validation,
               document_id: str | None = None) -> Part:
    return Part(key, title, text, "llm", document_id, report.to_json(), citation_records(text, blocks, report))


def merged_citations(parts: list[Part]) -> list[dict[str, Any]]:
    """One record per cited block across all parts, in block order."""
    seen: dict[int, dict[str, Any]] = {}
    for part in parts:
        for record in part.citations:
            seen.setdefault(record["n"], record)
    return [seen[n] for n in sorted(seen)]


def overall_validation(parts: list[Part]) -> dict[str, Any]:
    checked = [(p.key, p.validation) for p in parts if p.validation is not None]
    return {"valid": all(v["valid"] for _, v in checked), "parts": len(parts),
            "checked": len(checked), "not_stated": sum(1 for p in parts if p.source == "not_stated"),
            "replaced": sum(1 for p in parts if p.note and p.source != "llm"),
            "invalid": [key for key, v in checked if not v["valid"]]}


def answer_source(parts: list[Part]) -> str:
    """`llm` when the model wrote every stated part, `extractive` when it wrote none, else `mixed`."""
    stated = [p for p in parts if p.source != "not_stated"]
    if stated and all(p.source == "llm" for p in stated):
        return "llm"
    if any(p.source == "llm" for p in stated):
        return "mixed"
    return "extractive"
