"""The answer loop on deliberately broken answers: every path, including the refusal.

The model is replaced by a scripted backend (a stand-in for an external LLM, not
for any of our components): it returns exactly the text each test needs, so each
branch of validation, attribution, repair, extractive replacement and refusal is
exercised with real native validation and real evidence blocks.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

import pytest

from rag_system.grounding.citations import check, validate
from rag_system.generation.extractive import extractive_answer
from rag_system.generation.llm import (
    BackendStatus,
    Completion,
    GenerationFailedError,
    GenerationParams,
    LLMBackend,
    Message,
    StreamResult,
    estimate_tokens,
)
from rag_system.generation.prompts import REFUSAL_TEXT, is_refusal, normalise_answer
from rag_system.generation.registry import ExtractiveBackend
from rag_system.generation.synthesis import Cancelled, SynthesisOptions, Synthesizer
from rag_system.retrieval.evidence import EvidenceBlock
from rag_system.retrieval.packer import evidence_label
from rag_system.retrieval.types import Candidate

QUIC = ("ack_delay_exponent (0x0a): The acknowledgment delay exponent is an integer value indicating an "
        "exponent used to decode the ACK Delay field in the ACK frame. If this value is absent, a default "
        "value of 3 is assumed (indicating a multiplier of 8). Values above 20 are invalid.")
ACK = ("max_ack_delay (0x0b): The maximum acknowledgment delay is an integer value indicating the maximum "
       "amount of time in milliseconds by which the endpoint will delay sending acknowledgments. If this "
       "value is absent, a default of 25 milliseconds is assumed.")
QUESTION = "What value is assumed when the ack_delay_exponent transport parameter is absent?"


def block(n: int, text: str, name: str = "rfc9000.txt", page: int = 45) -> EvidenceBlock:
    cand = Candidate(chunk_id=f"c{n}", document_id="d1", document_name=name, chunk_index=n, page_start=page,
                     page_end=page, heading_path="", block_type="text", text=text, metadata="{}")
    return EvidenceBlock(n, cand, evidence_label(n, cand), text, estimate_tokens(text))


BLOCKS = [block(1, QUIC), block(2, ACK, page=46)]


class Scripted(LLMBackend):
    """Returns the scripted answers in order; records every prompt it was given."""

    name = "scripted"

    def __init__(self, *answers: str, fail_after: int | None = None) -> None:
        self.answers = list(answers)
        self.prompts: list[list[Message]] = []
        self.fail_after = fail_after

    def status(self) -> BackendStatus:
        return BackendStatus(self.name, True, "script")

    def context_window(self, model: str | None = None) -> int:
        return 8192

    def count_tokens(self, text: str, model: str | None = None) -> int:
        return estimate_tokens(text)

    def stream(self, messages: list[Message], params: GenerationParams,
               result: StreamResult) -> Iterator[str]:
        self.prompts.append(messages)
        text = self.answers.pop(0)
        for i, word in enumerate(text.split(" ")):
            if self.fail_after is not None and i >= self.fail_after:
                raise GenerationFailedError("connection reset mid-answer")
            piece = word if i == 0 else " " + word
            result.chunks.append(piece)
            yield piece
        result.completion = Completion(text, 100, len(text.split()), "script-1")


def run(backend: LLMBackend, question: str = QUESTION, blocks=BLOCKS, **options):
    answer, events = run_with_data(backend, question, blocks, **options)
    return answer, [e for e, _ in events]


def run_with_data(backend: LLMBackend, question: str = QUESTION, blocks=BLOCKS, **options):
    events: list[tuple[str, dict]] = []
    answer = Synthesizer().answer(question, blocks, [backend, ExtractiveBackend()],
                                  SynthesisOptions(**options), lambda e, d: events.append((e, d)))
    return answer, events


def test_valid_answer_is_kept_as_llm():
    backend = Scripted("A default value of 3 is assumed for the exponent [1].")
    answer, events = run(backend)
    assert answer.answer_source == "llm"
    assert answer.validation["valid"] and len(backend.prompts) == 1
    assert [c["n"] for c in answer.citations] == [1]
    assert "default value of 3" in answer.citations[0]["quote"]
    assert answer.citations[0]["page_start"] == 45
    assert "token" in events and "answer_repaired" not in events
    assert 0.0 <= answer.confidence <= 1.0


def test_a_valid_answer_also_cites_the_other_blocks_that_state_its_facts():
    """Corroboration: [3] says the same value of the same parameter, [2] shares words but not the value."""
    same = block(3, "Table 7: ack_delay_exponent is absent by default; a default value of 3 is assumed for "
                    "the exponent by the peer.", page=140)
    backend = Scripted("A default value of 3 is assumed for the exponent [1].")
    answer, events = run(backend, blocks=[*BLOCKS, same])
    assert answer.answer_source == "llm" and "answer_corroborated" in events
    assert answer.answer == "A default value of 3 is assumed for the exponent [1, 3]."
    assert [c["n"] for c in answer.citations] == [1, 3] and answer.validation["valid"]


def test_a_fact_cited_to_the_wrong_block_is_recited_to_the_block_that_states_it():
    backend = Scripted("If the max_ack_delay value is absent, a default of 25 milliseconds is assumed [1].")
    answer, events = run_with_data(backend, "What maximum acknowledgment delay is assumed when max_ack_delay is absent?")
    assert answer.first_validation["claims"][0]["missing"] == ["max_ack_delay", "25"]
    assert answer.answer_source == "llm_repaired" and len(backend.prompts) == 1  # no model round needed
    # [2] alone says it, so it takes the place of [1], which does not
    assert answer.answer.endswith("[2].") and [c["n"] for c in answer.citations] == [2]
    assert ("answer_repaired", "citation") in [(e, d.get("method")) for e, d in events]


def test_a_sentence_without_a_specific_fact_is_not_corroborated():
    backend = Scripted("The exponent decodes the ACK Delay field in the ACK frame [1].")
    other = block(3, "The ACK Delay field in the ACK frame is decoded with the exponent.", page=140)
    answer, events = run(backend, question="What decodes the ACK Delay field?", blocks=[*BLOCKS, other])
    assert answer.answer_source == "llm" and "answer_corroborated" not in events
    assert [c["n"] for c in answer.citations] == [1]


def test_uncited_but_supported_sentence_is_attributed():
    backend = Scripted("If the value is absent, a default value of 3 is assumed.")
    answer, events = run(backend)
    assert answer.answer_source == "llm_repaired"
    assert answer.first_validation["uncited"] == [0]
    assert answer.answer.endswith("[1].")
    assert answer.validation["attributed"] == 1 and len(backend.prompts) == 1
    assert "answer_repaired" in events


def test_unknown_block_number_goes_to_a_model_repair():
    backend = Scripted("A default value of 3 is assumed [7].", "A default value of 3 is assumed [1].")
    answer, events = run(backend)
    assert answer.first_validation["unknown"] == [7]
    assert answer.answer_source == "llm_repaired"
    assert len(backend.prompts) == 2
    repair_prompt = backend.prompts[1][-1].content
    assert "[7]" in repair_prompt and "do not exist" in repair_prompt
    assert "repair" in answer.usage


def test_the_answer_is_a_value_carrying_every_model_call():
    """Built once: the repair round's tokens come back in the answer, after the draft's, not through
    a dict the caller passed; and no stage can change an answer after it is built."""
    answer, _ = run(Scripted("A default value of 3 is assumed [7].", "A default value of 3 is assumed [1]."))
    assert list(answer.usage) == ["synthesis", "repair"]
    assert answer.backend == "scripted" and answer.coverage > 0 and "generation_ms" in answer.timings_ms
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.answer = "changed"  # type: ignore[misc]


def test_invented_quote_that_survives_repair_is_replaced_by_an_extract():
    invented = 'The RFC says "the exponent defaults to five when missing" [1].'
    backend = Scripted(invented, invented)
    answer, events = run(backend)
    assert answer.first_validation["bad_quotes"][0]["quote"] == "the exponent defaults to five when missing"
    assert answer.answer_source == "extractive"
    assert "answer_replaced" in events
    assert "default value of 3" in answer.answer and answer.validation["valid"]


def test_uncited_unsupported_answer_without_matching_evidence_is_a_refusal():
    question = "What colour is the sky at dusk?"
    backend = Scripted("It is blue like the sky.", "It is still blue.")
    answer, _ = run(backend, question=question, min_coverage=0.0, min_ask=0.0)  # past the rules before the model
    assert answer.answer_source == "refusal"
    assert answer.answer == REFUSAL_TEXT and answer.citations == []
    assert len(backend.prompts) == 2


def test_question_the_evidence_does_not_mention_is_refused_before_any_model_runs():
    backend = Scripted("Ulaanbaatar [1].")
    answer, events = run(backend, question="What is the capital of Mongolia?")
    assert answer.answer_source == "refusal" and backend.prompts == []
    assert "mongolia" in answer.refusal_reason
    assert events == ["refusal"]


def test_no_evidence_is_a_refusal():
    answer, _ = run(Scripted("x"), blocks=[])
    assert answer.answer_source == "refusal" and "no evidence" in answer.refusal_reason


WARRANTY = block(1, "The Atlas-7 carries a 36-month parts warranty. The warranty is void if descaling agents "
                   "with citric acid above 8 percent are used.", name="atlas7_manual.pdf")
BREW = block(2, "Grind size for a double shot is set to fine, step 4 on the burr dial. A double shot takes "
               "18 grams of coffee.", name="atlas7_manual.pdf")


PTO_FORMULA = block(1, "The sender arms the timer for the probe timeout period as follows: "
                       "PTO = smoothed_rtt + max(4*rttvar, kGranularity) + max_ack_delay", name="rfc9002.txt")
PTO_TAIL = block(2, "Probes let a connection recover from the loss of tail packets and of acknowledgments.",
                 name="rfc9002.txt")


def test_a_draft_without_the_asked_formula_does_not_choose_the_quote():
    question = "How is the probe timeout period computed?"
    vague = "It is computed from the loss of tail packets and of acknowledgments [2]."  # valid, and no formula
    answer, _ = run(Scripted(vague, vague), question=question, blocks=[PTO_FORMULA, PTO_TAIL],
                    extractive_sentences=1)
    assert answer.first_validation["no_quantity"] is True
    assert answer.answer_source == "extractive" and "max(4*rttvar" in answer.answer


def test_asked_how_many_a_quote_prefers_a_sentence_with_a_number():
    from rag_system.generation.extractive import quote
    blocks = [block(1, "Each endpoint limits the streams its peer may open at any time."),
              block(2, "Initially an endpoint's peer may open at most 100 streams.")]
    found = quote("How many streams may an endpoint's peer open?", blocks, max_sentences=1)
    assert found is not None and "100" in found.text
    assert "100" not in quote("Which streams may an endpoint's peer open?", blocks, max_sentences=1).text


def test_a_valid_answer_whose_cited_blocks_do_not_say_what_is_asked_is_quoted_instead():
    # the default model, asked for a grind size, stated the warranty terms, each fact cited and true
    question = "What grind size should I use for a double espresso shot on the Atlas-7?"
    backend = Scripted("The Atlas-7 carries a 36-month parts warranty [1].")
    answer, events = run(backend, question=question, blocks=[WARRANTY, BREW])
    assert answer.answer_source == "extractive" and "answer_replaced" in events
    assert "step 4" in answer.answer  # the quote is chosen by the question and the draft
    alone, _ = run(Scripted("The Atlas-7 carries a 36-month parts warranty [1]."), question=question,
                   blocks=[WARRANTY], min_coverage=0.0)  # past the coverage rule, to the model
    assert alone.answer_source == "refusal" and "do not say" in alone.refusal_reason
    kept, _ = run(Scripted("Use a fine grind, step 4 on the burr dial, for a double shot [2]."),
                  question=question, blocks=[WARRANTY, BREW])
    assert kept.answer_source == "llm"


def test_model_refusal_is_trusted_when_the_passages_do_not_hold_what_the_question_asks():
    backend = Scripted(REFUSAL_TEXT)
    answer, _ = run(backend, question="Which congestion controller tracks the variance of round trips?",
                    min_coverage=0.0)
    assert answer.answer_source == "refusal" and len(backend.prompts) == 1
    assert "the model found no answer" in answer.refusal_reason


def test_model_refusal_is_overruled_when_the_quote_holds_what_the_question_asks():
    backend = Scripted(REFUSAL_TEXT)
    answer, events = run(backend, question="Which maximum acknowledgment delay is assumed when it is absent?")
    assert answer.answer_source == "extractive" and "answer_replaced" in events
    assert "25 milliseconds" in answer.answer, answer.answer


def test_model_refusal_is_overruled_when_a_sentence_matches_the_question_closely():
    backend = Scripted("The documents do not say.")
    answer, events = run(backend, question="Which default value is assumed if the value is absent?")
    assert answer.answer_source == "extractive"
    # the decline was never shown: nothing unchecked reaches the stream, the quote replaces it
    assert "token" not in events and events.index("citations") < events.index("answer_replaced")
    assert "[1]" in answer.answer or "[2]" in answer.answer


def _quote_only(b):
    from dataclasses import replace
    return replace(b, in_prompt=False)


def test_the_model_reads_only_its_prompt_blocks_and_cannot_cite_the_others():
    """Block 2 is quoting's wider evidence (`packer.widen`): never in the prompt, so [2] is unknown to the model."""
    blocks = [BLOCKS[0], _quote_only(BLOCKS[1])]
    backend = Scripted("A default of 25 milliseconds is assumed [2].", "A default of 25 milliseconds is assumed [2].")
    answer, _ = run(backend, question="Which maximum acknowledgment delay is assumed when it is absent?",
                    blocks=blocks)
    prompt = backend.prompts[0][-1].content
    assert "ack_delay_exponent (0x0a)" in prompt and "max_ack_delay (0x0b)" not in prompt
    assert answer.first_validation["unknown"] == [2]
    # the replacement quote chooses from all the evidence, the block the model never read included
    assert answer.answer_source == "extractive" and "25 milliseconds" in answer.answer and "[2]" in answer.answer


