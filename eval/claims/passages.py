"""Cut a document into sentences and find a claim's passage by its anchor.

Why anchors: the corpora may not be copied into the repository, so a claim
row names its passage by a short exact substring (plus how many sentences
around it to take, or a start and an end substring). Resolution is strict:
an anchor that is absent, or present more than once, is an error naming the
row, because a passage that silently moved would turn a true claim into a
false one (or the reverse) without anyone noticing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: A sentence ends at . ! or ? (optionally closed by quotes, brackets or markup) before a space and a
#: capital, a digit or an opening mark; the abbreviations below never end one.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]*`_]*\s+(?=[A-Z0-9\"'(\[`*_])")
#: The longest passage a start and an end anchor may cut: a passage is a paragraph or two, not a page.
MAX_SPAN = 1500
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Mr.", "Ms.", "Dr.", "No.", "Inc.", "Fig.", "Sec.", "approx.")


class AnchorError(ValueError):
    """An anchor that is absent or occurs more than once; the message names it and its document."""


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, as every passage is stored."""
    return " ".join(text.split())


def split_sentences(block: str) -> list[str]:
    """The sentences of one block of text (whitespace-normalised)."""
    text = normalise(block)
    if not text:
        return []
    out: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        head = text[start:match.start()]
        if head.endswith(_ABBREVIATIONS) or not head:
            continue
        out.append(text[start:match.start() + len(match.group(0).rstrip())].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


@dataclass(frozen=True)
class Document:
    """A document as a flat run of sentences; block boundaries are sentence boundaries."""

    name: str
    sentences: tuple[str, ...]

    @classmethod
    def from_blocks(cls, name: str, blocks: list[str]) -> "Document":
        return cls(name, tuple(s for block in blocks for s in split_sentences(block)))

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def _offsets(self) -> list[int]:
        offsets, pos = [], 0
        for sentence in self.sentences:
            offsets.append(pos)
            pos += len(sentence) + 1
        return offsets

    def occurrences(self, needle: str) -> list[int]:
        text, want = self.text, normalise(needle)
        found, pos = [], text.find(want)
        while pos >= 0 and want:
            found.append(pos)
            pos = text.find(want, pos + 1)
        return found

    def by_sentences(self, start: int, end: int, before: int, after: int) -> str:
        """The sentences overlapping text[start:end], widened by `before` and `after` sentences."""
        offsets = self._offsets()
        first = max(i for i, off in enumerate(offsets) if off <= start)
        last = max(i for i, off in enumerate(offsets) if off < end)
        return " ".join(self.sentences[max(0, first - before):last + 1 + after])


def locate(document: Document, spec: dict[str, Any]) -> str:
    """The passage a source spec names; `AnchorError` saying why when it is absent or ambiguous.

    A spec has either `anchor` (with optional `before`/`after` sentence counts)
    or `start` and `end` (the passage runs exactly from the start, which must be
    unique, to the first occurrence of the end after it, at most `MAX_SPAN`
    characters on).
    """
    if "anchor" in spec:
        hits = document.occurrences(spec["anchor"])
        if len(hits) != 1:
            raise AnchorError(f"anchor {spec['anchor']!r} occurs {len(hits)} times in {document.name}")
        start = hits[0]
        end = start + len(normalise(spec["anchor"]))
        return document.by_sentences(start, end, int(spec.get("before", 0)), int(spec.get("after", 0)))
    starts, ends = document.occurrences(spec["start"]), document.occurrences(spec["end"])
    if len(starts) != 1:
        raise AnchorError(f"start {spec['start']!r} occurs {len(starts)} times in {document.name}")
    following = [e for e in ends if e >= starts[0]]
    if not following:
        raise AnchorError(f"end {spec['end']!r} does not occur after its start in {document.name}")
    end = following[0] + len(normalise(spec["end"]))
    if end - starts[0] > MAX_SPAN:
        raise AnchorError(f"start {spec['start']!r} to end {spec['end']!r} spans {end - starts[0]} characters "
                          f"in {document.name} (at most {MAX_SPAN})")
    return document.text[starts[0]:end]
