"""The one error type handlers raise; the server turns it into a JSON body.

Every client mistake is an `ApiError` with a 4xx status and a snake_case
code; anything else escaping a handler is a bug and becomes a 500 that
carries the request id (DESIGN §9).
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}

    def to_json(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def bad_request(message: str, code: str = "invalid_request") -> ApiError:
    return ApiError(400, code, message)


def not_found(message: str, code: str = "not_found") -> ApiError:
    return ApiError(404, code, message)
