"""The chunk's context line: kept for the embedder, taken out of everything a person reads.

The chunker opens each chunk with "<document> > <headings>" (CHUNK_CONTEXT)
so that a chunk deep in a section still embeds as being about that section.
That line is not text of the page: copied into an answer, a quote or a source
card it reads as a fact ("07_nda.pdf > NON-DISCLOSURE AGREEMENT > 1." was
once the whole answer to "What is the purchase price?"), and a quote checked
against it would pass without being in the document. So every reader of a
chunk goes through `body()`; only the embedder and the full-text index see
the raw text.
"""

from __future__ import annotations

from rag_system.retrieval.types import Candidate


def context_prefixes(document_name: str, heading_path: str) -> set[str]:
    """Context lines CHUNK_CONTEXT may have put at the top of every chunk of a section."""
    found = {heading_path, document_name}
    if heading_path:
        found.add(f"{document_name} > {heading_path}")
    return {p for p in found if p}


def is_context_line(line: str, document_name: str, heading_path: str) -> bool:
    """The first line of a chunk (or of a merged neighbour inside an expanded passage) that names where it is."""
    line = line.strip()
    if not line:
        return False
    if line in context_prefixes(document_name, heading_path):
        return True
    return bool(document_name) and line.startswith(f"{document_name} > ")


def body(text: str, document_name: str, heading_path: str) -> str:
    """`text` without its context lines: the leading one, and those of merged neighbours.

    Only whole lines that are exactly a context line (or start with the
    document name and " > ", the form of every "document" mode line) are
    removed, so real prose is never touched; what remains is verbatim text.
    """
    lines = text.split("\n")
    kept = [line for i, line in enumerate(lines)
            if not (is_context_line(line, document_name, heading_path)
                    and (i == 0 or line.startswith(f"{document_name} > ")))]
    if len(kept) == len(lines):
        return text
    return "\n".join(kept).strip("\n")


def candidate_body(candidate: Candidate) -> str:
    return body(candidate.text, candidate.document_name, candidate.heading_path)