def test_a_declined_question_is_quoted_from_the_wider_evidence():
    blocks = [BLOCKS[0], _quote_only(BLOCKS[1])]
    backend = Scripted(REFUSAL_TEXT)
    answer, events = run(backend, question="Which maximum acknowledgment delay is assumed when it is absent?",
                         blocks=blocks)
    assert answer.answer_source == "extractive" and "answer_replaced" in events
    assert "25 milliseconds" in answer.answer and 2 in [c["n"] for c in answer.citations]


def test_backend_failing_mid_answer_falls_through_and_says_so():
    backend = Scripted("A default value of 3 is assumed [1].", fail_after=3)
    answer, events = run(backend)
    assert answer.answer_source == "extractive" and answer.backend == "extractive"
    assert answer.fallbacks[0]["backend"] == "scripted"
    assert "backend_fallback" in events


def test_repair_off_replaces_invalid_answer_directly():
    backend = Scripted("A default value of 3 is assumed [9].")
    answer, _ = run(backend, repair=False)
    assert answer.answer_source == "extractive" and len(backend.prompts) == 1


def test_cancel_stops_generation():
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        Synthesizer().answer(QUESTION, BLOCKS, [Scripted("A default value of 3 [1].")], SynthesisOptions(),
                             lambda e, d: None, cancel)


