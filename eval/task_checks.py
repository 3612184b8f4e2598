"""Answer-level checks of a summary or comparison, independent of the pipeline that made it.

Why re-check: the pipeline validates each part against the blocks it was
given; this module checks the *product* against the source files themselves.
A citation is valid when its `[n]` appears in the answer text, its record
names one of the task's documents, and the record's quote occurs (whitespace
normalised) in the text of the cited pages as extracted from the original
file; and every stated part's own `[n]` markers all have records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_MARK = re.compile(r"\[(\d+)\]")


def norm(text: str) -> str:
    return " ".join(text.split())


def page_texts(path: Path) -> dict[int, str]:
    """Page number -> normalised text of that page, from the original file."""
    from rag_system.config import load_settings
    from rag_system.ingestion.dispatch import convert

    doc = convert(path, load_settings())
    pages: dict[int, list[str]] = {}
    for block in doc.blocks:
        pages.setdefault(block.page, []).append(block.text)
    return {page: norm(" ".join(texts)) for page, texts in pages.items()}


@dataclass
class Judgement:
    citations: int = 0
    valid: int = 0
    on_page: int = 0
    claims: int = 0  # sentences of extractive parts
    claims_on_page: int = 0  # ... found verbatim on the page they cite
    parts: int = 0
    stated: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.problems and self.citations > 0 and self.valid == self.on_page == self.citations
                and self.claims_on_page == self.claims)

    def to_json(self) -> dict[str, Any]:
        return {"citations": self.citations, "valid": self.valid, "on_page": self.on_page, "claims": self.claims,
                "claims_on_page": self.claims_on_page, "parts": self.parts,
                "stated": self.stated, "ok": self.ok, "problems": self.problems[:10]}


def judge(payload: dict[str, Any], pages_by_name: dict[str, dict[int, str]]) -> Judgement:
    """Check one task response against the source files' pages (`pages_by_name`: file name -> pages)."""
    out = Judgement()
    docs = {d["document_name"] for d in payload.get("documents", [])}
    marks = {int(n) for n in _MARK.findall(payload.get("answer", ""))}
    records = {c["n"]: c for c in payload.get("citations", [])}
    for part in payload.get("parts", []):
        out.parts += 1
        if part["source"] == "not_stated":
            if _MARK.search(part["text"]):
                out.problems.append(f"{part['key']}: a 'not stated' part carries a citation")
            continue
        out.stated += 1
        missing = [n for n in part["citations"] if n not in records]
        if missing or not part["citations"]:
            out.problems.append(f"{part['key']}: cites {missing or 'nothing'} without a citation record")
        if not (part.get("validation") or {}).get("valid"):
            out.problems.append(f"{part['key']}: the pipeline's own check failed")
    for part in payload.get("parts", []):
        if part["source"] == "extractive":
            _claims(part["text"], records, pages_by_name, out)
    for n, c in records.items():
        out.citations += 1
        name = c["document_name"]
        if n in marks and name in docs:
            out.valid += 1
        else:
            out.problems.append(f"[{n}] is not in the answer or cites {name}, outside the task's documents")
        text = _cited_text(c, pages_by_name)
        if norm(c["quote"]) and norm(c["quote"]) in text:
            out.on_page += 1
        else:
            out.problems.append(f"[{n}] quote not on {name} p. {c['page_start']}-{c['page_end']}: {c['quote'][:80]!r}")
    return out


_CLAIM = re.compile(r"(?P<text>.+?)\s*\[(?P<n>\d+)\]", re.DOTALL)


def _cited_text(record: dict[str, Any], pages_by_name: dict[str, dict[int, str]]) -> str:
    name = record["document_name"]
    pages = pages_by_name.get(re.sub(r"^[0-9a-f]{64}_", "", name), {})
    return " ".join(pages.get(p, "") for p in range(record["page_start"], record["page_end"] + 1))


def _claims(text: str, records: dict[int, dict[str, Any]], pages_by_name: dict[str, dict[int, str]],
            out: Judgement) -> None:
    """Each sentence of an extractive part is on the page its marker cites (verbatim, whitespace aside)."""
    for match in _CLAIM.finditer(text):
        claim = norm(match.group("text"))
        record = records.get(int(match.group("n")))
        out.claims += 1
        if record is not None and claim in _cited_text(record, pages_by_name):
            out.claims_on_page += 1
        else:
            out.problems.append(f"claim not on its cited page [{match.group('n')}]: {claim[:80]!r}")
