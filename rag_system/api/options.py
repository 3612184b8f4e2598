"""Request bodies -> per-request options, normalised once (Documentation/api.md).

Clients of the product we replace send its option names, in snake_case or
camelCase (`rerankerTopK` == `reranker_top_k`; when both spellings are
present the snake_case one wins). This module maps them, once, onto the
pipeline's own names and checks every type, so handlers never see raw
bodies and a bad value is a 400 that names the field. Options of the product we
replace are applied (`provence_prune` is evidence pruning, `model: "extractive"`
picks that backend) or answered with a `warnings` entry (`compose_sub_answers`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import bad_request
from common.options import MODES, snake_case
from rag_system.agent.types import Turn
from rag_system.generation.registry import AUTO_ORDER
from rag_system.indexing.store import InvalidIndexNameError, validate_index_name
from rag_system.retrieval.filters import FilterError, compile_filters
from rag_system.tasks.compare import MAX_DOCUMENTS
from rag_system.tasks.routing import TASKS

MAX_QUERY_CHARS = 8000
MAX_INDEXES = 16
MAX_PATHS = 10000
MIN_CHUNK_TOKENS, MAX_CHUNK_TOKENS = 64, 4096
MAX_HISTORY = 100  # messages of `conversation_history` (the pipeline reads the last MEMORY_TURNS)
MAX_MESSAGE_CHARS = 20_000
BACKENDS = ("auto", *AUTO_ORDER)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
LEGACY_TABLE_PREFIX = "text_pages_"  # localGPT's table names for an index id


@dataclass(frozen=True)
class ChatOptions:
    query: str
    indexes: tuple[str, ...]
    session_id: str | None = None
    turn_id: str | None = None
    pipeline: dict[str, Any] = field(default_factory=dict)  # keyword arguments of QueryPipeline.request
    #: The conversation so far (`conversation_history`, oldest first), or None when not sent: then a
    #: request with a session id reads it from the gateway.
    history: tuple[Turn, ...] | None = None
    #: Options accepted but not applied as asked, said with the answer (`warnings`), never dropped silently.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetrieveOptions:
    query: str
    index: str
    retrieval: dict[str, Any] = field(default_factory=dict)  # keyword arguments of RetrievalEngine.options


@dataclass(frozen=True)
class IndexRequest:
    index: str
    paths: tuple[str, ...]
    embedder: str | None = None  # the embedder of a new index (rag_system/indexing/embedders.py)
    chunk_size: int | None = None  # chunk budget in tokens for the files this build (re)indexes
    embedding_model: str | None = None  # localGPT's name for the embedder: a model id (or an embedder name)
    remove: tuple[str, ...] = ()  # indexed paths this build drops (a replaced upload's previous version)


def normalise_keys(body: Any) -> dict[str, Any]:
    """One canonical snake_case key per option; explicit snake_case beats camelCase."""
    if not isinstance(body, Mapping):
        raise bad_request("the request body must be a JSON object", "invalid_body")
    out: dict[str, Any] = {}
    for key, value in body.items():
        if not isinstance(key, str):
            continue
        canonical = snake_case(key)
        if canonical in out and key != canonical:
            continue  # the snake_case spelling was already seen and wins
        out[canonical] = value
    return out


# -- typed field readers ------------------------------------------------------

def _str(body: dict[str, Any], key: str, *, max_len: int = 200, pattern: re.Pattern[str] | None = None) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise bad_request(f"{key} must be a non-empty string", "invalid_option")
    if len(value) > max_len:
        raise bad_request(f"{key} is longer than {max_len} characters", "invalid_option")
    if pattern is not None and not pattern.match(value):
        raise bad_request(f"{key} has characters that are not allowed (use letters, digits, '_', '-', '.', ':')",
                          "invalid_option")
    return value


def _bool(body: dict[str, Any], key: str) -> bool | None:
    value = body.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise bad_request(f"{key} must be true or false, got {type(value).__name__}", "invalid_option")


def _int(body: dict[str, Any], key: str, low: int, high: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request(f"{key} must be an integer, got {type(value).__name__}", "invalid_option")
    if not low <= value <= high:
        raise bad_request(f"{key} must be between {low} and {high}, got {value}", "invalid_option")
    return value


def _query(body: dict[str, Any]) -> str:
    value = body.get("query")
    if value is None:
        raise bad_request("query is required", "missing_query")
    if not isinstance(value, str) or not value.strip():
        raise bad_request("query must be a non-empty string", "invalid_option")
    if len(value) > MAX_QUERY_CHARS:
        raise bad_request(f"query is longer than {MAX_QUERY_CHARS} characters", "invalid_option")
    return value


def index_name(value: Any, key: str = "index") -> str:
    if not isinstance(value, str):
        raise bad_request(f"{key} must be a string", "invalid_index_name")
    if value.startswith(LEGACY_TABLE_PREFIX):
        value = value[len(LEGACY_TABLE_PREFIX):]
    try:
        return validate_index_name(value)
    except InvalidIndexNameError as exc:
        raise bad_request(str(exc), "invalid_index_name") from exc


def indexes_of(body: dict[str, Any]) -> tuple[str, ...]:
    """The indexes a normalised body names (`table_name`, `index`, `indexes`), each name checked, once each."""
    names: list[str] = []
    for key in ("table_name", "index"):
        if body.get(key) is not None:
            names.append(index_name(body[key], key))
    many = body.get("indexes")
    if many is not None:
        if not isinstance(many, list):
            raise bad_request("indexes must be a list of index names", "invalid_option")
        names.extend(index_name(v, "indexes") for v in many)
    unique = tuple(dict.fromkeys(names))
    if len(unique) > MAX_INDEXES:
        raise bad_request(f"at most {MAX_INDEXES} indexes per request", "invalid_option")
    return unique


def _mode(body: dict[str, Any]) -> str | None:
    value = body.get("retrieval_mode", body.get("search_type"))
    if value is None:
        return None
    if not isinstance(value, str) or value not in MODES:
        raise bad_request(f"unsupported retrieval mode {value!r}; supported: {', '.join(MODES)}",
                          "invalid_retrieval_mode")
    return value


def _filters(body: dict[str, Any]) -> dict[str, Any] | None:
    value = body.get("filters")
    if value is None:
        return None
    try:
        compile_filters(value)
    except FilterError as exc:
        raise bad_request(f"invalid filters: {exc}", "invalid_filters") from exc
    return dict(value) or None


def _task(body: dict[str, Any]) -> tuple[str | None, list[str] | None]:
    """`task` and `documents`; a summary names one document, a comparison two to four."""
    task = body.get("task")
    if task is not None and (not isinstance(task, str) or task not in TASKS):
        raise bad_request(f"unknown task {task!r}; use one of {', '.join(TASKS)}", "invalid_task")
    docs = body.get("documents")
    if docs is None:
        return task, None
    if not isinstance(docs, list) or not all(isinstance(d, str) and d.strip() and len(d) <= 512 for d in docs):
        raise bad_request("documents must be a list of document names or ids (non-empty strings)", "invalid_option")
    if task == "summary" and len(docs) != 1:
        raise bad_request(f"a summary takes exactly one document, got {len(docs)}", "invalid_option")
    if task == "compare" and not 2 <= len(docs) <= MAX_DOCUMENTS:
        raise bad_request(f"compare takes 2 to {MAX_DOCUMENTS} documents, got {len(docs)}", "invalid_option")
    if task in (None, "qa") and docs:
        raise bad_request("documents is only for task summary, compare or auto", "invalid_option")
    return task, [d.strip() for d in docs] or None


def _history(body: dict[str, Any]) -> tuple[Turn, ...] | None:
    """localGPT's `conversation_history`: [{"role": "user"|"assistant", "content": str}, ...], oldest first."""
    value = body.get("conversation_history")
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_HISTORY:
        raise bad_request(f"conversation_history must be a list of at most {MAX_HISTORY} messages", "invalid_option")
    turns: list[Turn] = []
    for item in value:
        role, content = (item.get("role"), item.get("content")) if isinstance(item, dict) else (None, None)
        standalone = item.get("standalone") if isinstance(item, dict) else None
        if role not in ("user", "assistant") or not isinstance(content, str) or len(content) > MAX_MESSAGE_CHARS \
                or not (standalone is None or isinstance(standalone, str)):
            raise bad_request('each conversation_history item must be {"role": "user" or "assistant", '
                              f'"content": a string of at most {MAX_MESSAGE_CHARS} characters}}', "invalid_option")
        turns.append(Turn(role, content, standalone or None))
    return tuple(turns)


