"""Ollama's NDJSON chat stream, parsed from bytes: a cut-off stream is a failure, never a short answer.

The OpenAI-compatible side of the same rule runs against a real llama.cpp
server that is SIGKILLed mid-answer (tests/reliability/test_faults.py); no
Ollama server runs here, so its protocol is checked on the parser itself.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from rag_system.generation.backends.remote import read_ollama_stream
from rag_system.generation.llm import GenerationFailedError, StreamResult


def _line(content: str, done: bool = False, **extra: Any) -> bytes:
    return (json.dumps({"message": {"role": "assistant", "content": content}, "done": done, **extra}) + "\n").encode()


def _drain(lines: Any, result: StreamResult) -> tuple[list[str], dict[str, Any]]:
    pieces: list[str] = []
    gen = read_ollama_stream(lines, result)
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            return pieces, stop.value


def test_whole_stream_yields_the_text_and_returns_the_done_message() -> None:
    result = StreamResult()
    lines = [_line("The"), b"\n", _line(" gearbox"), _line("", done=True, eval_count=2, done_reason="stop")]
    pieces, final = _drain(lines, result)
    assert pieces == ["The", " gearbox"] and result.chunks == pieces
    assert final["done"] is True and final["eval_count"] == 2


def test_stream_ending_without_done_is_a_failure_after_the_partial_text() -> None:
    result = StreamResult()
    gen = read_ollama_stream([_line("The"), _line(" zephyr"), _line(" gearbox")], result)
    assert [next(gen), next(gen), next(gen)] == ["The", " zephyr", " gearbox"]
    with pytest.raises(GenerationFailedError, match="ended before its final"):
        next(gen)
    assert result.completion is None  # nothing may read the partial text as an answer


def test_done_false_on_every_line_is_still_cut_off() -> None:
    with pytest.raises(GenerationFailedError, match="ended before its final"):
        _drain([_line("x", done=False)] * 3, StreamResult())


def test_connection_dying_mid_line_is_a_failure() -> None:
    def dying() -> Iterator[bytes]:
        yield _line("The")
        raise http.client.IncompleteRead(b'{"message": {"con')

    with pytest.raises(GenerationFailedError, match="stream broke"):
        _drain(dying(), StreamResult())


def test_truncated_json_line_is_a_failure() -> None:
    with pytest.raises(GenerationFailedError, match="stream broke"):
        _drain([_line("The"), b'{"message": {"content": " gear'], StreamResult())


def test_error_event_is_a_failure_with_the_servers_message() -> None:
    with pytest.raises(GenerationFailedError, match="model not found"):
        _drain([json.dumps({"error": "model not found"}).encode()], StreamResult())
