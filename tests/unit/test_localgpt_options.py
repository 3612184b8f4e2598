"""Every option localGPT's client sends is applied or answered with a warning, never dropped.

The option lists below are what `lib/api.ts` sends (its chat calls and its build call); when
localGPT's source is next to the repository (`../shared/localgpt-app`), the lists are checked
against it, so a new option there fails here until it is handled.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from backend.build_options import read_build_options
from backend.options import normalize_options
from rag_system.api.options import parse_chat
from testkit import REPO_ROOT

API_TS = REPO_ROOT.parent / "shared" / "localgpt-app" / "frontend" / "src" / "lib" / "api.ts"

#: localGPT's chat options with a value that is not Docent's default (what a user picks in its settings).
CHAT = {"compose_sub_answers": True, "query_decompose": True, "ai_rerank": True, "context_expand": False,
        "verify": True, "retrieval_k": 7, "context_window_size": 3, "reranker_top_k": 4, "search_type": "fts_only",
        "force_rag": True, "provence_prune": True, "model": "qwen3:8b"}
#: Options that say where to answer, not how (checked by their own tests).
CHAT_ROUTING = {"session_id", "table_name"}
#: localGPT's build form, each with a value that asks for something.
BUILD = {"latechunk": True, "doclingChunk": False, "chunkSize": 256, "retrievalMode": "vector_only",
         "windowSize": 3, "enableEnrich": True, "embeddingModel": "BAAI/bge-small-en-v1.5", "enrichModel": "qwen3:0.6b",
         "overviewModel": "qwen3:0.6b", "batchSizeEmbed": 10, "batchSizeEnrich": 5}


def _api_ts() -> str:
    if not API_TS.is_file():
        pytest.skip(f"localGPT's source is not next to the repository ({API_TS.name})")
    return API_TS.read_text(encoding="utf-8")


def test_the_lists_are_what_localgpts_client_sends() -> None:
    source = _api_ts()
    chat = set(re.findall(r"payload\.(\w+) =", source)) | set(re.findall(r"\{ (\w+): opts\.\w+ \}", source))
    assert chat == set(CHAT) | CHAT_ROUTING
    build = source[source.index("/build`"):]
    assert set(re.findall(r"(\w+): opts\.", build[:build.index("}),")])) == set(BUILD)


@pytest.mark.parametrize("name", sorted(CHAT))
def test_a_chat_option_is_applied_or_warned(name: str) -> None:
    body: dict[str, Any] = {"query": "q", "indexes": ["kb"]}
    assert name in normalize_options({name: CHAT[name]}) or name == "search_type"  # the gateway passes it on
    base, chosen = parse_chat(body), parse_chat({**body, name: CHAT[name]})
    warned = [w for w in chosen.warnings if name in w]
    assert chosen.pipeline != base.pipeline or warned, f"{name} changed nothing and said nothing"


@pytest.mark.parametrize("name", sorted(BUILD))
def test_a_build_option_is_applied_or_warned(name: str) -> None:
    opts = read_build_options({name: BUILD[name]})
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    applied = (opts.chunk_size, opts.embedding_model) != (None, None)
    assert applied or any(snake in w for w in opts.warnings), f"{name} changed nothing and said nothing"


def test_hybrid_retrieval_at_build_is_what_docent_does() -> None:
    assert read_build_options({"retrievalMode": "hybrid"}).warnings == []
