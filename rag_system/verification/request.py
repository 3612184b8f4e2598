"""A `/verify` body -> a checked, frozen request (Documentation/api.md, "POST /verify").

Why one parser for every door: the RAG API route, the CLI (local or through a running API) and the
gateway's pass-through must refuse the same bodies with the same codes, and refuse them before any
work — a 10,000-sentence text is counted by the native sentence splitter (milliseconds) and refused
before the English parser or the embedder sees a word of it. Nothing here loads a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import docent_native

from common.errors import bad_request
from common.options import MAX_QUERY_CHARS, normalise_keys
from rag_system.api.options import indexes_of
from rag_system.grounding.verifier import Source

#: The longest text one request checks; past it, split the text (each sentence is checked on its own).
MAX_TEXT_CHARS = 20_000
MAX_SENTENCES = 200
#: The sources form: how many passages, and how long each may be (the body itself is capped at 1 MiB).
MAX_SOURCES = 100
MAX_SOURCE_CHARS = 50_000
MAX_NAME_CHARS = 500
#: A citation marker as the verifier reads it ("[1]", "[2, 3]", "[1-4]"), numbers and all.
MARKER = re.compile(r"\[(\d+(?:\s*[-–,]\s*\d+)*)\]")


@dataclass(frozen=True)
class VerifyRequest:
    """Either `sources` (the text cites them) or `indexes` (support is retrieved per sentence)."""

    text: str
    question: str = ""
    sources: tuple[Source, ...] = ()
    indexes: tuple[str, ...] = ()

    @property
    def mode(self) -> str:
        return "index" if self.indexes else "sources"


def requested_indexes(raw: Any) -> tuple[str, ...]:
    """The indexes a body names (`index`, `table_name`, `indexes`), checked as names only.

    Read first, on its own, so the caller's access to them is checked before anything else about
    the body is judged: a grant that may not read an index learns nothing from a 400 about the text.
    """
    return indexes_of(normalise_keys(raw))


def parse_verify(raw: Any) -> VerifyRequest:
    body = normalise_keys(raw)
    indexes = requested_indexes(body)
    text = _text(body)
    question = _question(body)
    has_sources = body.get("sources") is not None
    if has_sources and indexes:
        raise bad_request("give either sources (the passages the text cites) or index/indexes (to search them "
                          "for support), not both", "conflicting_option")
    if not has_sources and not indexes:
        raise bad_request("give sources (the passages the text cites, [{\"n\", \"text\"}]) or index/indexes "
                          "(to search them for support)", "missing_sources")
    if indexes:
        return VerifyRequest(text, question, indexes=indexes)
    sources = _sources(body["sources"])
    unknown = sorted(cited_numbers(text) - {s.n for s in sources})
    if unknown:
        raise bad_request(f"the text cites {', '.join(f'[{n}]' for n in unknown)}, which "
                          f"{'is not a source' if len(unknown) == 1 else 'are not sources'}; the sources are "
                          f"{', '.join(str(s.n) for s in sources)}", "unknown_source")
    return VerifyRequest(text, question, sources=sources)


def _text(body: dict[str, Any]) -> str:
    value = body.get("text")
    if value is None:
        raise bad_request("text is required: the text to check", "missing_text")
    if not isinstance(value, str):
        raise bad_request(f"text must be a string, got {type(value).__name__}", "invalid_text")
    if not value.strip():
        raise bad_request("text is empty: give the text to check", "missing_text")
    if len(value) > MAX_TEXT_CHARS:
        raise bad_request(f"text is {len(value):,} characters; at most {MAX_TEXT_CHARS:,} are checked at once "
                          "(split it and check each part)", "text_too_long")
    if not MARKER.sub(" ", value).strip():
        raise bad_request("text has nothing to check but citation markers", "missing_text")
    sentences = len(docent_native.parse_citations(value))
    if sentences > MAX_SENTENCES:
        raise bad_request(f"text has {sentences:,} sentences; at most {MAX_SENTENCES} are checked at once "
                          "(split it and check each part)", "text_too_long")
    return value


def _question(body: dict[str, Any]) -> str:
    value = body.get("question")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise bad_request(f"question must be a string, got {type(value).__name__}", "invalid_option")
    if len(value) > MAX_QUERY_CHARS:
        raise bad_request(f"question is longer than {MAX_QUERY_CHARS} characters", "invalid_option")
    return value.strip()


def _sources(value: Any) -> tuple[Source, ...]:
    if not isinstance(value, list) or not value:
        raise bad_request('sources must be a non-empty list of {"n": number, "text": passage, "name"?}',
                          "invalid_sources")
    if len(value) > MAX_SOURCES:
        raise bad_request(f"at most {MAX_SOURCES} sources per request, got {len(value)}", "invalid_sources")
    out: dict[int, Source] = {}
    for position, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise bad_request(f"source {position} must be an object {{\"n\", \"text\", \"name\"?}}", "invalid_sources")
        n = item.get("n")
        if isinstance(n, bool) or not isinstance(n, int):
            raise bad_request(f"source {position}: n must be a whole number (the [n] the text cites), "
                              f"got {n!r}", "invalid_sources")
        if not 1 <= n <= 10_000:
            raise bad_request(f"source {position}: n must be between 1 and 10000, got {n}", "invalid_sources")
        if n in out:
            raise bad_request(f"two sources are numbered {n}; each n names one passage", "duplicate_source")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise bad_request(f"source [{n}] has no text: give the passage it stands for", "invalid_sources")
        if len(text) > MAX_SOURCE_CHARS:
            raise bad_request(f"source [{n}] is longer than {MAX_SOURCE_CHARS:,} characters", "invalid_sources")
        out[n] = Source(n, text, _optional(item, "name", n), _optional(item, "context", n))
    return tuple(out.values())


def _optional(item: dict[str, Any], key: str, n: int) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_NAME_CHARS:
        raise bad_request(f"source [{n}]: {key} must be a string of at most {MAX_NAME_CHARS} characters",
                          "invalid_sources")
    return value.strip()


def cited_numbers(text: str) -> set[int]:
    """Every number the text's markers name: those the verifier reads as citations, and the ones it
    would silently pass over ("[0]", "[99999999999]"), so a marker that names nothing is refused."""
    found = {n for _, _, cited in docent_native.parse_citations(text) for n in cited}
    for match in MARKER.finditer(text):
        found.update(int(part) for part in re.split(r"\s*[-–,]\s*", match.group(1)))
    return found
