"""Revocation for grants already issued: each grant carries the user's revocation epoch (`ep`).

The gateway bumps a user's epoch when it disables them, changes their role or password, or
removes a share naming them (a share with everyone bumps every user's, through the global epoch);
`GET /auth/epoch?user=<id>` answers the current value to the service token. A grant whose `ep` is
below it is refused (401 `grant_revoked`: the web app asks for a new grant, which the gateway then
refuses or narrows). By default (`DOCENT_GRANT_CHECK_S=0`) it is asked on every
grant-authenticated request, so a revocation reaches grants already issued on their next use; a
positive value keeps it that many seconds per user, a revocation then taking up to that long. Nothing
is shared between the services but HTTP. When the gateway cannot be asked, grants are refused
(503): a revocation must not be missed because the gateway was briefly away.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from common.errors import ApiError

log = logging.getLogger(__name__)

GATEWAY_TIMEOUT_S = 3.0
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class EpochCheck:
    def __init__(self, gateway_url: str, token: Callable[[], str], keep_s: float) -> None:
        self._url = gateway_url.rstrip("/")
        self._token = token
        self._keep_s = max(0.0, keep_s)
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, int]] = {}  # user id -> (when asked, epoch)

    def require_current(self, sub: str, epoch: object) -> None:
        """Refuse a grant issued before its user's latest revocation."""
        given = epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else -1
        if given < self.current(sub):
            raise ApiError(401, "grant_revoked", "access changed since this grant was issued (a share was "
                           "removed or the account changed); ask the gateway for a new one (POST /auth/rag-token)",
                           {"WWW-Authenticate": 'Bearer realm="docent", error="invalid_token"'})

    def current(self, sub: str) -> int:
        now = time.monotonic()
        with self._lock:
            seen = self._seen.get(sub)
        if seen is not None and now - seen[0] < self._keep_s:
            return seen[1]
        epoch = self._ask(sub)
        with self._lock:
            if len(self._seen) > 10_000:  # one entry per user; a bound, not a cache policy
                self._seen.clear()
            self._seen[sub] = (now, epoch)
        return epoch

    def _ask(self, sub: str) -> int:
        unchecked = ApiError(503, "grant_unchecked", "the gateway could not be asked whether this grant is "
                             "still valid; try again shortly", {"Retry-After": "2"})
        if not self._url:
            raise unchecked
        request = urllib.request.Request(f"{self._url}/auth/epoch?{urllib.parse.urlencode({'user': sub})}")
        token = self._token()
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with _DIRECT.open(request, timeout=GATEWAY_TIMEOUT_S) as resp:
                epoch = json.loads(resp.read()).get("epoch")
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("grant epoch unavailable from the gateway: %s", exc)
            raise unchecked from exc
        if not isinstance(epoch, int):
            raise unchecked
        return epoch
