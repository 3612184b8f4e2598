"""Citations a client of the OpenAI-compatible door can follow: in the text, and as annotations.

An OpenAI client shows `message.content` and little else, so the answer keeps its `[n]` markers
and ends with a sources list a person can read ("[1] policy.pdf, p. 3"); a program reads the same
citations structured, as OpenAI-style `url_citation` annotations on the message (each `[n]`
marker's span in the content, the source's title and its link: the page image or the file), and
in Docent's `docent` extension field (`sources`, beside `citations`).
"""

from __future__ import annotations

import re
from typing import Any

from backend.citation_links import link, where

_MARKER = re.compile(r"\[(\d+)\]")


def _by_number(citations: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for c in citations:
        if isinstance(c, dict) and isinstance(c.get("n"), int):
            out.setdefault(c["n"], c)
    return dict(sorted(out.items()))


def sources(citations: list[dict[str, Any]], base_url: str) -> list[dict[str, Any]]:
    """One entry per cited block: `{"n", "title", "document_name", "document_id", "page", "url"}`."""
    return [{"n": n, "title": where(c), "document_name": c.get("document_name"), "document_id": c.get("document_id"),
             "page": (c.get("location") or {}).get("page") or c.get("page_start"), "url": link(c, base_url)}
            for n, c in _by_number(citations).items()]


def sources_text(citations: list[dict[str, Any]]) -> str:
    """The list appended to the answer text ("" without citations)."""
    cited = _by_number(citations)
    if not cited:
        return ""
    return "\n\nSources:\n" + "\n".join(f"[{n}] {where(c)}" for n, c in cited.items())


def url_annotations(content: str, citations: list[dict[str, Any]], base_url: str, start: int = 0) -> list[dict[str, Any]]:
    """A `url_citation` for every `[n]` marker of `content` from `start` on whose block was cited."""
    cited = _by_number(citations)
    out: list[dict[str, Any]] = []
    for found in _MARKER.finditer(content, start):
        c = cited.get(int(found.group(1)))
        if c is not None:
            out.append({"type": "url_citation", "url_citation": {
                "start_index": found.start(), "end_index": found.end(), "title": where(c), "url": link(c, base_url)}})
    return out
