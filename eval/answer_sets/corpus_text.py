"""The plain text of a corpus, read independently of the product's ingestion.

PDFs through PyMuPDF's plain text layer, Markdown and text files as they are.
The checker verifies rows against this text, not against chunks, so a row
stays valid whatever the chunker does; whitespace is collapsed as in
`eval.metrics.normalise`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from eval.judge.facts import phrase_pattern

TEXT_SUFFIXES = (".md", ".txt", ".markdown", ".rst")


@dataclass(frozen=True)
class CorpusText:
    """Whitespace-normalised text per document name."""

    documents: dict[str, str]

    @cached_property
    def lowered(self) -> dict[str, str]:
        return {name: text.lower() for name, text in self.documents.items()}

    def containing(self, needle: str, case_sensitive: bool) -> list[str]:
        """Documents whose text holds `needle` (whitespace-normalised; lower-cased unless `case_sensitive`)."""
        want = _norm(needle, case_sensitive)
        texts = self.documents if case_sensitive else self.lowered
        return [name for name, text in texts.items() if want in text]

    def word_hits(self, term: str) -> list[str]:
        """Documents where `term` occurs as a whole word run, case-insensitively."""
        pattern = phrase_pattern(term)
        return [name for name, text in self.documents.items() if pattern.search(text)]


def _norm(text: str, case_sensitive: bool) -> str:
    collapsed = " ".join(text.split())
    return collapsed if case_sensitive else collapsed.lower()


def read_document(path: Path) -> str:
    if path.suffix.lower() == ".pdf":
        import pymupdf

        with pymupdf.open(path) as doc:
            return "\n".join(page.get_text() for page in doc)
    return path.read_text(encoding="utf-8", errors="replace")


@lru_cache(maxsize=16)
def read_corpus(sources: tuple[Path, ...]) -> CorpusText:
    documents: dict[str, str] = {}
    for source in sources:
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in files:
            if path.suffix.lower() == ".pdf" or path.suffix.lower() in TEXT_SUFFIXES:
                documents[path.name] = " ".join(read_document(path).split())
    return CorpusText(documents)
