"""Quoting by meaning (issue 18), with the real packaged MiniLM: a paraphrased question is answered
from the sentence that says it in other words, and a question the evidence is silent on stays refused.

The blocks are the documents' own text (the shared localGPT corpora, page 1 of each), so the
cosines are the ones the product sees; each case is also run by words alone, where it refuses, so
the test fails if meaning stops counting.
"""

from __future__ import annotations

import pytest

from rag_system.generation.extractive import quote
from rag_system.generation.llm import estimate_tokens
from rag_system.generation.meaning import Meaning
from rag_system.generation.registry import ExtractiveBackend
from rag_system.generation.synthesis import SynthesisOptions, Synthesizer
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.retrieval.packer import evidence_label
from rag_system.retrieval.types import Candidate

ATLAS = ("Model: Atlas-7 Dual Boiler (2026 revision C)\nManufacturer: Meridian Coffee Systems, Tacoma WA\n"
         "1. OPERATING SPECIFICATIONS\nThe brew boiler operates at a pressure of 9.2 bar during extraction.\n"
         "The steam boiler is maintained at 1.45 bar. The PID controller keeps\n"
         "brew water at 93.5 degrees Celsius with a tolerance of 0.4 degrees.\n"
         "The vibratory pump is rated for 52 watts continuous duty.\n")
LEAVE = ("2. REQUESTING LEAVE\nAll leave requests are submitted through the Kestrel HR portal at least 10\n"
         "working days before the intended start date. Any absence longer than 10\n"
         "consecutive working days additionally requires written approval from a\n"
         "director. Requests are answered within 3 working days.\n")
OPINION = ("Re: Acquisition of StartupXYZ LLC\nLadies and Gentlemen:\nWe have acted as legal counsel to StartupXYZ "
           "LLC (\"Company\") in connection with the\nproposed acquisition by TechCorp Industries, Inc. pursuant to "
           "the Document: Acquisition\nAgreement dated January 15, 2025.\n")

PARAPHRASES = [  # (gold-set row, question, block, the sentence that answers it)
    ("atlas7_a23", "Is there a limit on how far the brew temperature may drift before it is out of spec?",
     ATLAS, "with a tolerance of 0.4 degrees"),
    ("hr_h17", "How can an employee obtain authorization for a run of more than ten back-to-back workdays?",
     LEAVE, "consecutive working days additionally requires written approval"),
]


def block(text: str, name: str) -> EvidenceBlock:
    cand = Candidate(chunk_id="c1", document_id="d1", document_name=name, chunk_index=0, page_start=1,
                     page_end=1, heading_path="", block_type="text", text=text, metadata="{}")
    return EvidenceBlock(1, cand, evidence_label(1, cand), text, estimate_tokens(text))


@pytest.fixture(scope="module")
def meaning(embedder) -> Meaning:  # type: ignore[no-untyped-def]
    return Meaning(embedder)


def answer(question: str, evidence: EvidenceBlock, meaning: Meaning | None):  # type: ignore[no-untyped-def]
    return Synthesizer().answer(question, [evidence], [ExtractiveBackend()], SynthesisOptions(meaning=meaning),
                                lambda e, d: None, similarity=0.6)


@pytest.mark.parametrize(("row", "question", "text", "fact"), PARAPHRASES, ids=[p[0] for p in PARAPHRASES])
def test_a_paraphrased_question_is_answered_from_the_sentence_that_means_it(meaning, row, question, text, fact):
    evidence = block(text, f"{row}.pdf")
    by_words = answer(question, evidence, None)
    by_meaning = answer(question, evidence, meaning)
    assert by_words.answer_source == "refusal"  # the words it shares are too few: what this is for
    assert by_meaning.answer_source == "extractive", by_meaning.refusal_reason
    assert fact in " ".join(by_meaning.answer.split())
    assert by_meaning.validation["valid"]


def test_a_shared_name_does_not_make_a_sentence_mean_what_is_asked(meaning, embedder):
    question, sentence = "In what year was StartupXYZ founded?", "We have acted as legal counsel to StartupXYZ LLC"
    with_name = float((embedder.embed([sentence]) @ embedder.embed_queries([question])[0])[0])
    masked = meaning.similarities(question, [sentence])[0]
    assert masked < SynthesisOptions().min_meaning <= with_name  # the name alone would have passed
    refused = answer(question, block(OPINION, "06_legal_opinion.pdf"), meaning)
    assert refused.answer_source == "refusal" and "do not say" in (refused.refusal_reason or "")


def test_a_quote_reports_its_closest_sentence_and_words_alone_report_none(meaning):
    question = PARAPHRASES[0][1]
    found = quote(question, [block(ATLAS, "atlas.pdf")], 3, meaning)
    assert found is not None and found.meaning is not None and found.meaning >= SynthesisOptions().min_meaning
    assert "[1]" in found.text
    plain = quote("What is the steam boiler pressure?", [block(ATLAS, "atlas.pdf")], 3)
    assert plain is not None and plain.meaning is None and "1.45 bar" in plain.text