def test_extractive_backend_alone_cites_verbatim_sentences():
    answer, _ = run(ExtractiveBackend())
    assert answer.answer_source == "extractive" and answer.validation["valid"]
    assert "default value of 3 is assumed" in answer.answer

def test_a_quote_does_not_take_all_its_sentences_from_the_top_block():
    # rfc_q05/q16/q21: the top block's overview sentences share the question's words; the one that
    # answers is in the next block, and three picks from block 1 never reached it.
    overview = block(1, "Audit logs are kept on the primary server. Audit logs are kept encrypted at rest. "
                        "Audit logs are kept in the archive room.", name="policy.md")
    answer = block(2, "Audit logs are kept for seven years.", name="policy.md", page=20)
    text = extractive_answer("How long are audit logs kept?", [overview, answer])
    assert text is not None and "seven years. [2]" in text and validate(text, [overview, answer]).valid


def test_a_sentence_that_reads_as_a_citation_is_not_quoted():
    # pydocs' sorting HOWTO: the list literals read as markers [5, 2, 3, 1, 4] and [1, 2, 3, 4, 5]
    sorting = block(1, "It returns a new sorted list: >>> sorted([5, 2, 3, 1, 4]) [1, 2, 3, 4, 5] is shown. "
                       "The list.sort() method modifies the list in-place and returns None.", name="sorting.md")
    text = extractive_answer("Does list.sort() return the sorted list?", [sorting])
    assert text is not None and "returns None" in text and "[5," not in text
    assert validate(text, [sorting]).valid


