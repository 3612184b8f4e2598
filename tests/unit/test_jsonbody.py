"""Strict JSON bodies: what `json.loads` lets through but breaks later is refused at the parser."""

from __future__ import annotations

import pytest

from common.jsonbody import JsonBodyError, parse_json_body


@pytest.mark.parametrize("raw,why", [
    (b'{"a": "\\ud800"}', "surrogate"), (b'{"k": NaN}', "NaN"), (b'{"k": -Infinity}', "Infinity"),
    (b'{"k": 1' + b"0" * 5000 + b"}", "digits"), (b"[" * 100_000 + b"]" * 100_000, "deeply"),
    (b'{"a": "\xff"}', "UTF-8"), (b'{"a": ', "Expecting"),
])
def test_refused_with_a_reason(raw: bytes, why: str) -> None:
    with pytest.raises(JsonBodyError, match=why):
        parse_json_body(raw)


def test_valid_json_passes_unchanged() -> None:
    assert parse_json_body('{"q": "caf\\u00e9 \\ud83d\\ude00", "k": [1, 2.5, null, true]}'.encode()) == {
        "q": "café 😀", "k": [1, 2.5, None, True]}
