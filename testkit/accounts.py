"""Accounts for tests and benchmarks: users made with the real CLI, a client that logs in like a browser.

`create_user` runs `python -m backend create-user … --password-stdin` against a data directory;
`LoginClient` keeps the session cookie and the CSRF token the login answered with and sends both,
as the web app does.
"""

from __future__ import annotations

import subprocess
import sys
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from testkit import REPO_ROOT
from testkit.client import Client, Reply
from testkit.processes import base_env


def create_user(data_dir: Path, name: str, role: str, password: str, **env: str) -> str:
    done = subprocess.run([sys.executable, "-m", "backend", "create-user", name, "--role", role, "--password-stdin"],
                          input=password + "\n", capture_output=True, text=True, cwd=REPO_ROOT,
                          env=base_env(data_dir, **env), timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"create-user {name} failed ({done.returncode}): {done.stderr}")
    return done.stdout


class LoginClient(Client):
    """A browser-like client: `login()` stores the cookie and CSRF token; every call sends them."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.cookie = ""
        self.csrf = ""
        self.user: dict[str, Any] = {}

    def login(self, username: str, password: str) -> Reply:
        reply = self.post("/auth/login", {"username": username, "password": password})
        if reply.status == 200:
            jar = SimpleCookie(reply.headers.get("set-cookie", ""))
            self.cookie = f"docent_session={jar['docent_session'].value}"
            self.csrf = reply.json["csrf_token"]
            self.user = reply.json["user"]
        return reply

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None, timeout: float = 120.0) -> Reply:
        sent = dict(headers or {})
        if self.cookie:
            sent.setdefault("Cookie", self.cookie)
            if method not in ("GET", "HEAD"):
                sent.setdefault("X-CSRF-Token", self.csrf)
        return super().call(method, path, body, raw=raw, headers=sent, timeout=timeout)


def logged_in(base_url: str, username: str, password: str) -> LoginClient:
    """A client signed in as `username` (an AssertionError names the refusal otherwise)."""
    client = LoginClient(base_url)
    reply = client.login(username, password)
    assert reply.status == 200, f"login as {username} failed: {reply.status} {reply.body[:200]!r}"
    return client