@pytest.mark.parametrize("raw, expected", [
    ("Answer: It is 3 [Source 1].", "It is 3 [1]."),
    ("It is 3 [ 1 ].", "It is 3 [1]."),
    ("It is 3 [source 1, 2].", "It is 3 [1, 2]."),
    ("It is 3 [1].", "It is 3 [1]."),
])
def test_normalise_answer(raw, expected):
    assert normalise_answer(raw) == expected


@pytest.mark.parametrize("text, refused", [
    (REFUSAL_TEXT, True),
    ("The documents do not say.", True),
    ("The provided sources do not mention Mongolia.", True),
    ("I don't know.", True),
    ("The documents say the default is 3 [1].", False),
    ("A default value of 3 is assumed [1]. The documents do not say more.", False),
])
def test_is_refusal(text, refused):
    assert is_refusal(text) is refused


def test_citation_that_the_block_does_not_support_is_caught_and_repaired():
    backend = Scripted("The exponent is negotiated by the congestion controller during slow start [1].",
                       "A default value of 3 is assumed [1].")
    answer, _ = run(backend)
    assert answer.first_validation["unsupported"] == [0]
    assert answer.answer_source == "llm_repaired"
    assert "does not say this" in backend.prompts[1][-1].content


def test_an_unsupported_claim_is_never_accepted_and_verify_only_rates_the_answer():
    claim = "The exponent is negotiated by the congestion controller during slow start [1]."
    for verify in (False, True):  # `verify` asks for a confidence rating; every answer is checked regardless
        assert run(Scripted(claim, claim), verify=verify)[0].answer_source == "extractive"
    right = "A default value of 3 is assumed for the exponent [1]."
    assert run(Scripted(right), verify=False)[0].confidence is None
    assert run(Scripted(right), verify=True)[0].confidence is not None


