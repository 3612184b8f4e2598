"""The eval-side answer judges on real answer and corpus strings, the mistakes they once made among them."""

from __future__ import annotations

from eval.judge.claims import Claim, split_claims
from eval.judge.facts import extract_facts, supported
from eval.judge.leaks import context_line, response_leaks
from eval.judge.polarity import is_negative, sentence_errors, stance
from eval.judge.verdict import judge_trust, value_stated

NDA_SIGNATURES = ("IN WITNESS WHEREOF, the Parties have executed this NDA as of the date first above written.\n"
                  "TechCorp Industries, Inc. By: ______________________ Name: James Mitchell Title: CEO\n"
                  "StartupXYZ LLC By: ______________________ Name: Sarah Chen Title: Founder & CEO")
QUIC_STREAM_BITS = ("The least significant bit (0x01) of the stream ID identifies the initiator of the stream. "
                    "Client-initiated streams have even-numbered stream IDs (with the bit set to 0), and "
                    "server-initiated streams have odd-numbered stream IDs (with the bit set to 1).")
PRICE = ('1.2 "Purchase Price" means $45,000,000 USD as detailed in Exhibit A - Financial Terms.\n'
         "4.3 Largest customer (MegaCorp) accounts for 28% of revenue")


def _unsupported(sentence: str, evidence: str) -> list[str]:
    return [f.text for f in extract_facts(sentence) if not supported(f, evidence)]


def test_claims_follow_citation_markers_in_model_and_extractive_answers() -> None:
    model = "The default is 3 [1]. It means a multiplier of 8. [2][3] Ask again later."
    assert split_claims(model) == [Claim("The default is 3", (1,)), Claim("It means a multiplier of 8.", (2, 3)),
                                   Claim("Ask again later.", ())]
    extractive = "- Nothing in this NDA grants any rights. [1] Each Party shall return it. [1]\n- See Schedule 1. [2]"
    assert [c.citations for c in split_claims(extractive)] == [(1,), (1,), (2,)]
    assert split_claims("- [1, 4]") == []


def test_an_invented_salary_is_unsupported_by_the_signature_block_it_cites() -> None:
    answer = "The annual salary of TechCorp's CEO James Mitchell is $415,550."
    assert _unsupported(answer, NDA_SIGNATURES) == ["$415,550"]


def test_a_port_number_is_unsupported_by_an_unrelated_quic_passage() -> None:
    assert _unsupported("The default TCP port of a PostgreSQL server is 5432.", QUIC_STREAM_BITS) == \
        ["5432", "TCP", "PostgreSQL"]
    assert _unsupported("The least significant bit (0x01) of the stream ID identifies the initiator.",
                        QUIC_STREAM_BITS) == []


def test_numbers_compare_by_value_across_spellings() -> None:
    assert _unsupported("The purchase price is 45 million dollars.", PRICE) == []
    assert _unsupported("MegaCorp brings in 28 percent of revenue.", PRICE) == []
    assert _unsupported("The purchase price is $46,000,000.", PRICE) == ["$46,000,000"]
    assert _unsupported("It is $45M in total.", PRICE) == []


def test_a_hex_literal_in_a_block_states_its_value() -> None:
    datagram = "DATAGRAM Capsule { Type (i) = 0x00, Length (i), HTTP Datagram Payload (..) }"
    assert _unsupported("The DATAGRAM capsule type is 0.", datagram) == []
    assert _unsupported("The DATAGRAM capsule type is 1.", datagram) == ["1"]
    assert _unsupported("The port is 0.", "The mask 0xff applies.") == ["0"]


def test_identifiers_quotes_and_names_must_occur_as_written() -> None:
    manual = "The group head gasket (part MG-311) should be replaced every 14 months."
    assert _unsupported("Order gasket MG-311 every 14 months.", manual) == []
    assert _unsupported("Order gasket MG-312 every 14 months.", manual) == ["MG-312"]
    rfc = "If this value is absent, a default of 25 milliseconds is assumed for max_ack_delay."
    assert _unsupported('The "default of 25 milliseconds" applies to max_ack_delay.', rfc) == []
    assert _unsupported("The default applies to max_idle_timeout per Google.", rfc) == ["max_idle_timeout", "Google"]


def test_a_yes_against_a_doesnt_is_a_polarity_error() -> None:
    blocks = {1: "Limitations: This version doesn't handle the REAL type. It handles INTEGER and BOOLEAN."}
    errors = sentence_errors(split_claims("Yes, libtasn1 handles the REAL type [1]."), blocks)
    assert [(e.sentence, e.cited_sentence) for e in errors] == [
        ("Yes, libtasn1 handles the REAL type", "Limitations: This version doesn't handle the REAL type.")]
    assert sentence_errors(split_claims("This version doesn't handle the REAL type. [1]"), blocks) == []
    wrapped = {3: "   endpoint receives.  An endpoint MUST NOT\n   provide more connection IDs than the peer's limit.  An endpoint MAY\n"}
    assert sentence_errors(split_claims("An endpoint MUST NOT provide more connection IDs than the peer's limit. [3]"),
                           wrapped) == []
    doq = {2: "DoQ connections MUST NOT use UDP port 53."}
    assert len(sentence_errors(split_claims("DoQ connections may use UDP port 53 [2]."), doq)) == 1
    assert sentence_errors(split_claims("No, DoQ connections must not use UDP port 53 [2]."), doq) == []


