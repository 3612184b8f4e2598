"""What a task produces, and the model fall-through both tasks share."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from rag_system.generation.events import Emit
from rag_system.generation.llm import ContextOverflowError, GenerationParams, LLMBackend, LLMError
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.tasks.model import ModelNotes, headed_notes
from rag_system.tasks.parts import Part

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    answer: str  # Markdown
    parts: list[Part]
    backend: str = "extractive"
    model: str = "none"
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # task-specific JSON (e.g. the table)


@dataclass
class ModelRun:
    notes: ModelNotes | None
    backend: str = "extractive"
    model: str = "none"
    fallbacks: list[dict[str, str]] = field(default_factory=list)


def run_model(chain: list[LLMBackend], document: str, headings: list[tuple[str, str, str]],
              blocks: list[EvidenceBlock], params: GenerationParams, emit: Emit,
              cancel: threading.Event | None, numbered: list[EvidenceBlock] | None = None) -> ModelRun:
    """The first generative backend that works; `notes` is None when none does (extractive only)."""
    fallbacks: list[dict[str, str]] = []
    for backend in chain:
        if not backend.generative:
            break
        try:
            notes = headed_notes(backend, document, headings, blocks, params, cancel, numbered)
            return ModelRun(notes, backend.name, notes.model, fallbacks)
        except (LLMError, ContextOverflowError) as exc:
            log.warning("task: backend %s failed, falling through: %s", backend.name, exc)
            fallbacks.append({"backend": backend.name, "error": str(exc)})
            emit("backend_fallback", {"from": backend.name, "error": str(exc)})
    return ModelRun(None, fallbacks=fallbacks)


def add_usage(usage: dict[str, dict[str, int]], stage: str,
              notes: ModelNotes | None) -> dict[str, dict[str, int]]:
    """`usage` with the tokens of `notes` added under `stage`: a new dict, the caller's left as it was."""
    if notes is None or not notes.calls:
        return usage
    entry = usage.get(stage, {"prompt": 0, "completion": 0})
    return {**usage, stage: {"prompt": entry["prompt"] + notes.usage["prompt"],
                             "completion": entry["completion"] + notes.usage["completion"]}}