def test_specific_names_weigh_double_in_coverage():
    from rag_system.grounding.terms import coverage

    share, missing = coverage("What is the capital of Mongolia?", ["Header names never use capitals."])
    assert missing == ["mongolia"] and share < 0.5


def test_paraphrase_with_low_word_overlap_is_answered_when_it_embeds_close():
    # The similarity rescue lets a paraphrase past the coverage check; the quoted block must
    # still hold what the question asks (here "multiplier" and "exponent" are in block 1).
    question = "Which multiplier is implied for the exponent?"
    strict = SynthesisOptions(min_coverage=0.9)
    close = Synthesizer().answer(question, BLOCKS, [ExtractiveBackend()], strict, similarity=0.6)
    far = Synthesizer().answer(question, BLOCKS, [ExtractiveBackend()], strict, similarity=0.2)
    assert far.answer_source == "refusal"
    assert close.answer_source == "extractive" and "[1]" in close.answer


def test_close_embedding_does_not_make_quotes_answer_what_they_do_not_say():
    # Issue 18: topically close passages share the question's words and embed close; an
    # extractive answer from them is a guess unless the quoted block holds the ask.
    question = "How is the ACK Delay scaling factor chosen when nothing is sent?"
    low, _ = run(ExtractiveBackend(), question=question)
    close = Synthesizer().answer(question, BLOCKS, [ExtractiveBackend()], SynthesisOptions(), similarity=0.6)
    assert low.answer_source == "refusal" and close.answer_source == "refusal"
    assert "do not say" in (close.refusal_reason or "")


