"""Flash attention (`LLM_FLASH_ATTN`, on by default) over the packaged model: the setting reaches
llama.cpp, and the answer is the one plain attention gives, so turning it on buys a faster prompt
read and changes no checked answer."""

from __future__ import annotations

import llama_cpp
import pytest

from rag_system.config import load_settings
from rag_system.generation.backends.llamacpp import LlamaCppBackend
from rag_system.generation.llm import GenerationParams, Message
from rag_system.generation.registry import BackendRegistry

pytestmark = pytest.mark.slow

PASSAGE = ("[1] Sick leave is paid at 100 percent of base salary for the first 12 weeks of a single absence, "
           "and at 60 percent for a further 8 weeks. A medical certificate is required once an absence "
           "exceeds 4 consecutive working days.")
QUESTION = "How long is sick leave paid in full, and when is a medical certificate needed?"


def _backend(tmp_path_factory: pytest.TempPathFactory, flash: str) -> LlamaCppBackend:
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path_factory.mktemp("attention")),
                                      "LLM_FLASH_ATTN": flash, "LLM_CONTEXT_TOKENS": "2048"}, dotenv_path=None)
    backend = BackendRegistry(settings).backend("llamacpp")
    if not backend.status().available:
        pytest.skip(backend.status().detail)
    assert isinstance(backend, LlamaCppBackend)
    return backend


def test_flash_attention_reaches_llama_cpp_and_keeps_the_answer(tmp_path_factory: pytest.TempPathFactory) -> None:
    messages = [Message("system", "Answer from the passage only and cite it as [1]."),
                Message("user", f"{PASSAGE}\n\nQuestion: {QUESTION}")]
    answers = {}
    for flash, kind in (("true", llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED),
                        ("false", llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED)):
        backend = _backend(tmp_path_factory, flash)
        backend.load()
        assert backend._llm.context_params.flash_attn_type == kind
        answers[flash] = backend.complete(messages, GenerationParams(max_tokens=48)).text
        backend._llm.close()
    assert "12 weeks" in answers["true"]
    assert answers["true"] == answers["false"]
