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
from rag_system.generation.replying import model_reply
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
