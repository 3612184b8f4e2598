"""What the verifier found, as values: a finding, a verdict, a checked sentence.

Why frozen values: the same result travels to the synthesis loop (which repairs or quotes), to
`POST /verify`, to the repair prompt and to the inspector; nothing downstream may change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SUPPORTED, CONTRADICTED, UNSUPPORTED = "supported", "contradicted", "unsupported"
#: Worse verdicts win when a sentence's clauses disagree.
SEVERITY = {SUPPORTED: 0, UNSUPPORTED: 1, CONTRADICTED: 2}


@dataclass(frozen=True)
class Finding:
    """One reason a sentence is not what its source says, in plain words."""

    kind: str  # binding | number | added | fact | polarity | opposite | modality | scope | comparator | condition
    verdict: str  # contradicted | unsupported
    message: str


@dataclass(frozen=True)
class Evidence:
    """The source sentence(s) a claim was compared with."""

    n: int  # the source's number, as cited
    quote: str
    start: int = -1  # offsets of the quote in the source's text (-1 when not known)
    end: int = -1

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "quote": self.quote}


@dataclass(frozen=True)
class SentenceCheck:
    """One answer sentence, checked."""

    text: str
    start: int  # offsets in the checked text
    end: int
    cited: tuple[int, ...]
    verdict: str
    findings: tuple[Finding, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    checked: bool = True  # False: nothing to check (a heading, a sentence that asserts nothing)

    @property
    def supported(self) -> bool:
        return self.verdict == SUPPORTED

    def messages(self) -> list[str]:
        return [f.message for f in self.findings]


@dataclass(frozen=True)
class Verification:
    """A text, sentence by sentence."""

    sentences: tuple[SentenceCheck, ...]
    language: str = "en"  # "en": checked by what it says; other languages by their words and facts
    notes: tuple[str, ...] = field(default=())

    @property
    def supported(self) -> bool:
        return all(s.supported for s in self.sentences)


def worst(verdicts: list[str]) -> str:
    return max(verdicts, key=lambda v: SEVERITY[v], default=SUPPORTED)


def short(text: str, limit: int = 140) -> str:
    """A quote for a finding: one line, at most `limit` characters."""
    text = " ".join(text.split()).strip(" ,;")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
