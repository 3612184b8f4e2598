"""Sentence splitting that keeps the original characters.

Chunks overlap by whole sentences and citations quote sentences verbatim, so
the splitter must return exact substrings of its input (only the whitespace
between sentences is dropped) and must not break after abbreviations, decimal
numbers or section numbers such as "Section 4.2".
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf al fig figs no nos vol pp p eq sec mr mrs ms dr prof st inc ltd co corp jr sr approx dept est".split()
)

# A candidate boundary: terminal punctuation, optional closing quotes/brackets,
# then whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"""([.!?…]+["'”’)\]]*)(\s+)(?=["'“‘(\[]?[A-Z0-9])""")


def split_sentences(text: str) -> list[str]:
    """Split `text` into sentences; each one is a verbatim substring."""
    text = text.strip()
    if not text:
        return []
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        end = match.end(1)
        candidate = text[start:end]
        if _ends_with_abbreviation(candidate):
            continue
        sentences.append(candidate.strip())
        start = match.end(2)
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [s for s in sentences if s]


def _ends_with_abbreviation(candidate: str) -> bool:
    if not candidate.endswith("."):
        return False
    words = candidate[:-1].rsplit(None, 1)
    if not words:
        return False
    last = words[-1].lstrip("(\"'“‘[").lower()
    if last in _ABBREVIATIONS:
        return True
    # Single letters ("J. Smith", "A. Introduction") are initials or enumerators.
    return len(last) == 1 and last.isalpha()
