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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from common import grants
from common.errors import ApiError
from common.http import check_bearer
from rag_system.config import Settings


@dataclass(frozen=True)
class Caller:
    service: bool
    user: str = ""
    role: str = ""
    read: frozenset[str] = frozenset()
    session: str | None = None

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


class Gate:
    """Built once by the service: the secret and the service token, read at start-up."""

    def __init__(self, settings: Settings) -> None:
        self.secret = secret_of(settings)
        self.token = effective_token(settings)

    @property
    def accounts(self) -> bool:
        return self.secret is not None

    def caller(self, headers: Mapping[str, str]) -> Caller:
        if self.secret is None:
            check_bearer(headers, self.token)
            return SERVICE
        scheme, _, given = (headers.get("Authorization", "") or "").partition(" ")
        given = given.strip()
        if scheme.lower() == "bearer" and grants.is_grant(given):
            claims = grants.verify(given, self.secret)
            read = claims.get("read") if isinstance(claims.get("read"), list) else []
            session = claims.get("session") if isinstance(claims.get("session"), str) else None
            return Caller(False, str(claims.get("name") or claims.get("sub") or ""), str(claims.get("role") or ""),
                          frozenset(str(i) for i in read), session)
        if scheme.lower() == "bearer" and hmac.compare_digest(given.encode(), self.token.encode()):
            return SERVICE
        raise ApiError(401, "unauthorized", "send a service token or an access grant from the gateway "
                       "(Authorization: Bearer <token>)", {"WWW-Authenticate": 'Bearer realm="docent"'})