def test_a_common_word_ends_a_name() -> None:
    block = "Figure 18: Retry Packet\n\n   A Retry packet does not contain any protected fields."
    assert _unsupported("Figure 18: Retry Packet A Retry packet does not contain any protected fields.", block) == []
    assert [f.text for f in extract_facts("He met The Board of Directors and Sarah Chen.") if f.kind == "name"] == \
        ["Board", "Directors", "Sarah Chen"]


def test_stance_reads_a_leading_yes_or_no_else_the_closest_sentence() -> None:
    documented = "Nothing in this NDA grants any rights to intellectual property"
    assert stance(split_claims("Yes, the NDA grants a licence [1]."), documented) == "positive"
    assert stance(split_claims("No. The NDA is about confidentiality [1]."), documented) == "negative"
    verbatim = "- Nothing in this NDA grants any rights to intellectual property, except as agreed. [1]"
    assert stance(split_claims(verbatim), documented) == "negative"
    assert stance(split_claims("No pending employment disputes. [1]"), "StartupXYZ owns 3 registered trademarks") \
        is None
    # A thing said to be gone is a "no" to "Can I still ...?" (neg_docs_01)
    gone = ("The graph_query outcome and the graph config blocks were deleted in August: the GraphRAG path "
            "was unreachable [1].")
    assert stance(split_claims(gone), "There is no GraphRAG path.") == "negative"
    # Sharing the topic is not taking a stance: the answer must be about the documented sentence itself.
    assert stance(split_claims("Endpoints MUST send Stateless Resets formatted as a short header packet. [1]"),
                  "Stateless Resets do not have any cryptographic protection.") is None
    assert is_negative("Stateless Resets do not have any cryptographic protection.")
    assert is_negative("Python does not allow leading ‘0’ in a decimal number")
    assert is_negative("This doesn’t guarantee privacy") and not is_negative("Backflushing is recommended weekly.")


def test_context_lines_are_found_in_answers_quotes_and_source_cards() -> None:
    names = {"07_nda.pdf"}
    assert context_line("07_nda.pdf > NON-DISCLOSURE AGREEMENT > 1.\nConfidential Information means", names) == \
        "07_nda.pdf > NON-DISCLOSURE AGREEMENT > 1."
    assert context_line("07_nda.pdf\nThis NDA shall remain in effect", names) == "07_nda.pdf"
    assert context_line("The NDA (07_nda.pdf) lasts three years.", names) is None
    payload = {"answer": "- 07_nda.pdf > NON-DISCLOSURE AGREEMENT > 3. TERM This NDA lasts. [1]",
               "citations": [{"n": 1, "document_name": "07_nda.pdf", "quote": "This NDA shall remain in effect"}],
               "source_documents": [{"n": 1, "document_name": "07_nda.pdf",
                                     "text": "07_nda.pdf > NON-DISCLOSURE AGREEMENT > 3. TERM\nThis NDA shall"}]}
    leaks = response_leaks(payload)
    assert (len(leaks["answer"]), len(leaks["quotes"]), len(leaks["sources"])) == (1, 0, 1)


def test_a_whole_verdict_for_a_numeric_and_a_refused_answer() -> None:
    payload = {"answer": "The NDA lasts three (3) years [1]. It was signed on October 2, 2024 [1].",
               "answer_source": "llm", "citations": [{"n": 1, "document_name": "07_nda.pdf", "quote": ""}],
               "source_documents": [{"n": 1, "document_name": "07_nda.pdf", "text":
                                     "This NDA shall remain in effect for three (3) years from the date first "
                                     "written above. It is entered into as of October 1, 2024."}]}
    verdict = judge_trust(payload, value="three (3) years")
    assert [f["text"] for f in verdict["unsupported_facts"]] == ["2"]
    assert verdict["numbers_supported"] is False and verdict["value_stated"] is True
    assert verdict["context_leaks"] == {"answer": 0, "quotes": 0, "sources": 0}
    refused = judge_trust({"answer": "The documents do not contain enough information to answer this question.",
                           "answer_source": "refusal", "citations": [], "source_documents": []})
    assert refused["unsupported_facts"] == [] and refused["numbers_supported"] is None


def test_a_value_is_stated_as_written_or_as_the_same_number() -> None:
    assert value_stated("one million", "timeit loops 1,000,000 times by default [1]")
    assert value_stated("$2.1 million", "EBITDA was $2,100,000 [1]")
    assert value_stated("10-60%", "It is between 10-60% faster [1]")
    assert not value_stated("$2.1 million", "EBITDA was $2.3 million [1]")


def test_markdown_list_items_in_a_block_are_sentences_of_their_own() -> None:
    block = ("Either could move the 12.7 s materially — that is unmeasured work, not a promise.\n"
             "- A later rerankers release may add a Qwen3 backend, at which point the route\n"
             "  should be revisited.")
    paraphrase = "A later rerankers release may add a Qwen3 backend, so the route should be revisited [1]."
    assert sentence_errors(split_claims(paraphrase), {1: block}) == []
    flipped = "A later rerankers release will not add a Qwen3 backend, so the route need not be revisited [1]."
    assert len(sentence_errors(split_claims(flipped), {1: block})) == 1


def test_the_half_of_a_sentence_a_claim_restates_decides_its_polarity() -> None:
    blocks = {1: "The cache is skipped when no overviews are loaded; otherwise the router reads the first 40 "
                 "loaded overviews."}
    assert sentence_errors(split_claims("The router uses the first 40 loaded overviews. [1]"), blocks) == []
    assert len(sentence_errors(split_claims("The cache is skipped when overviews are loaded. [1]"), blocks)) == 1
