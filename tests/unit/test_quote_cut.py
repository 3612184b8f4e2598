"""Quoting's cut (`FAR_BELOW`): a further sentence far below the best is dropped for a question, kept for a draft.

Why both: asked by a person, a sentence at a third of the best one's score is beside the point (the
bereavement answer came with annual- and parental-leave bullets). Led by a failed draft's words
(`asked` given apart from the text that ranks), the ranking is the draft's, and a cut relative to
its passage would drop the other block's sentence that answers the question (cf6ead3, atlas7_a08).
"""

from __future__ import annotations

from rag_system.generation.extractive import FAR_BELOW, quote
from rag_system.generation.llm import estimate_tokens
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.retrieval.packer import evidence_label
from rag_system.retrieval.types import Candidate

QUESTION = "How many days of bereavement leave does an employee get for an immediate family member?"
BLOCKS = ("Bereavement leave is 5 working days for an immediate family member and 2 working days for an "
          "extended family member.",
          "Parental leave is 18 weeks per child, of which 6 weeks are fully paid.")


def block(number: int, text: str) -> EvidenceBlock:
    cand = Candidate(chunk_id=f"c{number}", document_id="d1", document_name="policy.pdf", chunk_index=number,
                     page_start=1, page_end=1, heading_path="", block_type="text", text=text, metadata="{}")
    return EvidenceBlock(number, cand, evidence_label(number, cand), text, estimate_tokens(text))


def test_a_sentence_far_below_the_best_is_not_quoted_for_the_question() -> None:
    found = quote(QUESTION, [block(1, BLOCKS[0]), block(2, BLOCKS[1])], 3)
    assert found is not None
    assert "Bereavement leave is 5 working days" in found.text
    assert "Parental" not in found.text and "[2]" not in found.text
    assert 0 < FAR_BELOW < 1


def test_led_by_a_draft_the_other_blocks_answer_is_kept() -> None:
    question = "Who makes the Atlas-7, and where are they based?"
    answer = "Model: Atlas-7 Dual Boiler (2026 revision C). Manufacturer: Meridian Coffee Systems, Tacoma WA."
    beside = "The Atlas-7 firmware makes no network call and stores its settings locally on the controller board."
    draft = " " + beside  # a failed draft about the other passage, whose block comes first (as in `_extract`)
    blocks = [block(2, beside), block(1, answer)]
    led = quote(question + draft, blocks, 3, asked=question)
    cut = quote(question + draft, blocks, 3)  # ranked as if the draft's words were the question's
    assert led is not None and cut is not None
    assert "Meridian Coffee Systems" in led.text
    assert "Meridian" not in cut.text  # what the exemption is for
