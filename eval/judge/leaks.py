"""The chunker's context line where users see text.

The chunker puts `"<document name> > <heading path>"` (or the bare document
name) first in a chunk's text so the embedding knows where the chunk sits.
It is for retrieval only: in an answer, a citation quote or a source card it
reads as if the document said it (once it was the whole "answer" to "What is
the purchase price?"). Found by its shape, from the document names the
response itself carries, not by asking the chunker.
"""

from __future__ import annotations

from typing import Any


def context_line(text: str, names: set[str]) -> str | None:
    """The first context line found in `text`, or None."""
    for line in text.splitlines():
        bare = " ".join(line.split())
        for name in names:
            if bare == name:
                return bare
            at = bare.find(f"{name} > ")
            if at >= 0:
                return bare[at:at + 160]
    return None


def response_leaks(payload: dict[str, Any]) -> dict[str, list[str]]:
    """Context lines in the answer, in citation quotes and in `source_documents[].text`."""
    names = {str(d.get("document_name")) for d in payload.get("source_documents", []) if d.get("document_name")}
    names |= {str(c.get("document_name")) for c in payload.get("citations", []) if c.get("document_name")}
    found: dict[str, list[str]] = {"answer": [], "quotes": [], "sources": []}
    texts = {"answer": [payload.get("answer") or ""],
             "quotes": [c.get("quote") or "" for c in payload.get("citations", [])],
             "sources": [d.get("text") or "" for d in payload.get("source_documents", [])]}
    for where, items in texts.items():
        for text in items:
            line = context_line(text, names)
            if line is not None:
                found[where].append(line)
    return found
