"""The reply judge over the packaged model: a "No" where the sentence denies what was asked in other
words, and no reply where the model's "Yes" would rest on a sentence about something else.

The sentences are the shared corpora's own (RFC 9000, the acquisition's IP certification); the
verifier's rules settle neither question, which is why the judge exists.
"""

from __future__ import annotations

import pytest

from rag_system.config import load_settings
from rag_system.generation.llm import LLMBackend
from rag_system.generation.registry import BackendRegistry
from rag_system.generation.replying import answering_sentences, model_reply
from rag_system.grounding.verifier import Source, answer_to

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> LLMBackend:
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path_factory.mktemp("judge"))}, dotenv_path=None)
    backend = BackendRegistry(settings).backend("llamacpp")
    if not backend.status().available:
        pytest.skip(backend.status().detail)
    return backend


FINAL_SIZE = "Once a QUIC stream's final size is known, can the sender still change it?"
FINAL_SIZE_ANSWER = ("Once a final size for a stream is known, it cannot change. [1] An endpoint that receives "
                     "a RESET_STREAM frame responds with an error. [1]")


def test_a_denial_in_other_words_gets_its_no(model: LLMBackend) -> None:
    assert answer_to(FINAL_SIZE, [Source(1, FINAL_SIZE_ANSWER)]) is None  # the rules leave it open
    judged = model_reply(FINAL_SIZE, FINAL_SIZE_ANSWER, model)
    assert judged.reply == "no"
    assert judged.sentence == "Once a final size for a stream is known, it cannot change."
    assert judged.usage["prompt"] > 0


def test_no_yes_rests_on_a_sentence_about_something_else(model: LLMBackend) -> None:
    question = "Did the IP review find copyleft licence problems in the open-source code StartupXYZ uses?"
    answer = "StartupXYZ uses 47 open-source libraries. [1]"
    assert model_reply(question, answer, model).reply is None


def test_an_answer_without_the_question_terms_is_not_judged(model: LLMBackend) -> None:
    judged = model_reply(FINAL_SIZE, "Dear Mr. Mitchell, thank you for your letter. [1]", model)
    assert judged == type(judged)(None, "", {"prompt": 0, "completion": 0})


STATELESS_RESET = "Are QUIC stateless resets cryptographically protected?"
# The negation row's quote (RFC 9000), the size sentence first: it holds as much of the question as
# the denial, is judged before it, and the model reads it as "Yes".
STATELESS_RESET_ANSWER = (
    "- For the Stateless Reset to appear as a valid QUIC packet, the Unpredictable Bits field needs to include "
    "at least 38 bits of data (or 5 bytes, less the two fixed bits). [3] The resulting minimum size of 21 bytes "
    "does not guarantee that a Stateless Reset is difficult to distinguish from other packets if the recipient "
    "requires the use of a connection ID. [3]\n"
    "- Note that Stateless Resets do not have any cryptographic protection. [1]\n"
    "- Another approach would be to store and compare the transformed values of stateless reset tokens instead "
    "of the raw token values, where the transformation is defined as a cryptographically secure pseudorandom "
    "function using a secret key (e.g., block cipher, Hashed Message Authentication Code (HMAC) [RFC2104]). [4]")


def test_a_yes_about_something_else_does_not_stop_the_denial(model: LLMBackend) -> None:
    first = answering_sentences(STATELESS_RESET, STATELESS_RESET_ANSWER)[0]
    assert first.startswith("For the Stateless Reset") and model_reply(STATELESS_RESET, first, model).reply is None
    judged = model_reply(STATELESS_RESET, STATELESS_RESET_ANSWER, model)
    assert judged.reply == "no"
    assert judged.sentence == "Note that Stateless Resets do not have any cryptographic protection."


def test_negating_sentences_sharing_one_word_of_the_question_are_not_judged(model: LLMBackend) -> None:
    # Tried in the web app over three of localGPT's design documents: the model read "No" here.
    question = "Is the reranker switched on out of the box?"
    answer = ("- A reranker that fails to load logs a warning and is skipped \u2014 there is no fallback reranker. [1] "
              "Why this is the most counter-intuitive decision in the repo. [1]\n"
              "- Consequence, stated plainly: the earlier posture \u2014 no shipped profile enables sub-query scoring "
              "at rerank \u2014 held while the default profile kept the reranker off and compose_from_sub_answers: "
              "true. [1] Arm G turned the reranker on (2026-08-14), so the aggregation path now runs by default, and "
              "arm H (2026-08-15) made the pooled first stage the default decomposition path. [1]")
    assert model_reply(question, answer, model).reply is None
