"""HTTP client for the RAG API (urllib, no extra dependency).

Failures are mapped once, here, to errors the gateway's clients can act on:
the RAG API not listening -> 502 `rag_api_unavailable`; too slow -> 504
`rag_api_timeout`; a 4xx from the RAG API keeps its status and error body;
a 5xx becomes 502 `rag_api_error`. Every message names the RAG API and its URL.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from common.errors import ApiError, error_fields


class RagClient:
    def __init__(self, base_url: str, *, token: str | Callable[[], str] = "", timeout_s: float = 300.0,
                 index_timeout_s: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token  # a callable when it changes as accounts turn on (Auth.service_token)
        self.timeout_s = timeout_s
        self.index_timeout_s = index_timeout_s
        # The RAG API is local or on a private network: never send it through an HTTP proxy.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    # -- endpoints -------------------------------------------------------------
    def health(self) -> tuple[int, dict[str, Any]]:
        return self._call("GET", "/health", timeout=2.0, accept_status=(200, 503))

    def models(self, request_id: str | None = None) -> dict[str, Any]:
        return self._call("GET", "/models", timeout=30.0, request_id=request_id)[1]

    def chat(self, payload: dict[str, Any], request_id: str | None = None) -> dict[str, Any]:
        return self._call("POST", "/chat", payload, timeout=self.timeout_s, request_id=request_id)[1]

    def verify(self, payload: dict[str, Any], request_id: str | None = None) -> dict[str, Any]:
        """`POST /verify` (a long text over an index is one search per sentence: the chat timeout)."""
        return self._call("POST", "/verify", payload, timeout=self.timeout_s, request_id=request_id)[1]

    def start_index(self, index: str, paths: list[str], request_id: str | None = None,
                    embedder: str | None = None, *, chunk_size: int | None = None,
                    embedding_model: str | None = None, remove_paths: list[str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"index": index, "paths": paths, **({"embedder": embedder} if embedder else {})}
        body.update({k: v for k, v in (("chunk_size", chunk_size), ("embedding_model", embedding_model),
                                       ("remove_paths", remove_paths)) if v})
        return self._call("POST", "/index", body, timeout=self.index_timeout_s, request_id=request_id)[1]

    def job(self, job_id: str, request_id: str | None = None) -> dict[str, Any]:
        return self._call("GET", f"/index/jobs/{quote(job_id, safe='')}", timeout=self.index_timeout_s,
                          request_id=request_id)[1]

    def indexes(self, request_id: str | None = None) -> list[dict[str, Any]]:
        """The RAG API's indexes, `[{"name", "chunks"}]` (a short timeout: listing must not hang the gateway)."""
        return list(self._call("GET", "/indexes", timeout=3.0, request_id=request_id)[1].get("indexes") or [])

    def delete_index(self, name: str, request_id: str | None = None) -> bool:
        """Delete the index's table; False when the RAG API has no such index (nothing to delete)."""
        status, _ = self._call("DELETE", f"/indexes/{quote(name, safe='')}", timeout=self.index_timeout_s,
                               request_id=request_id, accept_status=(200, 404))
        return status == 200

    def remove_document(self, name: str, document_id: str, path: str, request_id: str | None = None) -> bool:
        """Remove one document's chunks from an index; False when the RAG API has no such index or
        document there (nothing to remove)."""
        status, _ = self._call("DELETE", f"/indexes/{quote(name, safe='')}/documents/{quote(document_id, safe='')}"
                               f"?path={quote(path, safe='')}", timeout=self.index_timeout_s,
                               request_id=request_id, accept_status=(200, 404))
        return status == 200

    def sync(self, method: str, name: str, tail: str = "", payload: dict[str, Any] | None = None,
             request_id: str | None = None) -> tuple[int, dict[str, Any]]:
        """`/indexes/<name>/sync<tail>` (status, trigger, bind, unbind of synced folders), status and body."""
        return self._call(method, f"/indexes/{quote(name, safe='')}/sync{tail}", payload,
                          timeout=self.index_timeout_s, request_id=request_id)

    def open_chat_stream(self, payload: dict[str, Any], request_id: str | None = None) -> Any:
        """The RAG API's `/chat/stream` response, open (read its frames with `common.sse.read_frames`).

        Failures before the stream starts raise the same `ApiError`s as every call."""
        return self._open("POST", "/chat/stream", payload, timeout=self.timeout_s, request_id=request_id,
                          accept="text/event-stream")

    def open_backup(self) -> Any:
        """The RAG API's index store as an open tar stream (`POST /backup`; backend/backup.py reads it)."""
        return self._open("POST", "/backup", {}, timeout=self.timeout_s, accept="application/x-tar")

    # -- transport -------------------------------------------------------------
    def _call(self, method: str, path: str, payload: dict[str, Any] | None = None, *, timeout: float,
              request_id: str | None = None, accept_status: tuple[int, ...] = (200, 201, 202),
              ) -> tuple[int, dict[str, Any]]:
        try:
            with self._open(method, path, payload, timeout=timeout, request_id=request_id,
                            accept_status=accept_status) as resp:
                status = getattr(resp, "status", None) or resp.code
                return status, _json(resp.read(), self.base_url + path, strict=status < 400)
        except (TimeoutError, socket.timeout) as exc:
            raise ApiError(504, "rag_api_timeout",
                           f"the RAG API at {self.base_url} did not answer within {timeout:g} s") from exc
        except (ConnectionError, OSError) as exc:
            raise ApiError(502, "rag_api_unavailable",
                           f"the RAG API at {self.base_url} dropped the connection ({exc})") from exc

    def _open(self, method: str, path: str, payload: dict[str, Any] | None = None, *, timeout: float,
              request_id: str | None = None, accept_status: tuple[int, ...] = (200, 201, 202),
              accept: str = "application/json") -> Any:
        url = self.base_url + path
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", accept)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        token = self._token() if callable(self._token) else self._token
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        if request_id:
            req.add_header("X-Request-ID", request_id)
        try:
            return self._opener.open(req, timeout=timeout)
        except urllib.error.HTTPError as exc:
            if exc.code in accept_status:
                return exc
            body = _json(exc.read(), url, strict=False)
            raise _upstream_error(exc.code, body, url) from exc
        except (TimeoutError, socket.timeout) as exc:
            raise ApiError(504, "rag_api_timeout",
                           f"the RAG API at {self.base_url} did not answer within {timeout:g} s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise ApiError(504, "rag_api_timeout",
                               f"the RAG API at {self.base_url} did not answer within {timeout:g} s") from exc
            raise ApiError(502, "rag_api_unavailable",
                           f"the RAG API at {self.base_url} is not reachable ({exc.reason}); "
                           "start it with `python -m rag_system api`") from exc
        except (ConnectionError, OSError) as exc:
            raise ApiError(502, "rag_api_unavailable",
                           f"the RAG API at {self.base_url} dropped the connection ({exc})") from exc


def _json(raw: bytes, url: str, strict: bool = True) -> dict[str, Any]:
    try:
        data = json.loads(raw or b"{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if not strict:
            return {}
        raise ApiError(502, "rag_api_error", f"the RAG API at {url} sent a response that is not JSON") from exc
    return data if isinstance(data, dict) else {"data": data}


def _upstream_error(status: int, body: dict[str, Any], url: str) -> ApiError:
    code, message = error_fields(body)
    code, message = code or "rag_api_error", message or f"HTTP {status}"
    if status == 401:
        return ApiError(502, "rag_api_unauthorized",
                        "the RAG API refused the service token: both services need the same DOCENT_API_TOKEN")
    if 400 <= status < 500:
        return ApiError(status, code, f"RAG API: {message}")
    return ApiError(502, "rag_api_error", f"the RAG API failed on {url} with HTTP {status}: {message}")