def test_copied_evidence_labels_are_not_an_answer():
    backend = Scripted(f"{BLOCKS[0].label} {BLOCKS[0].label}", f"{BLOCKS[1].label}")
    answer, _ = run(backend)
    assert answer.answer_source in ("extractive", "refusal")
    assert BLOCKS[0].label not in answer.answer


# -- fact-level claim check (issue 18) --------------------------------------------------------------

def test_an_invented_number_is_repaired_or_replaced_never_shown():
    backend = Scripted("A default value of 5 is assumed for the exponent [1].",
                       "A default value of 5 is assumed for the exponent [1].")
    answer, events = run(backend)
    assert answer.answer_source in ("extractive", "refusal")
    assert "value of 5" not in answer.answer
    assert answer.first_validation["claims"][0]["missing"] == ["5"]
    repair_prompt = backend.prompts[1][-1].content
    assert "does not give 5" in repair_prompt


def test_a_repair_that_states_the_cited_number_is_kept():
    backend = Scripted("A default value of 5 is assumed for the exponent [1].",
                       "A default value of 3 is assumed for the exponent [1].")
    answer, _ = run(backend)
    assert answer.answer_source == "llm_repaired" and "value of 3" in answer.answer


REAL = block(1, "Limitations: This version doesn't handle the REAL type. Other types are supported.",
             name="libtasn1-README.txt")


def test_yes_against_a_block_that_says_no_is_never_shown():
    question = "Does libtasn1 support the ASN.1 REAL type?"
    backend = Scripted("Yes, libtasn1 handles the REAL type [1].", "Yes, the REAL type is handled [1].")
    answer, _ = run(backend, question=question, blocks=[REAL])
    assert not answer.answer.startswith("Yes")
    assert answer.first_validation["claims"][0]["opposite"].endswith("doesn't handle the REAL type.")
    assert "says the opposite" in backend.prompts[1][-1].content


def test_an_answer_with_the_documented_negation_is_kept():
    question = "Does libtasn1 support the ASN.1 REAL type?"
    answer, _ = run(Scripted("No, this version doesn't handle the REAL type [1]."), question=question, blocks=[REAL])
    assert answer.answer_source == "llm" and answer.validation["claims"] == []


@pytest.mark.parametrize("question, draft, fixed, finding, told, kept", [
    ("What value is assumed when the ack_delay_exponent transport parameter is absent?",
     "The acknowledgment delay exponent is used to decode the ACK Delay field [1].",
     "A default value of 3 is assumed [1].", "no_quantity", "gives none", "3"),
    ("Which exponent is used to decode the ACK Delay field in the ACK frame?",  # the question handed back
     "The exponent is used to decode the ACK Delay field in the ACK frame [1].",
     "The acknowledgment delay exponent (ack_delay_exponent) decodes it [1].", "echo", "only repeats the question",
     "ack_delay_exponent"),
])
def test_an_answer_that_does_not_answer_goes_to_repair(question, draft, fixed, finding, told, kept):
    backend = Scripted(draft, fixed)
    answer, _ = run(backend, question=question)
    assert answer.first_validation[finding] is True
    assert told in backend.prompts[1][-1].content
    assert answer.answer_source == "llm_repaired" and kept in answer.answer