def _retrieval(body: dict[str, Any]) -> dict[str, Any]:
    top_k = _int(body, "reranker_top_k", 1, 100)
    return {"mode": _mode(body), "k": _int(body, "retrieval_k", 1, 1000), "filters": _filters(body),
            "rerank": _bool(body, "ai_rerank"), "top_k": top_k}


# -- request shapes -------------------------------------------------------------

def parse_chat(raw: Any) -> ChatOptions:
    body = normalise_keys(raw)
    query = _query(body)
    backend = _str(body, "backend", max_len=32)
    if backend is not None and backend not in BACKENDS:
        raise bad_request(f"unknown LLM backend {backend!r}; use one of {', '.join(BACKENDS)}", "invalid_backend")
    model = _str(body, "model")
    if model in BACKENDS and backend is None:  # localGPT's model picker lists backends (`extractive`) as models
        backend, model = model, None
    options = _retrieval(body)
    task, documents = _task(body)
    expand = _bool(body, "context_expand")
    window = _int(body, "context_window_size", 0, 10)
    warnings = []
    if _bool(body, "compose_sub_answers"):
        warnings.append("compose_sub_answers is not applied: a decomposed question is answered once, from the "
                        "evidence of all its sub-queries, with each claim checked against it")
    options.update({
        "prune": _bool(body, "provence_prune"),  # localGPT's sentence pruning: Docent's evidence excerpts
        "answer_top_k": options["top_k"], "backend": backend, "model": model,
        "context_expand": expand, "context_window_size": window,
        "query_decompose": _bool(body, "query_decompose"), "verify": _bool(body, "verify"),
        "force_rag": _bool(body, "force_rag"), "max_tokens": _int(body, "max_tokens", 1, 4096),
        "task": task, "documents": documents,
    })
    return ChatOptions(query=query, indexes=indexes_of(body),
                       session_id=_str(body, "session_id", max_len=128, pattern=_ID),
                       turn_id=_str(body, "turn_id", max_len=128, pattern=_ID),
                       pipeline={k: v for k, v in options.items() if v is not None}, history=_history(body),
                       warnings=tuple(warnings))


