"""Plain HTTP to the services under test: urllib without proxies, multipart bodies, SSE frames.

Shared by tests/ and eval/ so both speak to the services exactly as a browser or a script would.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Client:
    def __init__(self, base_url: str, token: str = "") -> None:
        self.base_url = base_url
        self.token = token
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None, timeout: float = 120.0) -> Reply:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if body is not None and raw is None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with self.opener.open(req, timeout=timeout) as resp:
                return Reply(resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())

    def get(self, path: str, **kw: Any) -> Reply:
        return self.call("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return self.call("POST", path, body, **kw)

    def delete(self, path: str, **kw: Any) -> Reply:
        return self.call("DELETE", path, **kw)

    def upload(self, path: str, files: list[tuple[str, bytes]], field: str = "files") -> Reply:
        body, ctype = multipart_body(files, field)
        return self.call("POST", path, raw=body, headers={"Content-Type": ctype})


def multipart_body(files: list[tuple[str, bytes]], field: str = "files") -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    out = b""
    for name, data in files:
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\n"
                f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"



def read_events(resp: Any, comments: list[str] | None = None) -> Iterator[tuple[str, Any]]:
    """Parse `data: {...}` frames until the server closes the stream."""
    data_lines: list[str] = []
    while True:
        line = resp.readline()
        if not line:
            return
        text = line.decode().rstrip("\r\n")
        if text.startswith(":"):
            if comments is not None:
                comments.append(text)
            continue
        if text.startswith("data:"):
            data_lines.append(text[5:].strip())
            continue
        if text == "" and data_lines:
            frame = json.loads("\n".join(data_lines))
            data_lines = []
            yield frame["type"], frame["data"]
