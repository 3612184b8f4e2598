"""The one option table both services read: name, aliases, JSON type, range, the request field it fills.

The gateway reads a chat's options with it before it stores the question, and the RAG API reads the
same table into its typed requests, so a value one refuses the other refuses too, with the same code
and message. Documentation/api.md lists the ranges (a test checks them against this table).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from common.errors import ApiError
from common.filters import check_filters

#: `retrieval_mode` (localGPT: `search_type`).
MODES = ("hybrid", "vector_only", "fts_only")
#: "meanmax": scores normalised from each ranking's mean (0) to its best (1);
#: "score": from its minimum; "rrf": reciprocal rank (Documentation/evaluation.md).
FUSIONS = ("meanmax", "score", "rrf")
#: LLM backends a request may name; "auto" takes the first of the others that is available, in this order.
BACKENDS = ("auto", "ollama", "openai", "llamacpp", "extractive")
TASKS = ("qa", "summary", "compare", "auto")
MIN_COMPARED, MAX_COMPARED = 2, 4  # documents of a `compare` task
MAX_QUERY_CHARS = 8000  # a question
MAX_MESSAGE_CHARS = 20_000  # each message of a conversation (an answer is longer than its question)
MAX_HISTORY = 100  # messages of `conversation_history` (the pipeline reads the last few)
MAX_MODEL_CHARS = 200  # a model name (`model`, a session's model)
MAX_INDEXES = 16  # indexes one question (or one verification) searches
MAX_EMBEDDING_MODEL_CHARS = 300  # a build's `embedding_model` (a model id or an embedder name)
#: A session id the RAG API takes; a turn id (which the gateway stores) is one without '.' or ':'.
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
TURN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
_KIND = {bool: "true or false", int: "an integer", str: "a string", dict: "an object", list: "a list"}


def snake_case(name: str) -> str:
    """`retrievalK` -> `retrieval_k`, `forceRag` -> `force_rag`; snake_case stays as it is."""
    return _CAMEL.sub(r"_\1", name).lower()


@dataclass(frozen=True)
class Option:
    name: str  # snake_case, as the RAG API's /chat takes it (camelCase is accepted too)
    kind: type  # the JSON type: bool, int, str, dict or list
    target: str  # the field of the RAG API's typed request it fills (rag_system/api/options.py)
    low: int | None = None  # an int's range; a string's length
    high: int | None = None
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # another product's name for it (localGPT's `search_type`)
    code: str = "invalid_option"
    #: A further check of a value of the right type (the filter grammar), returning the value or raising the 400.
    grammar: Callable[[Any], Any] | None = None

    def check(self, value: Any) -> Any:
        """The value, checked (an integral float is that integer); anything else is a 400 naming the option."""
        if self.kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        # bool is an int in Python: a JSON true is not a number here.
        if not isinstance(value, self.kind) or (isinstance(value, bool) and self.kind is not bool):
            self._refuse(f"must be {_KIND[self.kind]}, got {type(value).__name__}")
        if self.choices and value not in self.choices:
            self._refuse(f"must be one of {', '.join(self.choices)}, got {value!r}")
        if self.kind is int and self.low is not None and self.high is not None and not self.low <= value <= self.high:
            self._refuse(f"must be between {self.low} and {self.high}, got {value}")
        if self.kind is str and self.high is not None and not 1 <= len(value.strip()) <= len(value) <= self.high:
            self._refuse(f"must be a non-empty string of at most {self.high} characters")
        return value if self.grammar is None else self.grammar(value)

    def accepts(self, value: Any) -> bool:
        """Whether `check` takes the value (for a door that drops a value it cannot use rather than refuse it)."""
        try:
            self.check(value)
        except ApiError:
            return False
        return True

    def _refuse(self, why: str) -> None:
        raise ApiError(400, self.code, f"{self.name} {why}")


#: The options of `/chat`, `/chat/stream` and the gateway's `POST /sessions/<id>/messages`.
CHAT = (
    Option("retrieval_mode", str, "mode", choices=MODES, aliases=("search_type",), code="invalid_retrieval_mode"),
    Option("retrieval_k", int, "k", 1, 1000),
    Option("reranker_top_k", int, "top_k", 1, 100),
    Option("ai_rerank", bool, "rerank"),
    Option("filters", dict, "filters", code="invalid_filters", grammar=check_filters),
    Option("context_expand", bool, "context_expand"),
    Option("context_window_size", int, "context_window_size", 0, 10),
    Option("query_decompose", bool, "query_decompose"),
    Option("verify", bool, "verify"),
    Option("force_rag", bool, "force_rag"),
    Option("model", str, "model", high=MAX_MODEL_CHARS),
    Option("backend", str, "backend", choices=BACKENDS, code="invalid_backend"),
    Option("provence_prune", bool, "prune"),  # localGPT's sentence pruning: Docent's evidence excerpts
    Option("compose_sub_answers", bool, ""),  # localGPT's: no field, answered with a warning
    Option("task", str, "task", choices=TASKS, code="invalid_task"),
    Option("documents", list, "documents"),
)
#: The RAG API's own: the gateway does not forward it.
MAX_TOKENS = Option("max_tokens", int, "max_tokens", 1, 4096)
#: `/retrieve` takes the first-stage options only.
RETRIEVE = tuple(o for o in CHAT if o.target in ("mode", "k", "top_k", "rerank", "filters"))
#: A build's options (`POST /index`, the gateway's `POST /indexes/<id>/build`).
CHUNK_SIZE = Option("chunk_size", int, "chunk_size", 64, 4096)  # tokens per chunk
BY_NAME = {option.name: option for option in (*CHAT, MAX_TOKENS, CHUNK_SIZE)}


def normalise_keys(body: Any) -> dict[str, Any]:
    """One snake_case key per field; the same field spelled twice with different values is a 400."""
    if not isinstance(body, Mapping):
        raise ApiError(400, "invalid_body", "the request body must be a JSON object")
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in body.items():
        if not isinstance(key, str):
            continue
        name = snake_case(key)
        if out.get(name) is not None and value is not None and out[name] != value:
            _conflict(spelled[name], key, out[name], value)
        if out.get(name) is None:
            out[name], spelled[name] = value, key
    return out


def read_options(body: Mapping[str, Any], table: Iterable[Option]) -> dict[str, Any]:
    """The options of `table` that a normalised body sent (`null` is not sent), each checked, by name."""
    out: dict[str, Any] = {}
    for option in table:
        sent = [(key, body[key]) for key in (option.name, *option.aliases) if body.get(key) is not None]
        for key, value in sent[1:]:
            if value != sent[0][1]:
                _conflict(sent[0][0], key, sent[0][1], value)
        if sent:
            out[option.name] = option.check(sent[0][1])
    documents, task = out.get("documents"), out.get("task")
    if documents is not None:
        _check_documents(documents, task)
    return out


def _check_documents(docs: list[Any], task: str | None) -> None:
    """A summary names one document, a comparison two to four; a question none."""
    if not all(isinstance(d, str) and d.strip() and len(d) <= 512 for d in docs):
        raise ApiError(400, "invalid_option", "documents must be a list of document names or ids (non-empty strings)")
    if task == "summary" and len(docs) != 1:
        raise ApiError(400, "invalid_option", f"a summary takes exactly one document, got {len(docs)}")
    if task == "compare" and not MIN_COMPARED <= len(docs) <= MAX_COMPARED:
        raise ApiError(400, "invalid_option", f"compare takes {MIN_COMPARED} to {MAX_COMPARED} documents, got {len(docs)}")
    if task in (None, "qa") and docs:
        raise ApiError(400, "invalid_option", "documents is only for task summary, compare or auto")


def _conflict(first: str, second: str, a: Any, b: Any) -> None:
    raise ApiError(400, "conflicting_option",
                   f"{snake_case(first)} was given twice with different values ({first}={a!r}, {second}={b!r})")
