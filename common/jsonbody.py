"""Strict parsing of JSON request bodies, for the gateway and the RAG API alike.

`json.loads` accepts things that later blow up far from the parser: lone
UTF-16 surrogates (`"\\ud800"`, which SQLite and UTF-8 encoders refuse),
`NaN`/`Infinity` (not JSON), integers too long to convert, nesting deep enough
to exhaust the recursion limit. They are all refused here, once, with a
message naming the problem, so a handler only ever sees clean values.
"""

from __future__ import annotations

import json
from typing import Any

from common.errors import ApiError


class JsonBodyError(ValueError):
    """The body is not strict JSON; the message says why (for a 400)."""


def _no_constants(name: str) -> Any:
    raise JsonBodyError(f"{name} is not a JSON value")


def parse_json_body(raw: bytes) -> Any:
    try:
        data = json.loads(raw, parse_constant=_no_constants)
    except JsonBodyError:
        raise
    except RecursionError as exc:
        raise JsonBodyError("the body is nested too deeply") from exc
    except UnicodeDecodeError as exc:
        raise JsonBodyError(f"the body is not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except ValueError as exc:  # JSONDecodeError, or an integer with too many digits
        raise JsonBodyError(str(exc)) from exc
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonBodyError("the body contains an unpaired UTF-16 surrogate (\\ud800-\\udfff)") from exc
    except RecursionError as exc:
        raise JsonBodyError("the body is nested too deeply") from exc
    return data


def decode_json(raw: bytes) -> Any:
    """The body as strict JSON, or a 400 `invalid_json` that says what is wrong with it."""
    try:
        return parse_json_body(raw)
    except JsonBodyError as exc:
        raise ApiError(400, "invalid_json", f"the body is not valid JSON: {exc}") from exc
