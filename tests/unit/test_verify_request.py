"""`/verify` bodies: what is refused (and with which code) before any model loads, and the CLI's text."""

from __future__ import annotations

from typing import Any

import pytest

from common.errors import ApiError
from rag_system.verification.request import MAX_SENTENCES, cited_numbers, parse_verify, requested_indexes
from rag_system.verification.support import blank_markers
from rag_system.cli.verify import render

PASSAGE = {"n": 1, "text": "Employees accrue 28 days."}


def _code(body: Any) -> str:
    with pytest.raises(ApiError) as info:
        parse_verify(body)
    assert info.value.status == 400 and str(info.value)
    return info.value.code


def test_the_two_forms() -> None:
    sources = parse_verify({"text": "Employees accrue 28 days [1].", "sources": [PASSAGE, {"n": 3, "text": "x", "name": "a.pdf"}],
                            "question": "  How many days?  "})
    assert sources.mode == "sources" and [s.n for s in sources.sources] == [1, 3]
    assert sources.sources[1].name == "a.pdf" and sources.question == "How many days?"
    index = parse_verify({"text": "Employees accrue 28 days [9].", "tableName": "hr", "indexes": ["hr", "kb"]})
    assert index.mode == "index" and index.indexes == ("hr", "kb")  # markers name nothing in the index form
    assert requested_indexes({"table_name": "text_pages_hr"}) == ("hr",)


@pytest.mark.parametrize(("body", "code"), [
    ({"sources": [PASSAGE]}, "missing_text"),
    ({"text": " \n ", "sources": [PASSAGE]}, "missing_text"),
    ({"text": "[1]", "sources": [PASSAGE]}, "missing_text"),
    ({"text": ["a"], "sources": [PASSAGE]}, "invalid_text"),
    ({"text": "x" * 20_001, "index": "hr"}, "text_too_long"),
    ({"text": "It rains. " * (MAX_SENTENCES + 1), "index": "hr"}, "text_too_long"),
    ({"text": "a"}, "missing_sources"),
    ({"text": "a", "sources": [PASSAGE], "indexes": ["hr"]}, "conflicting_option"),
    ({"text": "a", "sources": {"n": 1}}, "invalid_sources"),
    ({"text": "a", "sources": [PASSAGE] * 101}, "invalid_sources"),
    ({"text": "a", "sources": ["passage"]}, "invalid_sources"),
    ({"text": "a", "sources": [{"n": 2.0, "text": "x"}]}, "invalid_sources"),
    ({"text": "a", "sources": [{"n": 0, "text": "x"}]}, "invalid_sources"),
    ({"text": "a", "sources": [{"n": 1, "text": None}]}, "invalid_sources"),
    ({"text": "a", "sources": [{"n": 1, "text": "x", "name": 5}]}, "invalid_sources"),
    ({"text": "a", "sources": [{"n": 1, "text": "x" * 50_001}]}, "invalid_sources"),
    ({"text": "a", "sources": [PASSAGE, dict(PASSAGE)]}, "duplicate_source"),
    ({"text": "a [1, 2].", "sources": [PASSAGE]}, "unknown_source"),
    ({"text": "a [1-3].", "sources": [PASSAGE, {"n": 2, "text": "x"}]}, "unknown_source"),
    ({"text": "a [99999999999].", "sources": [PASSAGE]}, "unknown_source"),
    ({"text": "a", "index": "bad name"}, "invalid_index_name"),
    ({"text": "a", "indexes": "hr"}, "invalid_option"),
    ({"text": "a", "indexes": [f"i{n}" for n in range(17)]}, "invalid_option"),
    ({"text": "a", "index": "hr", "question": ["q"]}, "invalid_option"),
    (["text"], "invalid_body"),
])
def test_bad_bodies_are_refused_with_their_code(body: Any, code: str) -> None:
    assert _code(body) == code


def test_ten_thousand_sentences_are_refused_by_count_not_by_parsing() -> None:
    text = "It is. " * 2_800  # under the character limit, far over the sentence limit
    with pytest.raises(ApiError) as info:
        parse_verify({"text": text, "index": "hr"})
    assert info.value.code == "text_too_long" and "2,800 sentences" in str(info.value)


def test_markers_read_as_the_verifier_reads_them_and_blanked_in_place() -> None:
    assert cited_numbers("A [1]. B [2, 3]. C [4-6]. D [0].") == {0, 1, 2, 3, 4, 5, 6}
    text = "Leave is 25 days [3]. Sick leave [1-2] needs a note."
    blanked = blank_markers(text)
    assert len(blanked) == len(text) and "[" not in blanked and blanked.index("needs") == text.index("needs")


def test_cli_text_marks_each_sentence_with_findings_and_evidence() -> None:
    out = render({"supported": False, "notes": [], "warnings": [], "sentences": [
        {"text": "Leave is 25 days.", "verdict": "supported", "checked": True, "findings": [],
         "evidence": [{"n": 1, "quote": "Employees accrue 25 days.", "document": "policy.pdf", "page": 2}]},
        {"text": "Bob approves\ntravel.", "verdict": "contradicted", "checked": True,
         "findings": ["the passage says Alice, not Bob"], "evidence": [{"n": 2, "quote": "Alice approves travel."}]},
        {"text": "Summary", "verdict": "supported", "checked": False, "findings": [], "evidence": []}]})
    assert out.splitlines() == [
        "✓ supported     Leave is 25 days.",
        '    [1] policy.pdf, p. 2: "Employees accrue 25 days."',
        "✗ contradicted  Bob approves travel.",
        "    - the passage says Alice, not Bob",
        '    [2]: "Alice approves travel."',
        "✓ nothing to check Summary",
        "3 sentences: 2 supported, 1 contradicted, 0 unsupported"]


def test_a_sentence_checked_chunk_by_chunk_takes_the_best_reading_and_a_cut_sentence_its_worse_part() -> None:
    from rag_system.grounding.findings import Finding, SentenceCheck
    from rag_system.verification.run import best_reading, whole_reading

    def reading(verdict: str, *messages: str, checked: bool = True) -> SentenceCheck:
        return SentenceCheck("s", 0, 1, (1,), verdict, tuple(Finding("added", verdict, m) for m in messages),
                             checked=checked)

    supported, contradicted = reading("supported"), reading("contradicted", "the passage says Alice")
    vague, vaguer = reading("unsupported", "a"), reading("unsupported", "a", "b")
    assert best_reading([vaguer, contradicted, supported]) is supported  # one passage carries it
    assert best_reading([vaguer, vague, contradicted]) is contradicted  # none does, one says otherwise
    assert best_reading([vaguer, vague]) is vague
    assert best_reading([reading("supported", checked=False), reading("supported", checked=False)]).checked is False
    nothing = best_reading([])
    assert nothing.verdict == "unsupported" and nothing.messages() == ["nothing in the index was found for it"]
    cut = whole_reading([supported, contradicted])  # the verifier cut one copy in two: the worse part decides
    assert cut.verdict == "contradicted" and cut.messages() == ["the passage says Alice"]
