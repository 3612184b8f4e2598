"""Chat options: read with the one table both services share (`common/options.py`), forwarded only if sent.

The RAG API applies its own defaults; the gateway never fills in a value the client did not send, so
a client that says nothing gets the server's settings. Checking here, before the question is stored,
means a refused option leaves no question without an answer in the history.
"""

from __future__ import annotations

from typing import Any

from common.options import CHAT, read_chat

#: Option name (snake_case, as the RAG API's /chat takes it) -> its row of the table.
CHAT_OPTIONS = {option.name: option for option in CHAT}


def normalize_options(body: dict[str, Any]) -> dict[str, Any]:
    """The chat options present in `body`, keyed in snake_case, checked as the RAG API checks them."""
    return read_chat(body)
