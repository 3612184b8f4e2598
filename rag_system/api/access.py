"""Who is calling the RAG API and what they may search: the service, or a person with a gateway grant.

Without accounts (no `DOCENT_AUTH_SECRET` and no `<data dir>/auth.secret`) this is the shared
bearer of before. With them, the gateway and its tools call with the service token
(`DOCENT_API_TOKEN`, or the one derived from the secret), and a browser calls with a grant the
gateway signed (common/grants.py) naming the indexes and the session it may use. A grant's caller
is refused an index outside it before anything is retrieved (`require_indexes` runs on the parsed
request, ahead of the pipeline), may not build, delete or sync (those go through the gateway, which
checks roles), and sees only its own indexes listed. `ROUTE_ACCESS` in routes.py says which routes
are service-only; a unit test checks every route is listed there.
"""

from __future__ import annotations

import hmac
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from common import grants
from common.errors import ApiError
from common.http import Headers, check_bearer
from rag_system.api.grant_epochs import EpochCheck
from rag_system.config import Settings


@dataclass(frozen=True)
class Caller:
    service: bool
    user: str = ""
    role: str = ""
    read: frozenset[str] = frozenset()
    session: str | None = None
    sub: str = ""

    def may_read(self, index: str) -> bool:
        return self.service or index in self.read

    def require_indexes(self, names: Iterable[str]) -> None:
        refused = sorted({n for n in names if not self.may_read(n)})
        if refused:
            raise ApiError(403, "index_forbidden", f"your access grant does not cover {', '.join(refused)}; "
                           "ask the gateway for one naming the indexes you may read", indexes=refused)

    def require_session(self, session_id: str | None) -> None:
        if self.service or session_id is None or session_id == self.session:
            return
        raise ApiError(403, "session_forbidden", "your access grant is for another session (or none): "
                       "ask the gateway for a grant naming this session")

    def require_service(self, what: str) -> None:
        if not self.service:
            raise ApiError(403, "service_only", f"{what} is for the gateway only; use the gateway's routes, "
                           "which check your role")


SERVICE = Caller(True)


def secret_of(settings: Settings) -> bytes | None:
    return grants.load_secret(settings.auth_secret, settings.data_dir)


def effective_token(settings: Settings) -> str:
    """The service token: DOCENT_API_TOKEN, else (accounts on) the one derived from the shared secret."""
    if settings.api_token:
        return settings.api_token
    secret = secret_of(settings)
    return grants.service_token(secret) if secret else ""


@dataclass(frozen=True)
class _Keys:
    secret: bytes | None
    token: str
    stamp: tuple[int, int, int] | None  # the secret file's (inode, mtime, size) these were read from


class ServiceAccess:
    """The secret and the service token, re-read when the data directory's secret file appears or changes.

    `python -m backend create-user` makes `auth.secret` while both services run; the RAG API must
    start requiring grants from that request on, not after a restart. Each request costs one
    `stat` of the file (no read); the file is read again only when its inode, mtime or size moved.
    Once a secret was seen, accounts stay on here even if the file goes away (a deleted file is a
    rotation in progress, not a return to single-user mode): the last secret is kept until a new
    file appears. `DOCENT_AUTH_SECRET` in the environment is fixed for the process's life.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._file: Path | None = None if settings.auth_secret else Path(settings.data_dir) / grants.SECRET_FILE
        self._lock = threading.Lock()
        self._keys = _Keys(secret_of(settings), effective_token(settings), self._stamp())
        self.epochs = EpochCheck(settings.gateway_url, lambda: self.token, settings.grant_check_s)

    def _stamp(self) -> tuple[int, int, int] | None:
        if self._file is None:
            return None
        try:
            st = os.stat(self._file)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _current(self) -> _Keys:
        keys = self._keys
        if self._file is None:
            return keys
        stamp = self._stamp()
        if stamp is None or stamp == keys.stamp:
            return keys
        with self._lock:
            if self._keys.stamp != stamp:
                secret = secret_of(self._settings) or self._keys.secret
                token = self._settings.api_token or (grants.service_token(secret) if secret else "")
                self._keys = _Keys(secret, token, stamp)
            return self._keys

    @property
    def secret(self) -> bytes | None:
        return self._current().secret

    @property
    def token(self) -> str:
        return self._current().token

    @property
    def accounts(self) -> bool:
        return self.secret is not None

    def caller(self, headers: Headers) -> Caller:
        keys = self._current()
        if keys.secret is None:
            check_bearer(headers, keys.token)
            return SERVICE
        scheme, _, given = (headers.get("Authorization", "") or "").partition(" ")
        given = given.strip()
        if scheme.lower() == "bearer" and grants.is_grant(given):
            claims = grants.verify(given, keys.secret)
            read_claim = claims.get("read")
            read = read_claim if isinstance(read_claim, list) else []
            session = claims.get("session") if isinstance(claims.get("session"), str) else None
            sub = str(claims.get("sub") or "")
            self.epochs.require_current(sub, claims.get("ep"))
            return Caller(False, str(claims.get("name") or sub), str(claims.get("role") or ""),
                          frozenset(str(i) for i in read), session, sub)
        if scheme.lower() == "bearer" and keys.token and hmac.compare_digest(given.encode(), keys.token.encode()):
            return SERVICE
        raise ApiError(401, "unauthorized", "send a service token or an access grant from the gateway "
                       "(Authorization: Bearer <token>)", {"WWW-Authenticate": 'Bearer realm="docent"'})
