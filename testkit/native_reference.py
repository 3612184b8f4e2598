"""Pure-Python reference implementations of the ``docent_native`` functions.

Why: every native function must be provably equivalent to a simple, readable
Python version. The property tests (``tests/unit/test_native_*.py``) assert
exact equality against these, and ``eval.bench_native`` times them as the
baseline that justifies the Rust code. They are written once, here.

Keep them boring: the point is obvious correctness, not speed. Error messages
and validation order deliberately match the Rust core.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Sequence
from typing import Any

# The native STOP_WORDS is this list (tests/unit/test_lexicon.py); native/src/lexicon.rs ports stem.
from common.lexicon import ABBREVIATIONS, STOP_WORDS, stem

DEFAULT_CHUNK_SIZE = 1 << 20
MAX_CHUNK_SIZE = 1 << 26


def sha256_bytes_reference(data: bytes) -> str:
    """SHA-256 of ``data`` as lowercase hex, straight from ``hashlib``."""
    return hashlib.sha256(data).hexdigest()


def sha256_files_reference(
    paths: Sequence[str | os.PathLike[str]], chunk_size: int = DEFAULT_CHUNK_SIZE
) -> list[str]:
    """Sequentially hash each file in ``chunk_size`` reads (input order kept).

    Raises the same ``ValueError`` as the native version for a bad chunk size
    and lets ``open()`` raise its ``OSError`` subclasses for bad paths.
    """
    if not 1 <= chunk_size <= MAX_CHUNK_SIZE:
        raise ValueError(f"chunk_size must be between 1 and {MAX_CHUNK_SIZE}")
    digests: list[str] = []
    for path in paths:
        hasher = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(chunk_size):
                hasher.update(chunk)
        digests.append(hasher.hexdigest())
    return digests


from testkit.native_reference_fusion import rrf_fuse_reference, score_fuse_reference  # noqa: E402,F401 (one module)

# --- Evidence contrast -------------------------------------------------------

CONTRAST_STD_FLOOR = 0.01


def _total_order_key(x: float) -> tuple[float, float]:
    """IEEE total order for finite floats: -0.0 sorts below 0.0."""
    return (x, math.copysign(1.0, x))


def evidence_contrast_reference(similarities: Sequence[float]) -> float:
    """``(top - mean) / max(std, 0.01)`` of the best value against the rest.

    Values are sorted descending (total order); the background is all but the
    first; mean and population variance are plain left-to-right sums from
    0.0 (not ``sum()``, which compensates rounding on Python >= 3.12), and the
    square is ``d * d`` (not ``** 2``), so the float bits equal Rust's.
    """
    values = [float(x) for x in similarities]
    if not all(math.isfinite(x) for x in values):
        raise ValueError("similarities must be finite")
    if len(values) < 2:
        return 0.0
    values.sort(key=_total_order_key, reverse=True)
    top, background = values[0], values[1:]
    total = 0.0
    for x in background:
        total += x
    mean = total / len(background)
    squares = 0.0
    for x in background:
        d = x - mean
        squares += d * d
    std = math.sqrt(squares / len(background))
    return (top - mean) / max(std, CONTRAST_STD_FLOOR)


# --- Sentences ---------------------------------------------------------------
# Character classes are Python's own: ``\s``/``str.isspace`` for whitespace,
# ``\w`` for word characters; the native side reproduces them exactly.

_TERMINALS = ".!?…"
_CLOSERS = "\"'”’)]"
_OPENERS = "\"'“‘(["
_WORD_PREFIXES = "(\"'“‘["
_WS_RUN = re.compile(r"\s+")
_NON_WS = re.compile(r"\S")
_WORD = re.compile(r"\w+")
_LIST_ITEM = re.compile(r"(?:[-*]|[0-9]+\.)\s")
_SPACE_NO_NEWLINE = re.compile(r"[^\S\n]*")
_NUM = r"[1-9][0-9]{0,3}"
_ELEM = rf"{_NUM}(?:[-–]{_NUM})?"
_MARKER = re.compile(rf"\[{_ELEM}(?: *, *{_ELEM})*\]")
MAX_RANGE_LEN = 50


def _fold(text: str) -> str:
    """Lower-case word characters (``ch.lower()``), keep everything else."""
    return "".join(ch.lower() if ch.isalnum() or ch == "_" else ch for ch in text)


def _marker_numbers(marker: str) -> list[int] | None:
    """Numbers of a syntactically valid marker, ranges expanded; None if a
    range is descending or longer than MAX_RANGE_LEN."""
    numbers: list[int] = []
    for elem in marker[1:-1].split(","):
        low, _, high = elem.strip().replace("–", "-").partition("-")
        first, last = int(low), int(high or low)
        if last < first or last - first + 1 > MAX_RANGE_LEN:
            return None
        numbers.extend(range(first, last + 1))
    return numbers


def _markers(text: str) -> list[tuple[int, int, list[int]]]:
    """Citation markers of ``text`` as (start, end, numbers), left to right."""
    found = []
    pos = 0
    while (match := _MARKER.search(text, pos)) is not None:
        numbers = _marker_numbers(match.group())
        if numbers is not None:
            found.append((match.start(), match.end(), numbers))
        pos = match.end()
    return found


def _is_sentence_start(ch: str) -> bool:
    return ch in "0123456789[" or (ch.isupper() and ch.isalnum())


def _ends_with_abbreviation(before_dot: str) -> bool:
    words = before_dot.rsplit(None, 1)
    if not words:
        return False
    last = words[-1].lstrip(_WORD_PREFIXES)
    if _fold(last) in ABBREVIATIONS:
        return True
    return len(last) == 1 and last.isalpha()


def _punctuation_boundary(text: str, start: int, k: int, m: int) -> bool:
    j = k
    while j > start and text[j - 1] in _CLOSERS:
        j -= 1
    if j == start or text[j - 1] not in _TERMINALS:
        return False
    nxt = text[m]
    opener_then_start = nxt in _OPENERS and m + 1 < len(text) and _is_sentence_start(text[m + 1])
    if not (_is_sentence_start(nxt) or opener_then_start):
        return False
    return not (j == k and text[k - 1] == "." and _ends_with_abbreviation(text[start : k - 1]))


def _trailing_markers_end(text: str, m: int) -> int | None:
    """End of the citation markers at ``m`` if they stay with the sentence."""
    end = None
    pos = m
    while (match := _MARKER.match(text, pos)) is not None and _marker_numbers(match.group()) is not None:
        end = match.end()
        spaces = _SPACE_NO_NEWLINE.match(text, end)
        assert spaces is not None  # `[^\S\n]*` matches the empty string
        pos = spaces.end()
    if end is not None and (end == len(text) or text[end].isspace()):
        return end
    return None


def _cut(text: str, start: int, k: int, m: int) -> tuple[int, int | None] | None:
    """Where the whitespace run ``text[k:m]`` ends the sentence begun at
    ``start``: (end, next start or None for "runs to the end"), or None."""
    newlines = text.count("\n", k, m)
    if newlines >= 2:
        return k, m
    if newlines == 1:
        line_start = text.rfind("\n", 0, k) + 1
        heading_ends = text[line_start:k].lstrip().startswith("#")
        if _LIST_ITEM.match(text, m) or text[m] == "#" or heading_ends:
            return k, m
    if not _punctuation_boundary(text, start, k, m):
        return None
    if newlines == 0 and text[m] == "[":
        end = _trailing_markers_end(text, m)
        if end is not None:
            following = _NON_WS.search(text, end)
            return end, following.start() if following else None
    return k, m


def split_sentences_reference(text: str) -> list[tuple[int, int]]:
    """Sentence spans (start, end) in str indexes; the spec of
    ``docent_native.split_sentences`` (rules in its docstring)."""
    first = _NON_WS.search(text)
    if first is None:
        return []
    last = len(text.rstrip())
    spans: list[tuple[int, int]] = []
    start = pos = first.start()
    while (run := _WS_RUN.search(text, pos)) is not None and run.start() < last:
        k, m = run.span()
        cut = _cut(text, start, k, m)
        if cut is None:
            pos = m
            continue
        end, following = cut
        if following is None:
            break
        spans.append((start, end))
        start = pos = following
    spans.append((start, last))
    return spans


# --- Citations ---------------------------------------------------------------


def _unique(numbers: list[int]) -> list[int]:
    return list(dict.fromkeys(numbers))


def parse_citations_reference(text: str) -> list[tuple[int, int, list[int]]]:
    """Per sentence: (start, end, cited numbers, first-appearance order, unique)."""
    return [
        (start, end, _unique([n for _, _, numbers in _markers(text[start:end]) for n in numbers]))
        for start, end in split_sentences_reference(text)
    ]


def _normalise(text: str) -> str:
    return _fold(" ".join(text.split()))


_QUOTE = re.compile(r'"([^"]*)"|“([^”]*)”')


def validate_citations_reference(
    answer: str, blocks: Sequence[str], min_quote_chars: int = 12
) -> dict[str, Any]:
    """Citation check of ``answer`` against 1-based ``blocks`` (see the stub)."""
    if isinstance(blocks, str):
        raise TypeError("blocks must be a sequence of str, not a str")
    if min_quote_chars < 1:
        raise ValueError("min_quote_chars must be >= 1")
    sentences = parse_citations_reference(answer)
    normalised = [_normalise(block) for block in blocks]
    unknown: set[int] = set()
    uncited: list[int] = []
    bad_quotes: list[dict[str, Any]] = []
    for index, (start, end, cited) in enumerate(sentences):
        text = answer[start:end]
        unknown.update(n for n in cited if n > len(blocks))
        if not cited:
            pieces, pos = [], 0
            for m_start, m_end, _ in _markers(text):
                pieces.append(text[pos:m_start])
                pos = m_end
            pieces.append(text[pos:])
            words = sum(len(_WORD.findall(piece)) for piece in pieces)
            if not (text.startswith("#") or words < 2):
                uncited.append(index)
        if cited:
            candidates = [normalised[n - 1] for n in cited if n <= len(blocks)]
        else:
            candidates = normalised
        for match in _QUOTE.finditer(text):
            quote = match.group(1) if match.group(1) is not None else match.group(2)
            if len(quote) < min_quote_chars:
                continue
            needle = _normalise(quote)
            if not any(needle in block for block in candidates):
                bad_quotes.append({"sentence": index, "quote": quote})
    any_cited = any(cited for _, _, cited in sentences)
    return {
        "sentences": [{"start": s, "end": e, "citations": c} for s, e, c in sentences],
        "unknown": sorted(unknown),
        "uncited": uncited,
        "bad_quotes": bad_quotes,
        "valid": any_cited and not unknown and not uncited and not bad_quotes,
    }


# --- Evidence sentences ------------------------------------------------------

MIN_TERM_CHARS = 3
MIN_SENTENCE_WORDS = 4
BLOCK_BONUS = 0.001


def _query_terms(query: str) -> set[str]:
    """Stems of the folded query words of 3+ chars that are not stop words
    (tested before stemming): the rest of the product matches words by stem."""
    return {
        stem(term)
        for token in _WORD.findall(query)
        if len(token) >= MIN_TERM_CHARS and (term := _fold(token)) not in STOP_WORDS
    }


def select_evidence_sentences_reference(
    query: str, blocks: Sequence[str], max_sentences: int = 3, min_overlap: float = 0.2
) -> list[tuple[int, int, int, float]]:
    """Up to ``max_sentences`` (block, start, end, score) by query-term overlap,
    terms and sentence words compared by ``common.lexicon.stem``."""
    if isinstance(blocks, str):
        raise TypeError("blocks must be a sequence of str, not a str")
    if max_sentences < 0:
        raise ValueError("max_sentences must be >= 0")
    terms = _query_terms(query)
    if not terms:
        return []
    kept = []
    for block_index, block in enumerate(blocks):
        for start, end in split_sentences_reference(block):
            words = [stem(_fold(token)) for token in _WORD.findall(block[start:end])]
            if len(words) < MIN_SENTENCE_WORDS:
                continue
            overlap = len(terms.intersection(words)) / len(terms)
            if overlap >= min_overlap:
                score = overlap + BLOCK_BONUS * (1 / (block_index + 1))
                kept.append((block_index, start, end, score))
    kept.sort(key=lambda e: (-e[3], e[0], e[1]))
    return kept[:max_sentences]
