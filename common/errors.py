"""Errors that know what a client should see: an HTTP status and a stable snake_case code.

A domain error (an index that does not exist, a filter that does not parse) subclasses
`DomainError` and names its status and code once, where it is defined; the HTTP servers turn any
`DomainError` into `{"error": "<message>", "code", "message"}` without a table of exception types.

The body is flat because localGPT's client (which Docent serves unchanged) shows `error` as a
string; `code` is the stable thing a program branches on (Documentation/api-gateway.md).
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of every error a client is told about; subclasses set `status` and `code`."""

    status: int = 500
    code: str = "internal_error"
    #: Response headers the error needs (`Retry-After`, `Allow`, `WWW-Authenticate`).
    headers: dict[str, str] = {}

    def to_json(self) -> dict[str, Any]:
        return error_body(self.code, str(self))


class ApiError(DomainError):
    """An error raised at the HTTP edge itself, status and code chosen where it is raised."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        return error_body(self.code, self.message, **self.extra)


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The one error shape of both services (and of SSE `error` frames): the message twice, as
    localGPT's `error` string and as `message`, next to the `code`."""
    return {**extra, "error": message, "code": code, "message": message}


def error_fields(body: Any) -> tuple[str, str]:
    """(code, message) of an error body, flat or in the nested `{"error": {...}}` of older peers."""
    if not isinstance(body, dict):
        return "", ""
    error = body.get("error")
    nested = error if isinstance(error, dict) else body
    message = nested.get("message") or (error if isinstance(error, str) else "")
    return str(nested.get("code") or ""), str(message or "")


def status_of(exc: BaseException) -> tuple[int, str]:
    """(HTTP status, error code) of any exception: its own for a `DomainError`, else a 500."""
    if isinstance(exc, DomainError):
        return exc.status, exc.code
    return 500, "internal_error"


def bad_request(message: str, code: str = "invalid_request") -> ApiError:
    return ApiError(400, code, message)
