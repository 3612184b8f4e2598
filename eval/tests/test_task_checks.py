"""The answer-level check of eval/check_tasks: it must fail a quote or sentence that is not on its cited page."""

from __future__ import annotations

import copy

from eval.task_checks import judge

PAGES = {"07_nda.pdf": {1: "This NDA is entered into as of October 1, 2024.",
                        2: "This NDA shall remain in effect for three (3) years."}}
GOOD = {
    "answer": "### Purpose\nThis NDA is entered into as of October 1, 2024. [1]\n### Term\n"
              "This NDA shall remain in effect for three (3) years. [2]\n### Limitations\nNot stated in the document.",
    "documents": [{"document_name": "07_nda.pdf"}],
    "citations": [{"n": 1, "document_name": "07_nda.pdf", "page_start": 1, "page_end": 1,
                   "quote": "This NDA is entered into as of October 1, 2024."},
                  {"n": 2, "document_name": "07_nda.pdf", "page_start": 2, "page_end": 2,
                   "quote": "This NDA shall remain in effect for three (3) years."}],
    "parts": [{"key": "purpose", "source": "extractive", "citations": [1], "validation": {"valid": True},
               "text": "This NDA is entered into as of October 1, 2024. [1]"},
              {"key": "term", "source": "extractive", "citations": [2], "validation": {"valid": True},
               "text": "This NDA shall remain in effect for three (3) years. [2]"},
              {"key": "limitations", "source": "not_stated", "citations": [], "validation": None,
               "text": "Not stated in the document."}],
}


def test_a_correct_answer_passes():
    verdict = judge(GOOD, PAGES)
    assert verdict.ok and (verdict.citations, verdict.on_page, verdict.claims_on_page, verdict.stated) == (2, 2, 2, 2)


def test_a_quote_on_another_page_fails():
    bad = copy.deepcopy(GOOD)
    bad["citations"][1]["page_start"] = bad["citations"][1]["page_end"] = 1
    verdict = judge(bad, PAGES)
    assert not verdict.ok and verdict.on_page == 1 and any("quote not on" in p for p in verdict.problems)


def test_an_altered_sentence_and_a_foreign_document_fail():
    bad = copy.deepcopy(GOOD)
    bad["parts"][1]["text"] = "This NDA shall remain in effect for five (5) years. [2]"
    bad["citations"][0]["document_name"] = "01_acquisition_agreement.pdf"
    verdict = judge(bad, PAGES)
    assert not verdict.ok
    assert any("claim not on its cited page" in p for p in verdict.problems)
    assert any("outside the task's documents" in p for p in verdict.problems)


def test_a_cited_not_stated_part_and_a_missing_record_fail():
    bad = copy.deepcopy(GOOD)
    bad["parts"][2]["text"] = "Not stated in the document. [2]"
    bad["parts"][0]["citations"] = [7]
    problems = judge(bad, PAGES).problems
    assert any("'not stated' part carries a citation" in p for p in problems)
    assert any("without a citation record" in p for p in problems)
