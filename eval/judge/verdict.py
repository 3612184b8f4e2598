"""Every trust judgement for one answer: unsupported facts, polarity, numbers, context-line leaks."""

from __future__ import annotations

import re

from decimal import Decimal
from typing import Any

from eval.judge.claims import split_claims
from eval.judge.facts import Fact, block_numbers, extract_facts, phrase_pattern, supported
from eval.judge.leaks import response_leaks
from eval.judge.polarity import sentence_errors, stance

_WORD_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "hundred": 100, "thousand": 1000,
                 "million": 10 ** 6, "billion": 10 ** 9}


def evidence_blocks(payload: dict[str, Any]) -> dict[int, str]:
    """Block number -> what the answerer saw of it: its document's name (in the label) and its text."""
    return {int(s["n"]): f"{s.get('document_name') or ''}\n{s.get('text') or ''}"
            for s in payload.get("source_documents", [])}


def judge_trust(payload: dict[str, Any], *, documented: str | None = None, polarity: str | None = None,
                value: str | None = None) -> dict[str, Any]:
    """`documented`/`polarity`: a negation row's expected sentence and its polarity; `value`: a numeric row's."""
    leaks = response_leaks(payload)
    out: dict[str, Any] = {"context_leaks": {k: len(v) for k, v in leaks.items()},
                           "context_leak_examples": [line for lines in leaks.values() for line in lines][:3]}
    if payload.get("answer_source") == "refusal":
        return out | {"unsupported_facts": [], "polarity_errors": [], "stance": None,
                      "stance_error": None, "numbers_supported": None, "value_stated": None,
                      "reply": None, "reply_right": None if polarity is None else False}
    blocks = evidence_blocks(payload)
    claims = split_claims(payload.get("answer") or "")
    unsupported: list[dict[str, Any]] = []
    numbers_ok = True
    numbers_seen = 0
    for claim in claims:
        evidence = "\n".join(blocks[n] for n in claim.citations if n in blocks)
        values = block_numbers(evidence)
        for fact in extract_facts(claim.text):
            ok = bool(evidence) and supported(fact, evidence, values)
            if fact.kind == "number":
                numbers_seen += 1
                numbers_ok = numbers_ok and ok
            if not ok:
                unsupported.append(fact.to_json() | {"claim": claim.text[:200], "citations": list(claim.citations)})
    out["unsupported_facts"] = unsupported
    out["polarity_errors"] = [e.to_json() for e in sentence_errors(claims, blocks)]
    taken = stance(claims, documented) if documented is not None else None
    out["stance"] = taken
    out["stance_error"] = None if polarity is None or taken is None else taken != polarity
    # A yes/no question's answer says its "Yes" or "No" in words, and the right one.
    said = reply_word(payload.get("answer") or "")
    out["reply"] = said
    out["reply_right"] = None if polarity is None else said == ("no" if polarity == "negative" else "yes")
    out["numbers_supported"] = numbers_ok if numbers_seen else None
    out["value_stated"] = None if value is None else value_stated(value, payload.get("answer") or "")
    return out


def value_stated(value: str, answer: str) -> bool:
    """Does the answer state the row's value, as written or as the same number ("45 million")?"""
    if phrase_pattern(value).search(" ".join(answer.split())):
        return True
    wanted = _value_of(value)
    if wanted is None:
        return False
    return wanted in {f.value for f in extract_facts(answer) if f.kind == "number"}


def _value_of(text: str) -> Decimal | None:
    numbers = [f.value for f in extract_facts(f"It is {text}.") if isinstance(f, Fact) and f.kind == "number"]
    if len(numbers) == 1 and numbers[0] is not None:
        return numbers[0]
    words = [_WORD_NUMBERS.get(w) for w in text.lower().split()]
    if words and all(w is not None for w in words):
        total = Decimal(1)
        for w in words:
            total *= w  # "one million" -> 1 * 1,000,000
        return total.normalize()
    return None


def reply_word(answer: str) -> str | None:
    """"yes" or "no" when the answer opens with it ("No. ...", "Yes, ..."), else None."""
    m = re.match(r"\s*(yes|no)\b", answer, re.IGNORECASE)
    return m.group(1).lower() if m else None