@pytest.mark.parametrize("question, answer, echo", [
    ("What round-trip time estimate should a QUIC sender start from before it has measured any samples?",
     "The round-trip time (RTT) estimate should a QUIC sender start from before it has measured any samples [1].",
     True),  # "RTT" spells the question's own words
    ("What round-trip time estimate should a QUIC sender start from?",
     "The initial RTT SHOULD be set to 333 milliseconds [1].", False),
    ("Which frame types does the datagram extension add to QUIC?",
     "The datagram extension adds the frame types 0x30 and 0x31 to QUIC [1].", False),
    # yes/no: restating the question is a "yes", which one sentence of the cited block must say
    ("Does the agent do any pattern matching on the query before it asks a model to route it?",
     "The agent does pattern matching on the query before it asks a model to route it [1].", True),
    ("Does the agent match patterns in the query?", "The agent matches patterns in the query [1].", False),
    # a "Yes," in front is the reply, not something the documents said (neg_pydocs_02)
    ("Does the agent do any pattern matching on the query before it asks a model to route it?",
     "Yes, the agent does pattern matching on the query before it asks a model to route it [1].", True),
    ("Does the agent match patterns in the query?", "Yes, the agent matches patterns in the query [1].", False),
])
def test_echoes(question: str, answer: str, echo: bool):
    from rag_system.grounding.citations import echoes, validate
    evidence = block(1, "Layer 2, the agent, is the single LLM routing layer: it decides rag_query vs direct_answer. "
                        "The weakest measured pattern of 2026 is pre-retrieval routing on the query by a model. "
                        "The agent matches patterns in the query only for greetings.")
    report = validate(answer, [evidence])
    assert echoes(question, answer, report.sentences, {1: evidence}) is echo


def test_a_label_copied_without_its_number_is_taken_off_the_start_of_a_line():
    where = BLOCKS[0].label.split("] ", 1)[1]  # "rfc9000.txt, p. 45"
    backend = Scripted(f"{where} A default value of 3 is assumed for the exponent [1].")
    answer, _ = run(backend)
    assert answer.answer_source == "llm" and answer.answer.startswith("A default value of 3")


SIGNATURES = block(3, "IN WITNESS WHEREOF, the parties have executed this Agreement. TechCorp Inc. By: James "
                      "Mitchell, Chief Executive Officer.", name="acquisition.pdf", page=9)


def test_an_ask_the_cited_block_lacks_fails_the_check():
    answer = "The annual salary of TechCorp's CEO James Mitchell is stated in the agreement [3]."
    report = check(answer, [SIGNATURES], question="What is the annual salary of TechCorp's CEO James Mitchell?")
    assert not report.valid and report.claims[0]["cited"] == [3]
    assert "'annual', 'salary'" in " ".join(report.claims[0]["findings"])


def test_one_echoed_word_of_the_question_is_not_an_unsupported_ask():
    question = ("If a QUIC endpoint never sends the ack_delay_exponent transport parameter, what value is "
                "its peer supposed to assume?")
    answer = "If the value is absent, the peer is supposed to assume a default value of 3 [1]."  # 2 of 4 missing
    report = check(answer, BLOCKS, question=question)
    assert report.claims == [] and report.valid


RESET = block(1, "A stateless reset is sent by an endpoint that cannot process a packet. An endpoint that receives "
                 "a Stateless Reset Token can verify it.", name="rfc9000.txt", page=60)


def test_a_yes_no_cited_sentence_states_goes_to_repair():
    report = check("Yes, QUIC stateless resets are cryptographically protected [1].", [RESET])
    assert not report.valid and report.claims[0]["verdict"] != "supported"
    assert any("does not say this" in p for p in report.problems("Yes, QUIC stateless resets ... [1]."))
    fine = check("Yes, an endpoint that receives a Stateless Reset Token can verify it [1].", [RESET])
    assert fine.valid, fine.to_json()


