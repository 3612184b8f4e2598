"""The model's side of a task: headed notes from windows of a document, each heading checked.

Map-reduce within the window: a document's blocks are cut, in order, into
groups that fit the model's window; each group is one prompt asking for every
heading at once (one call per window, not per heading, because a CPU model
takes seconds per call). A heading's text from one group is kept only if the
answer validator accepts it (after the same attribution repair answers get);
the reduce step joins the accepted texts of all groups in document order, up
to `MAX_SENTENCES` each. A heading no group backed is left to the extractive
path by the caller.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from rag_system.grounding.citations import attribute, cited_numbers
from rag_system.generation.llm import (
    GenerationParams,
    LLMBackend,
    Message,
)
from rag_system.generation.prompts import normalise_answer
from rag_system.generation.prompts import strip_labels
from rag_system.generation.synthesis import Cancelled
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.tasks.parts import checked


PROMPT_OVERHEAD_TOKENS = 500
MAX_SENTENCES = 4
NOT_STATED_MARK = "not stated"

SYSTEM = (
    "You are Docent. You write short notes about one document using only its numbered sources.\n"
    "Under each heading the user lists, write one to three short sentences. After each sentence put the "
    "number of the source it comes from in square brackets, like [3].\n"
    "If the sources say nothing for a heading, write exactly: Not stated in the document."
)


@dataclass
class ModelNotes:
    """Validated text per heading key, plus what happened on the way."""

    texts: dict[str, str] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)  # key -> why the model's text was dropped
    calls: int = 0
    groups: int = 0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt": 0, "completion": 0})
    model: str = ""


def windows(blocks: list[EvidenceBlock], budget: int) -> list[list[EvidenceBlock]]:
    """Consecutive groups of blocks whose tokens fit `budget` (a block larger than it goes alone)."""
    groups: list[list[EvidenceBlock]] = []
    used = 0
    for block in blocks:
        if groups and used + block.tokens <= budget:
            groups[-1].append(block)
            used += block.tokens
        else:
            groups.append([block])
            used = block.tokens
    return groups


def headed_notes(backend: LLMBackend, document: str, headings: list[tuple[str, str, str]],
                 blocks: list[EvidenceBlock], params: GenerationParams,
                 cancel: threading.Event | None = None,
                 numbered: list[EvidenceBlock] | None = None) -> ModelNotes:
    """Ask the model for every heading (key, title, hint) over each window; keep what validates.

    `blocks` are this document's; `numbered` is the whole task's block list
    (position n-1 holds block n, as the validator reads it) when several
    documents share one numbering. A text citing another document's block
    is rejected like an invalid one.

    Raises `LLMError`/`ContextOverflowError` from the backend so the caller can fall through.
    """
    notes = ModelNotes()
    window = backend.context_window(params.model)
    budget = max(64, window - params.max_tokens - PROMPT_OVERHEAD_TOKENS)
    groups = windows(blocks, budget)
    notes.groups = len(groups)
    collected: dict[str, list[str]] = {key: [] for key, _, _ in headings}
    for group in groups:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        evidence = "\n\n".join(b.rendered for b in group)
        listed = "\n".join(f"## {title}\n({hint})" for _, title, hint in headings)
        user = (f"Document: {document}\n\nSources:\n\n{evidence}\n\n"
                f"Write these headings, each followed by its sentences:\n{listed}")
        done = backend.complete([Message("system", SYSTEM), Message("user", user)], params)
        notes.calls += 1
        notes.model = done.model
        notes.usage["prompt"] += done.prompt_tokens
        notes.usage["completion"] += done.completion_tokens
        sections = split_headed(done.text, [(key, title) for key, title, _ in headings])
        for key, text in sections.items():
            accepted, why = _accept(text, blocks, numbered or blocks)
            if accepted:
                collected[key].append(accepted)
            elif why:
                notes.rejected[key] = why
    for key, texts in collected.items():
        if texts:
            notes.texts[key] = _reduce(texts, numbered or blocks)
            notes.rejected.pop(key, None)
    return notes


def _accept(text: str, own: list[EvidenceBlock],
            numbered: list[EvidenceBlock]) -> tuple[str | None, str | None]:
    """The heading's text if it validates (after attribution to this document's blocks), else (None, why)."""
    text = strip_labels(normalise_answer(text), own)
    if not text or NOT_STATED_MARK in text.lower():
        return None, None
    report = checked(text, numbered)
    if not report.valid:
        fixed, count = attribute(text, own, report)
        if count:
            text, report = fixed, checked(fixed, numbered)
    foreign = sorted(set(cited_numbers(report)) - {b.number for b in own})
    if foreign:
        return None, "cites blocks of another document: " + ", ".join(f"[{n}]" for n in foreign)
    if report.valid:
        return text, None
    return None, "; ".join(report.problems(text))[:300] or "citations did not validate"


def _reduce(texts: list[str], blocks: list[EvidenceBlock]) -> str:
    """Join the groups' validated texts, at most MAX_SENTENCES sentences, re-checked as a whole."""
    import docent_native

    joined = " ".join(" ".join(t.split()) for t in texts)
    spans = docent_native.split_sentences(joined)
    if len(spans) > MAX_SENTENCES:
        joined = joined[: spans[MAX_SENTENCES - 1][1]]
    if not checked(joined, blocks).valid:  # cutting cannot break a valid text; keep the first group if it did
        return " ".join(texts[0].split())
    return joined


_HEADING = re.compile(r"^\s*(?:#{1,6}\s*|\*\*|\d+[.)]\s*)?(?P<title>[^\n:*#]{3,80}?)\s*(?:\*\*)?\s*:?\s*(?:\*\*)?\s*$")


def split_headed(text: str, headings: list[tuple[str, str]]) -> dict[str, str]:
    """The model's text under each known heading (matched loosely: case, markup, a trailing colon)."""
    titles = {_norm(title): key for key, title in headings}
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _HEADING.match(line)
        if match and _norm(match.group("title")) in titles:
            current = titles[_norm(match.group("title"))]
            out.setdefault(current, [])
            continue
        inline = _inline_heading(line, titles)
        if inline is not None:
            current, rest = inline
            out.setdefault(current, []).append(rest)
            continue
        if current is not None and line.strip():
            out[current].append(line.strip().lstrip("-* ").strip())
    return {key: " ".join(lines).strip() for key, lines in out.items()}


def _inline_heading(line: str, titles: dict[str, str]) -> tuple[str, str] | None:
    """"**Scope:** text" or "Scope: text" on one line."""
    head, sep, rest = line.partition(":")
    if not sep or not rest.strip():
        return None
    key = titles.get(_norm(head))
    return (key, rest.strip().lstrip("*").strip()) if key else None


def _norm(title: str) -> str:
    return " ".join(re.sub(r"[^a-z ]", " ", title.lower()).split())