def parse_retrieve(raw: Any) -> RetrieveOptions:
    body = normalise_keys(raw)
    query = _query(body)
    indexes = indexes_of(body)
    if len(indexes) != 1:
        raise bad_request("retrieve searches exactly one index: give index (or table_name)", "invalid_option")
    options = {k: v for k, v in _retrieval(body).items() if v is not None}
    return RetrieveOptions(query=query, index=indexes[0], retrieval=options)


def parse_index(raw: Any) -> IndexRequest:
    body = normalise_keys(raw)
    name = body.get("index", body.get("table_name"))
    if name is None:
        raise bad_request("index is required (the name of the index to build)", "invalid_index_name")
    paths = body.get("paths", body.get("file_paths"))
    if not isinstance(paths, list) or not paths:
        raise bad_request("paths must be a non-empty list of files or folders", "invalid_paths")
    if len(paths) > MAX_PATHS:
        raise bad_request(f"at most {MAX_PATHS} paths per job", "invalid_paths")
    if not all(isinstance(p, str) and p and "\x00" not in p and len(p) <= 4096 for p in paths):
        raise bad_request("every path must be a non-empty string", "invalid_paths")
    if body.get("retrieval_mode") is not None:
        _mode(body)  # the product we replace validated it here too
    remove = body.get("remove_paths") or []
    if not isinstance(remove, list) or len(remove) > MAX_PATHS or \
            not all(isinstance(p, str) and p and "\x00" not in p and len(p) <= 4096 for p in remove):
        raise bad_request("remove_paths must be a list of indexed paths", "invalid_paths")
    return IndexRequest(index=index_name(name), paths=tuple(paths), embedder=embedder_option(body),
                        chunk_size=_int(body, "chunk_size", MIN_CHUNK_TOKENS, MAX_CHUNK_TOKENS),
                        embedding_model=_str(body, "embedding_model", max_len=300),
                        remove=tuple(str(Path(p).resolve()) for p in remove))


def embedder_option(body: dict[str, Any]) -> str | None:
    """`embedder`: a registered embedder name, or absent (the index's own, or the default)."""
    from rag_system.indexing.embedders import CHOICES

    value = body.get("embedder")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value not in CHOICES:
        raise bad_request(f"embedder must be one of {', '.join(CHOICES)}", "invalid_embedder")
    return value