def test_a_quote_is_not_extended_by_a_lists_next_number() -> None:
    """A short pick takes the sentence after it, but not "7.", the number of the next list item."""
    from rag_system.generation.extractive import quote

    text = ("6. Sentence pruning is opt-in and drops sentences below the threshold.\n7.\n"
            "Reranking then orders the remaining chunks by score.")
    found = quote("How is sentence pruning enabled?", [block(1, text)])
    assert found is not None and "drops sentences below the threshold. [1]" in found.text
    assert "7." not in found.text.replace("6. ", ""), found.text



BOILERS = block(1, "The brew boiler operates at a pressure of 9.2 bar during extraction. The steam boiler is maintained "
                   "at 1.45 bar. The PID controller keeps brew water at 93.5 degrees Celsius with a tolerance of 0.4 "
                   "degrees.", name="atlas7_service_manual.pdf")


def test_a_quantity_of_another_kind_than_asked_goes_to_repair_and_then_to_a_quote_without_it():
    # Found in the web app: a true, cited pressure given for a temperature passed every check.
    question = "What is the temperature of the brew boiler?"
    pressure = "The brew boiler operates at a pressure of 9.2 bar during extraction [1]."
    backend = Scripted(pressure, pressure)
    answer, _ = run(backend, question=question, blocks=[BOILERS], extractive_sentences=1)
    assert answer.first_validation["other_quantity"] == "temperature"
    assert "asks for a temperature" in backend.prompts[1][-1].content
    # the quote is chosen by the question, not by the pressure draft's words
    assert answer.answer_source == "extractive" and "93.5 degrees Celsius" in answer.answer
    assert "9.2 bar" not in answer.answer


def test_a_quantity_of_the_asked_kind_passes():
    right = "The PID controller keeps brew water at 93.5 degrees Celsius [1]."
    answer, _ = run(Scripted(right), question="What is the temperature of the brew boiler?", blocks=[BOILERS])
    assert answer.answer_source == "llm" and answer.validation["other_quantity"] is None


def test_quoting_prefers_a_value_in_the_units_asked_for():
    # the pressure sentence shares "brew boiler" with the question, the one with degrees only "brew"
    from rag_system.generation.extractive import quote
    found = quote("What is the temperature of the brew boiler?", [BOILERS], max_sentences=1)
    assert found is not None and "93.5 degrees Celsius" in found.text and "9.2 bar" not in found.text


LEAVE = block(1, "Parental leave is 18 weeks per child. Employees below Grade 7 accrue 23 days of paid annual leave per "
                 "calendar year. Bereavement leave is 5 working days for an immediate family member and 2 working "
                 "days for an extended family member.", name="northwind_leave_policy.pdf")


def test_quoting_stops_where_the_answer_stops():
    # found in the web app: the annual-leave and parental-leave sentences came with the bereavement one
    from rag_system.generation.extractive import quote
    found = quote("How many days of bereavement leave does an employee get for an immediate family member?", [LEAVE])
    assert found is not None and found.text.startswith("Bereavement leave is 5 working days")
    assert "annual leave" not in found.text and "Parental" not in found.text


PARENTAL = block(1, "Parental leave is 18 weeks per child, of which 6 weeks are fully paid. Parental leave may be split "
                    "into no more than 3 separate blocks.", name="northwind_leave_policy.pdf")


def test_a_yes_that_its_own_sentence_denies_goes_to_repair():
    # found in the web app: the reply contradicts the policy's sentence that follows it, word for word
    question = "Can parental leave be split into more than three blocks?"
    flipped = "Yes, parental leave may be split into no more than 3 separate blocks [1]."
    backend = Scripted(flipped, "No, parental leave may be split into no more than 3 separate blocks [1].")
    answer, _ = run(backend, question=question, blocks=[PARENTAL])
    assert any("answers no, not yes" in f for c in answer.first_validation["claims"] for f in c["findings"])
    assert "answers no, not yes" in backend.prompts[1][-1].content
    assert answer.answer_source == "llm_repaired" and answer.answer.startswith("No,")
