"""The claim check on realistic answers: no false alarm on correct ones, every invented variant caught.

Why: a false alarm replaces a correct model answer with a worse one, and a
miss lets an invented fact through with a green badge. The cases in
``tests/data/claims_goldset.json`` are answers written for rows of the shared
gold sets (acquisition, atlas7, hr, docs, rfc), citing excerpts of the chunks
that hold the fact (label, context line and the passage, as a block reads),
each with variants that change a number, date, identifier, name or the
polarity. ``python -m eval.claims_goldset`` runs the same cases against the
full real chunks of the corpora.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import docent_native
import pytest

from testkit.native_reference_claims import check_claims_reference

CASES = json.loads((Path(__file__).parent.parent / "data" / "claims_goldset.json").read_text(encoding="utf-8"))


def blocks_of(case: dict[str, Any]) -> list[str]:
    return [f"[{n}] {b['doc']}, p. {b['pages']}\n{b['text']}" for n, b in enumerate(case["blocks"], start=1)]


def problems(answer: str, blocks: list[str]) -> list[str]:
    report = docent_native.check_claims(answer, blocks)
    assert report == check_claims_reference(answer, blocks)
    found = []
    for sentence in report:
        found += [f"'{f['text']}' is not in {sentence['blocks']}" for f in sentence["facts"] if not f["found"]]
        polarity = sentence["polarity"]
        if polarity is not None and not polarity["agrees"]:
            found.append(f"polarity against [{polarity['block']}] {polarity['start']}:{polarity['end']}")
    return found


def test_the_set_is_large_and_varied() -> None:
    assert len(CASES) >= 40
    assert len({case["id"].split("_")[0] for case in CASES}) == 5
    changes = Counter(w["change"] for case in CASES for w in case["wrong"])
    for change in ("number", "date", "identifier", "name", "polarity"):
        assert changes[change] >= 5, changes


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_correct_answers_raise_no_alarm(case: dict[str, Any]) -> None:
    assert problems(case["answer"], blocks_of(case)) == []


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_invented_variants_are_caught(case: dict[str, Any]) -> None:
    for wrong in case["wrong"]:
        assert problems(wrong["answer"], blocks_of(case)), wrong
