"""Request bodies -> typed requests, through the option table the gateway reads too (common/options.py).

So handlers never see raw bodies, and a bad value is the 400 the gateway gives before it stores a question.
Options of the product we replace are applied (`provence_prune` is evidence pruning, `model: "extractive"`
picks that backend) or answered with a `warnings` entry (`compose_sub_answers`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import bad_request
from common.options import (BACKENDS, BY_NAME, CHAT, CHUNK_SIZE, ID_PATTERN, MAX_EMBEDDING_MODEL_CHARS, MAX_HISTORY,
                            MAX_INDEXES, MAX_MESSAGE_CHARS, MAX_QUERY_CHARS, MAX_TOKENS, RETRIEVE, TURN_ID_PATTERN,
                            normalise_keys, read_options)
from rag_system.agent.types import Turn
from rag_system.indexing.store import InvalidIndexNameError, validate_index_name

MAX_PATHS = 10000
LEGACY_TABLE_PREFIX = "text_pages_"  # localGPT's table names for an index id


@dataclass(frozen=True)
class PipelineOptions:
    """What a chat asked of `QueryPipeline.request`, by its keyword names; `None` keeps the profile's."""

    mode: str | None = None
    k: int | None = None
    top_k: int | None = None
    rerank: bool | None = None
    filters: dict[str, Any] | None = None
    answer_top_k: int | None = None
    backend: str | None = None
    model: str | None = None
    context_expand: bool | None = None
    context_window_size: int | None = None
    query_decompose: bool | None = None
    verify: bool | None = None
    force_rag: bool | None = None
    prune: bool | None = None
    max_tokens: int | None = None
    task: str | None = None
    documents: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ChatOptions:
    query: str
    indexes: tuple[str, ...]
    session_id: str | None = None
    turn_id: str | None = None
    chosen: PipelineOptions = field(default_factory=PipelineOptions)
    #: The conversation so far (`conversation_history`, oldest first), or None when not sent: then a
    #: request with a session id reads it from the gateway.
    history: tuple[Turn, ...] | None = None
    #: Options accepted but not applied as asked, said with the answer (`warnings`), never dropped silently.
    warnings: tuple[str, ...] = ()

    @property
    def pipeline(self) -> dict[str, Any]:
        """The keyword arguments of `QueryPipeline.request` the client chose."""
        return {k: v for k, v in vars(self.chosen).items() if v is not None}


@dataclass(frozen=True)
class RetrieveOptions:
    query: str
    index: str
    retrieval: dict[str, Any] = field(default_factory=dict)  # keyword arguments of RetrievalEngine.options


@dataclass(frozen=True)
class IndexRequest:
    index: str
    paths: tuple[str, ...]
    embedder: str | None = None  # the embedder of a new index (rag_system/embedding/registry.py)
    chunk_size: int | None = None  # chunk budget in tokens for the files this build (re)indexes
    embedding_model: str | None = None  # localGPT's name for the embedder: a model id (or an embedder name)
    remove: tuple[str, ...] = ()  # indexed paths this build drops (a replaced upload's previous version)


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
        allowed = "'_', '-'" if pattern is TURN_ID_PATTERN else "'_', '-', '.', ':'"
        raise bad_request(f"{key} has characters that are not allowed (use letters, digits, {allowed})",
                          "invalid_option")
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


def _filters(sent: dict[str, Any]) -> dict[str, Any] | None:
    """The filters `read_options` checked against their grammar (`common/filters.py`); `{}` is none."""
    return dict(sent.get("filters") or {}) or None


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


# -- request shapes -------------------------------------------------------------

def parse_chat(raw: Any) -> ChatOptions:
    body = normalise_keys(raw)
    query = _query(body)
    sent = read_options(body, (*CHAT, MAX_TOKENS))
    chosen = {o.target: sent[o.name] for o in (*CHAT, MAX_TOKENS) if o.name in sent and o.target}
    backend, model = sent.get("backend"), sent.get("model")
    if model in BACKENDS and backend is None:  # localGPT's model picker lists backends (`extractive`) as models
        backend, model = model, None
    documents = tuple(d.strip() for d in sent.get("documents") or ()) or None
    chosen.update(backend=backend, model=model, filters=_filters(sent), answer_top_k=sent.get("reranker_top_k"),
                  documents=documents)
    warnings: tuple[str, ...] = ()
    if sent.get("compose_sub_answers"):
        warnings = ("compose_sub_answers is not applied: a decomposed question is answered once, from the "
                    "evidence of all its sub-queries, with each claim checked against it",)
    return ChatOptions(query=query, indexes=indexes_of(body),
                       session_id=_str(body, "session_id", max_len=128, pattern=ID_PATTERN),
                       # the gateway stores the turn under this id, and takes no '.' or ':' in it
                       turn_id=_str(body, "turn_id", max_len=128, pattern=TURN_ID_PATTERN),
                       chosen=PipelineOptions(**chosen), history=_history(body), warnings=warnings)


def parse_retrieve(raw: Any) -> RetrieveOptions:
    body = normalise_keys(raw)
    query = _query(body)
    indexes = indexes_of(body)
    if len(indexes) != 1:
        raise bad_request("retrieve searches exactly one index: give index (or table_name)", "invalid_option")
    sent = read_options(body, RETRIEVE)
    options = {**{o.target: sent[o.name] for o in RETRIEVE if o.name in sent}, "filters": _filters(sent)}
    return RetrieveOptions(query=query, index=indexes[0], retrieval={k: v for k, v in options.items() if v is not None})


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
    # retrieval_mode is checked as the product we replace did, not applied: every index has both tables
    sent = read_options(body, (CHUNK_SIZE, BY_NAME["retrieval_mode"]))
    remove = body.get("remove_paths") or []
    if not isinstance(remove, list) or len(remove) > MAX_PATHS or \
            not all(isinstance(p, str) and p and "\x00" not in p and len(p) <= 4096 for p in remove):
        raise bad_request("remove_paths must be a list of indexed paths", "invalid_paths")
    return IndexRequest(index=index_name(name), paths=tuple(paths), embedder=embedder_option(body),
                        chunk_size=sent.get("chunk_size"),
                        embedding_model=_str(body, "embedding_model", max_len=MAX_EMBEDDING_MODEL_CHARS),
                        remove=tuple(str(Path(p).resolve()) for p in remove))


def embedder_option(body: dict[str, Any]) -> str | None:
    """`embedder`: a registered embedder name, or absent (the index's own, or the default)."""
    from rag_system.embedding.registry import CHOICES

    value = body.get("embedder")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value not in CHOICES:
        raise bad_request(f"embedder must be one of {', '.join(CHOICES)}", "invalid_embedder")
    return value

