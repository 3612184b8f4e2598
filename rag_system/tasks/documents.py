"""Which documents a task is about: the index catalogue, name resolution, and their chunks as blocks.

Why fuzzy but unique: users say "the NDA" or "due diligence report", not
"07_nda.pdf". A name resolves only when exactly one document matches at the
best matching level; several matches are an ambiguity the caller asks back
about, never a guess, because summarising the wrong contract is worse than
asking.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from common.errors import DomainError
from rag_system.indexing.manifest import Manifest
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.retrieval.packer import evidence_label
from rag_system.retrieval.types import Candidate

_SEPARATORS = re.compile(r"[\s_\-.]+")
_PREFIX = re.compile(r"^\d+\s+")
_STORED = re.compile(r"^[0-9a-f]{64}_")  # uploads are stored as <sha256>_<original name>
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_FILLER = re.compile(r"^(?:the|a|an|this|that|document|doc|file)\s+|\s+(?:document|doc|file|pdf)$")
FUZZY_MIN = 0.8
ROW_COLUMNS = ["chunk_id", "document_id", "document_name", "chunk_index", "page_start", "page_end",
               "heading_path", "block_type", "text", "metadata"]


class DocumentNotFoundError(DomainError, LookupError):
    """No document of the index matches a name the user gave."""

    status, code = 404, "document_not_found"


@dataclass(frozen=True)
class DocumentRef:
    index: str
    document_id: str
    document_name: str

    def to_json(self) -> dict[str, str]:
        return {"index": self.index, "document_id": self.document_id, "document_name": self.document_name}


@dataclass
class Resolution:
    """The outcome for one name: `match` set when unique, else the candidates to ask about."""

    name: str
    match: DocumentRef | None = None
    candidates: list[DocumentRef] = field(default_factory=list)

    @property
    def ambiguous(self) -> bool:
        return self.match is None and len(self.candidates) > 1

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "match": self.match.to_json() if self.match else None,
                "candidates": [c.to_json() for c in self.candidates]}


def catalogue(engine: RetrievalEngine, indexes: tuple[str, ...]) -> list[DocumentRef]:
    """Every document of these indexes (from each index's manifest), in name order."""
    out: dict[tuple[str, str], DocumentRef] = {}
    for index in indexes:
        engine.table(index)  # raises IndexNotFoundError for a missing index
        manifest = Manifest.open_existing(engine.db, index)
        if manifest is None:
            continue
        for record in manifest.records().values():
            out.setdefault((index, record.document_id), DocumentRef(index, record.document_id, record.document_name))
    return sorted(out.values(), key=lambda d: (d.document_name.lower(), d.index))


def normalise(name: str) -> str:
    """"07_nda.pdf" -> "nda"; "The Due-Diligence report" -> "due diligence report"."""
    text = _EXTENSION.sub("", _STORED.sub("", name.strip().strip("\"'“”‘’"))).lower()
    text = _SEPARATORS.sub(" ", text).strip()
    previous = None
    while previous != text:
        previous, text = text, _FILLER.sub("", text).strip()
    return _PREFIX.sub("", text)


def display_name(name: str) -> str:
    """The name a person gave the file (without the upload store's hash prefix)."""
    return _STORED.sub("", name)


def resolve(name: str, documents: list[DocumentRef]) -> Resolution:
    """Exact id or name, then whole-word containment, then close spelling; unique at the first level that hits."""
    wanted = normalise(name)
    raw = name.strip().lower()
    if not wanted:
        return Resolution(name)
    levels = [
        [d for d in documents if raw in (d.document_id, d.document_name.lower())
         or (len(raw) >= 8 and d.document_id.startswith(raw))],
        [d for d in documents if normalise(d.document_name) == wanted],
        [d for d in documents if _contains(normalise(d.document_name), wanted)],
        [d for d in documents if _close(normalise(d.document_name), wanted)],
        _most_words(documents, wanted),
    ]
    for hits in levels:
        unique = list({(d.index, d.document_id): d for d in hits}.values())
        if len(unique) == 1:
            return Resolution(name, unique[0], unique)
        if unique:
            return Resolution(name, None, unique)
    return Resolution(name)


def _contains(doc: str, wanted: str) -> bool:
    """Every word of the wanted name is a word of the document's name (or the name is an acronym of it)."""
    words = doc.split()
    if all(w in words for w in wanted.split()):
        return True
    if len(wanted) >= 2 and " " not in wanted and "".join(w[0] for w in words) == wanted:
        return True
    wanted_words = wanted.split()
    return len(words) == 1 and len(wanted_words) >= 2 and "".join(w[0] for w in wanted_words) == doc


def _most_words(documents: list[DocumentRef], wanted: str) -> list[DocumentRef]:
    """The documents sharing the most words (of 3+ letters) with the wanted name, if any share one."""
    words = {w for w in wanted.split() if len(w) >= 3}
    overlap = {(d.index, d.document_id): len(words & set(normalise(d.document_name).split())) for d in documents}
    best = max(overlap.values(), default=0)
    return [d for d in documents if best and overlap[(d.index, d.document_id)] == best]


def _close(doc: str, wanted: str) -> bool:
    return difflib.SequenceMatcher(None, doc, wanted).ratio() >= FUZZY_MIN


def document_blocks(engine: RetrievalEngine, documents: list[DocumentRef], first_number: int = 1,
                    count_tokens: Any = None) -> list[EvidenceBlock]:
    """The documents' chunks in document order, as numbered evidence blocks (numbers run across documents).

    The block text is the chunk without its leading "<document> > <headings>"
    context line, so every sentence a part quotes is text of the page itself.
    """
    count = count_tokens or (lambda text: max(1, len(text) // 4))
    blocks: list[EvidenceBlock] = []
    for doc in documents:
        rows = engine.table(doc.index).document_rows(doc.document_id, ROW_COLUMNS)
        if not rows:
            raise DocumentNotFoundError(f"document {doc.document_name!r} has no chunks in index {doc.index!r}")
        for row in rows:
            candidate = Candidate(**{name: row[name] for name in ROW_COLUMNS})
            number = first_number + len(blocks)
            label = evidence_label(number, candidate)
            body = _body(candidate)
            blocks.append(EvidenceBlock(number, candidate, label, body, count(f"{label}\n{body}")))
    return blocks


def _body(candidate: Candidate) -> str:
    first, sep, rest = candidate.text.partition("\n")
    if sep and first.startswith(candidate.document_name):
        return rest
    return candidate.text
