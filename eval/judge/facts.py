"""The checkable facts a sentence states, and whether a block states them too.

A fact is a number (amounts, percentages, dates' day and year, versions,
"45 million"), an identifier or code token (`MG-311`, `0x1f`, `max_ack_delay`,
`os.cpu_count()`), a quoted term, or a proper name (capitalised words not
opening a sentence). Numbers compare by value, so "45 million" is supported by
"$45,000,000" and "28 percent" by "28%"; the rest compare as text, ignoring
case and whitespace. A claim that is true in the world but not in its cited
block is unsupported all the same: that is the point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from eval.judge.claims import STOP_WORDS, sentences

_QUOTED = re.compile(r"\"([^\"\n]{2,120})\"|“([^”\n]{2,120})”|`([^`\n]{2,120})`|‘([^’\n]{1,80})’")
_IDENTIFIER = re.compile(
    r"\b0x[0-9A-Fa-f]+\b"                                   # hex codepoints
    r"|\b\d+\^\d+(?:-\d+)?"                                  # 2^62-1
    r"|\b[A-Za-z_][\w]*(?:[._][\w]+)+(?:\(\))?"              # max_ack_delay, os.cpu_count, list.sort()
    r"|\b[A-Za-z_]\w*\(\)"                                   # close()
    r"|\b[A-Za-z]+[-/]?\d+[A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\b"  # MG-311, E42, FY2024, HTTP/3, Atlas-7
    r"|\b[a-z]+[A-Z]\w*\b"                                   # camelCase
)
_NUMBER = re.compile(
    r"(?<![\w.,])([$€£]\s?)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
    r"(?:\s?(%|percent\b|million\b|billion\b|thousand\b|bn\b|[MKB]\b))?"
)
_HEX = re.compile(r"0x[0-9A-Fa-f]+")
_PAGE_REF = re.compile(r"(?:\bp{1,2}\.|\bpages?)\s*$", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’]s$")
_NAME_TOKEN = re.compile(r"\b[A-Z][A-Za-z]*(?:[-'’][A-Za-z]+)*\b")
_NOT_NAMES = STOP_WORDS | frozenset(
    "according based however note see yes no not also therefore thus first second then".split())
_SCALE = {"million": Decimal(10) ** 6, "m": Decimal(10) ** 6, "billion": Decimal(10) ** 9,
          "bn": Decimal(10) ** 9, "b": Decimal(10) ** 9, "thousand": Decimal(1000), "k": Decimal(1000)}
_IGNORED_IDENTIFIERS = frozenset({"e.g", "i.e", "etc", "u.s", "vs"})


@dataclass(frozen=True)
class Fact:
    kind: str  # number | identifier | quoted | name
    text: str
    value: Decimal | None = None

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


def phrase_pattern(term: str) -> re.Pattern[str]:
    """`term` with flexible whitespace, anchored so "5432" does not match inside "154321"."""
    body = r"\s+".join(re.escape(part) for part in term.split())
    left = r"(?<!\w)" if term[:1].isalnum() else ""
    right = r"(?!\w)" if term[-1:].isalnum() else ""
    return re.compile(left + body + right, re.IGNORECASE)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _numbers(text: str) -> list[Fact]:
    out: list[Fact] = []
    for m in _NUMBER.finditer(text):
        if _PAGE_REF.search(text[: m.start()]):
            continue
        digits = m.group(2).replace(",", "") + (m.group(3) or "")
        try:
            value = Decimal(digits)
        except InvalidOperation:
            continue
        unit = (m.group(4) or "").lower()
        value *= _SCALE.get(unit, Decimal(1))
        out.append(Fact("number", m.group(0).strip(), value.normalize()))
    return out


def _split(text: str) -> tuple[list[Fact], str]:
    """Quoted terms and identifiers, and the text left with them blanked out."""
    facts: list[Fact] = []
    spans: list[tuple[int, int]] = []
    for m in _QUOTED.finditer(text):
        term = next(g for g in m.groups() if g is not None).strip(" .,;:")
        if term:
            facts.append(Fact("quoted", term))
        spans.append(m.span())
    rest = _mask(text, spans)
    for m in _IDENTIFIER.finditer(rest):
        spans.append(m.span())
        token = m.group(0).rstrip(".")
        if token.lower() not in _IGNORED_IDENTIFIERS:
            facts.append(Fact("identifier", token))
    return facts, _mask(text, spans)


def _names(sentence: str) -> list[Fact]:
    """Runs of capitalised words; the sentence's opening word alone is not a name."""
    out: list[Fact] = []
    run: list[re.Match[str]] = []

    def flush() -> None:
        if not (len(run) == 1 and run[0].start() == _first_word(sentence)):
            phrase: list[str] = []
            for m in [*run, None]:  # a common word ("A", "The") ends a name
                if m is not None and _POSSESSIVE.sub("", m.group(0)).lower() not in _NOT_NAMES:
                    phrase.append(m.group(0))
                elif phrase:
                    out.append(Fact("name", _POSSESSIVE.sub("", " ".join(phrase))))
                    phrase = []
        run.clear()

    for m in _NAME_TOKEN.finditer(sentence):
        # A run breaks at anything but one space, and between an acronym and a
        # capitalised word ("CEO James Mitchell" -> "CEO", "James Mitchell").
        if run and (sentence[run[-1].end():m.start()] != " " or _acronym(run[-1]) != _acronym(m)):
            flush()
        run.append(m)
        if _POSSESSIVE.search(m.group(0)):
            flush()  # "TechCorp's CEO" is two facts
    flush()
    return out


def _acronym(m: re.Match[str]) -> bool:
    word = _POSSESSIVE.sub("", m.group(0))
    return len(word) > 1 and word.isupper()


def _first_word(sentence: str) -> int:
    m = re.search(r"[A-Za-z0-9]", sentence)
    return m.start() if m else 0


def extract_facts(text: str) -> list[Fact]:
    facts: list[Fact] = []
    for sentence in sentences(text):
        found, rest = _split(sentence)
        facts.extend(found)
        facts.extend(_numbers(rest))
        facts.extend(_names(_mask_numbers(rest)))
    return facts


def _mask_numbers(text: str) -> str:
    return _mask(text, [m.span() for m in _NUMBER.finditer(text)])


def block_numbers(text: str) -> set[Decimal]:
    """Every number the text states; a hex literal states its value ("type 0x00" backs "type 0")."""
    found, rest = _split(" ".join(text.split()))
    hexed = {Decimal(int(f.text, 16)) for f in found if f.kind == "identifier" and _HEX.fullmatch(f.text)}
    return hexed | {f.value for f in _numbers(rest) if f.value is not None}


def supported(fact: Fact, evidence: str, numbers: set[Decimal] | None = None) -> bool:
    """Does `evidence` (the cited blocks' text) state `fact`? `numbers`: `block_numbers(evidence)`, if known."""
    flat = " ".join(evidence.split())
    if fact.kind == "number":
        values = block_numbers(flat) if numbers is None else numbers
        return fact.value in values or bool(phrase_pattern(fact.text).search(flat))
    if fact.kind == "quoted":
        return " ".join(fact.text.split()).lower() in flat.lower()
    return bool(phrase_pattern(fact.text).search(flat))
