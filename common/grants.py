"""Short-lived signed grants: how the gateway tells the RAG API who is asking and what they may read.

The browser streams answers from the RAG API directly, so the RAG API must refuse an index the
person may not read without asking the gateway each time. The gateway signs a small JSON claim set
(`sub`, `role`, `read`, `session`, `exp`) with HMAC-SHA256 under a secret both services share
(`DOCENT_AUTH_SECRET`, or `<DOCENT_DATA_DIR>/auth.secret` which the gateway creates when accounts
turn on); the RAG API checks the signature and the expiry and nothing else. Standard library only.

The same secret also derives the service token the two services use with each other when
`DOCENT_API_TOKEN` is unset, so turning accounts on needs no second secret to configure.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from common.errors import ApiError

PREFIX = "dg1."
SECRET_FILE = "auth.secret"
_MIN_SECRET_BYTES = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def is_grant(token: str) -> bool:
    return token.startswith(PREFIX)


def sign(claims: Mapping[str, Any], secret: bytes, ttl_s: float, now: float | None = None) -> str:
    """`dg1.<claims>.<signature>`; `exp` is set from `ttl_s`."""
    body = dict(claims, exp=round((time.time() if now is None else now) + ttl_s, 3))
    payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    mac = hmac.new(secret, (PREFIX + payload).encode(), hashlib.sha256).digest()
    return f"{PREFIX}{payload}.{_b64(mac)}"


def verify(token: str, secret: bytes, now: float | None = None) -> dict[str, Any]:
    """The claims of a grant with a good signature that has not expired; else a 401 saying which."""
    try:
        payload, mac = token[len(PREFIX):].split(".")
        want = hmac.new(secret, (PREFIX + payload).encode(), hashlib.sha256).digest()
        good = hmac.compare_digest(want, _unb64(mac))
        claims = json.loads(_unb64(payload)) if good else None
    except (ValueError, UnicodeDecodeError):
        claims = None
    if not isinstance(claims, dict) or not isinstance(claims.get("exp"), (int, float)):
        raise ApiError(401, "invalid_grant", "the access grant's signature does not verify",
                       {"WWW-Authenticate": 'Bearer realm="docent", error="invalid_token"'})
    if claims["exp"] < (time.time() if now is None else now):
        raise ApiError(401, "grant_expired", "the access grant has expired; ask the gateway for a new one "
                       "(POST /auth/rag-token)", {"WWW-Authenticate": 'Bearer realm="docent", error="invalid_token"'})
    return claims


def service_token(secret: bytes) -> str:
    """The service-to-service bearer derived from the shared secret (used when DOCENT_API_TOKEN is unset)."""
    return "svc_" + hmac.new(secret, b"docent service token v1", hashlib.sha256).hexdigest()


def load_secret(configured: str, data_dir: Path, *, create: bool = False) -> bytes | None:
    """`DOCENT_AUTH_SECRET`, else the data directory's secret file (made, mode 0600, when `create`)."""
    if configured:
        if len(configured.encode()) < _MIN_SECRET_BYTES:
            raise ValueError(f"DOCENT_AUTH_SECRET must be at least {_MIN_SECRET_BYTES} bytes long")
        return configured.encode()
    path = Path(data_dir) / SECRET_FILE
    try:
        return path.read_bytes().strip() or None
    except FileNotFoundError:
        if not create:
            return None
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it meanwhile
        return path.read_bytes().strip() or None
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(48))
    return path.read_bytes().strip()
