"""Chat options, checked with the table the RAG API reads (`common/options.py`) before the question is stored.

Only what the client sent is forwarded: a client that says nothing gets the RAG API's settings.
"""

from __future__ import annotations

from typing import Any

from common.options import CHAT, normalise_keys, read_options

CHAT_OPTIONS = {option.name: option for option in CHAT}  # snake_case name -> its row


def normalize_options(body: dict[str, Any]) -> dict[str, Any]:
    return read_options(normalise_keys(body), CHAT)
