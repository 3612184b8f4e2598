"""Chat options: accepted in snake_case or camelCase, normalised once, forwarded only if sent.

The RAG API applies its own defaults; the gateway never fills in a value the
client did not send, so a client that says nothing gets the server's settings.
"""

from __future__ import annotations

from typing import Any

from common.errors import ApiError
from common.options import MODES, snake_case

#: Option name (snake_case, as the RAG API's /chat takes it) -> accepted JSON types.
CHAT_OPTIONS: dict[str, tuple[type, ...]] = {
    "retrieval_mode": (str,),
    "retrieval_k": (int,),
    "context_window_size": (int,),
    "context_expand": (bool,),
    "reranker_top_k": (int,),
    "ai_rerank": (bool,),
    "query_decompose": (bool,),
    "verify": (bool,),
    "force_rag": (bool,),
    "filters": (dict,),
    "model": (str,),
    "backend": (str,),
    # localGPT's: sentence pruning (applied) and composing from sub-answers (answered with a warning).
    "provence_prune": (bool,),
    "compose_sub_answers": (bool,),
    # Tasks (Documentation/tasks.md): validated by the RAG API, which owns the task list.
    "task": (str,),
    "documents": (list,),
}

#: localGPT spellings that mean the same option.
ALIASES = {"search_type": "retrieval_mode"}

def normalize_options(body: dict[str, Any]) -> dict[str, Any]:
    """The chat options present in `body`, keyed in snake_case, type-checked.

    The same option given twice (`retrieval_k` and `retrievalK`) with different
    values is a 400; unknown keys are ignored (the body also carries `message`);
    `null` means "not sent".
    """
    out: dict[str, Any] = {}
    source: dict[str, str] = {}
    for key, value in body.items():
        if not isinstance(key, str) or value is None:
            continue
        name = snake_case(key)
        name = ALIASES.get(name, name)
        if name not in CHAT_OPTIONS:
            continue
        _check_type(key, name, value)
        if name in out and out[name] != value:
            raise ApiError(400, "conflicting_option",
                           f"option {name} was given twice with different values ({source[name]!r} and {key!r})")
        out[name], source[name] = value, key
    if "retrieval_mode" in out and out["retrieval_mode"] not in MODES:
        raise ApiError(400, "invalid_option", f"retrieval_mode must be one of {', '.join(MODES)}")
    for name in ("retrieval_k", "reranker_top_k"):
        if name in out and not 1 <= out[name] <= 1000:
            raise ApiError(400, "invalid_option", f"{name} must be between 1 and 1000")
    if "context_window_size" in out and not 0 <= out["context_window_size"] <= 20:
        raise ApiError(400, "invalid_option", "context_window_size must be between 0 and 20")
    return out


def _check_type(key: str, name: str, value: Any) -> None:
    types = CHAT_OPTIONS[name]
    # bool is an int in Python: a JSON true is not a number here.
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        expected = " or ".join("object" if t is dict else t.__name__ for t in types)
        raise ApiError(400, "invalid_option", f"option {key} must be {expected}, got {type(value).__name__}")
