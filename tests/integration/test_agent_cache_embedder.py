"""The semantic cache with the real packaged MiniLM embedder.

Why: the 0.98 threshold only means something for real query embeddings. A
trivial rewording (case, trailing "?", extra spaces) must hit; a different
question on the same topic must miss; another session must never hit.
"""

from __future__ import annotations

import pytest

from rag_system.agent.cache import CacheScope, SemanticCache
from rag_system.config import load_settings
from rag_system.embedding.minilm import MiniLMEmbedder
from rag_system.embedding.registry import shared_embedder

pytestmark = pytest.mark.slow

ORIGINAL = "What value does a peer assume when ack_delay_exponent is absent?"
SAME = [
    "what value does a peer assume when ack_delay_exponent is absent",
    "What value does a peer assume when ack_delay_exponent is absent ?",
    "WHAT VALUE DOES A PEER ASSUME WHEN ACK_DELAY_EXPONENT IS ABSENT?",
    "  What value does a peer assume when   ack_delay_exponent is absent?? ",
]
DIFFERENT = [
    "What value does a peer assume when max_ack_delay is absent?",
    "How is the ACK Delay field encoded?",
    "What is the capital of Mongolia?",
]


@pytest.fixture(scope="module")
def real_embedder() -> MiniLMEmbedder:
    return shared_embedder(load_settings(environ={}, dotenv_path=None))


def test_trivial_rewording_hits_different_question_misses(real_embedder: MiniLMEmbedder) -> None:
    cache = SemanticCache.from_settings(load_settings(environ={}, dotenv_path=None))
    assert cache.threshold == 0.98
    scope = CacheScope.of(["rfc"], {"mode": "hybrid"})
    vectors = real_embedder.embed([ORIGINAL, *SAME, *DIFFERENT])
    cache.put("s1", scope, vectors[0], ORIGINAL, {"answer": "3"})
    for text, vec in zip(SAME, vectors[1:1 + len(SAME)]):
        hit = cache.get("s1", scope, vec)
        assert hit is not None, f"{text!r} should hit (similarity {float(vec @ vectors[0]):.4f})"
        assert hit.payload == {"answer": "3"} and hit.similarity >= 0.98
    for text, vec in zip(DIFFERENT, vectors[1 + len(SAME):]):
        assert cache.get("s1", scope, vec) is None, f"{text!r} must miss ({float(vec @ vectors[0]):.4f})"
    # Another session never sees s1's answer, even for the identical question.
    assert cache.get("s2", scope, vectors[0]) is None
    # Rebuilding the index drops the entry.
    assert cache.invalidate_index("rfc") == 1
    assert cache.get("s1", scope, vectors[0]) is None
