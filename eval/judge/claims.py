"""An answer as cited claims: the text before each run of `[n]` markers, with those numbers.

Models cite as "… is 3 [1]." or "… is 3. [1]", the extractive backend as
"- sentence [1] sentence [2]"; cutting at marker runs handles all of them
without trusting the pipeline's own sentence records. Text after the last
marker of a line is an uncited claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKERS = re.compile(r"(?:\s*\[\d+(?:\s*,\s*\d+)*\])+")
_NUMBER = re.compile(r"\d+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“‘(]?[A-Z0-9])")
_BLOCK_START = re.compile(r"^\s*(?:[-*•|#>]|\d+[.)]\s)")
_LEADING = re.compile(r"^[\s\-*•.,;:)]+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'’\-]*")

#: Words that carry no fact: question scaffolding, articles, auxiliaries. Negation
#: cues are *not* here; `polarity` drops them itself when it compares content.
STOP_WORDS = frozenset("""
a an the and or but if then than of in on at to for from by with as into onto over under about
is are was were be been being am do does did has have had having can could may might must shall
should will would this that these those it its it's there here their they them he she his her
we our you your i me my what which who whom whose when where why how yes also any all each
some such so very just only per via up out more most other same both either one s
""".split())


@dataclass(frozen=True)
class Claim:
    text: str
    citations: tuple[int, ...]


def split_claims(answer: str) -> list[Claim]:
    claims: list[Claim] = []
    for line in answer.splitlines():
        start = 0
        for match in _MARKERS.finditer(line):
            _add(claims, line[start:match.start()], tuple(int(n) for n in _NUMBER.findall(match.group())))
            start = match.end()
        _add(claims, line[start:], ())
    return claims


def _add(claims: list[Claim], text: str, citations: tuple[int, ...]) -> None:
    text = _LEADING.sub("", text).strip()
    if any(ch.isalnum() for ch in text):
        claims.append(Claim(text, citations))


def sentences(text: str, wrapped: bool = False) -> list[str]:
    """Sentences: split after . ! ? before a capital or digit, and at line breaks.

    `wrapped` is for evidence blocks, whose line breaks are often hard wraps
    (RFCs, PDFs): there only blank lines break, and a sentence runs across lines.
    """
    pieces = _unwrap(text) if wrapped else text.splitlines()
    out: list[str] = []
    for piece in pieces:
        out.extend(s.strip() for s in _SENTENCE_END.split(piece) if any(ch.isalnum() for ch in s))
    return out


def _unwrap(text: str) -> list[str]:
    """Lines joined back into paragraphs; a blank line, a list item, a table row or a heading starts a new one."""
    pieces: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or _BLOCK_START.match(line):
            pieces.append([])
        if line.strip():
            pieces[-1].append(line.strip())
    return [" ".join(" ".join(p).split()) for p in pieces if p]


def stem(word: str) -> str:
    """A light stemmer, enough for "handles"/"handle"/"handled" and "grants"/"granted" to meet."""
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in ("ing", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def content_words(text: str, drop: frozenset[str] = frozenset()) -> set[str]:
    """Stemmed words that carry content; `drop` removes more (and every "n't" word goes with it)."""
    out: set[str] = set()
    for w in _WORD.findall(text):
        low = w.lower().replace("’", "'")
        if low in STOP_WORDS or (drop and (low in drop or low.endswith("n't"))):
            continue
        out.add(stem(low))
    return out
