"""Authentication: who a request comes from (cookie, personal token, service token) and logging in.

Single-user mode (no users in the database and DOCENT_AUTH unset) is exactly as before accounts:
the one optional shared bearer `DOCENT_API_TOKEN`. With accounts on, a request proves a person
with the HttpOnly session cookie (state changes also send `X-CSRF-Token`, which a page on another
site cannot read) or a personal API token (`dpt_…`), and a service with `DOCENT_API_TOKEN` or the
token derived from the shared secret (common/grants.py). Secrets are compared as SHA-256 lookups
or in constant time; none of them is ever logged.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie

from backend.config import GatewayConfig
from backend.passwords import verify_password
from backend.principal import ANONYMOUS, SERVICE, SINGLE, Principal
from backend.ratelimit import RateLimiter
from backend.store import Store
from common import grants
from common.errors import ApiError
from common.http import Headers, check_bearer


COOKIE = "docent_session"
TOKEN_PREFIX = "dpt_"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _unauthorized(message: str, code: str = "login_required") -> ApiError:
    return ApiError(401, code, message, {"WWW-Authenticate": 'Bearer realm="docent"'})


@dataclass
class Auth:
    config: GatewayConfig
    store: Store
    limiter: RateLimiter = field(init=False)
    _secret: bytes | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _users_seen: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.limiter = RateLimiter({"chat": self.config.rate_chat_per_min, "upload": self.config.rate_upload_per_min})

    # -- mode and secrets -----------------------------------------------------------
    def enabled(self) -> bool:
        """Accounts are on when DOCENT_AUTH=accounts or once the first user exists."""
        if self.config.auth_mode == "accounts" or self._users_seen:
            return True
        self._users_seen = self.store.has_users()  # users are never all deleted, so once on stays on
        return self._users_seen

    def secret(self) -> bytes:
        """The grant-signing secret (made in the data directory on first need when not configured)."""
        with self._lock:
            if self._secret is None:
                self._secret = grants.load_secret(self.config.auth_secret, self.config.data_dir, create=True)
            assert self._secret is not None
            return self._secret

    def service_token(self) -> str:
        """What the gateway sends the RAG API: DOCENT_API_TOKEN, or with accounts on the derived token."""
        if self.config.api_token or not self.enabled():
            return self.config.api_token
        return grants.service_token(self.secret())

    def _is_service(self, given: str) -> bool:
        candidates = [self.config.api_token] if self.config.api_token else []
        candidates.append(grants.service_token(self.secret()))
        return any(hmac.compare_digest(given.encode(), c.encode()) for c in candidates)

    # -- who is asking --------------------------------------------------------------
    def authenticate(self, headers: Headers, method: str, public: bool) -> Principal:
        if not self.enabled():
            if not public:
                check_bearer(headers, self.config.api_token)
            return SINGLE
        scheme, _, given = (headers.get("Authorization", "") or "").partition(" ")
        given = given.strip()
        if scheme.lower() == "bearer" and given:
            try:
                return self._bearer(given)
            except ApiError:
                if public:
                    return ANONYMOUS
                raise
        cookie = _cookie(headers.get("Cookie", "") or "")
        if cookie:
            found = self.store.login_by_secret(cookie)
            if found is not None:
                user, csrf = found
                principal = Principal("user", user["id"], user["username"], user["role"], "cookie", csrf)
                if method not in SAFE_METHODS and not public:
                    sent = headers.get("X-CSRF-Token", "") or ""
                    if not hmac.compare_digest(sent.encode(), csrf.encode()):
                        raise ApiError(403, "csrf_failed", "this change needs the X-CSRF-Token header the login "
                                                           "answered with (reload the page to get it again)")
                return principal
        if public:
            return ANONYMOUS
        raise _unauthorized("sign in first (POST /auth/login), or send a personal API token as "
                            "Authorization: Bearer <token>")

    def _bearer(self, given: str) -> Principal:
        if given.startswith(TOKEN_PREFIX):
            user = self.store.user_by_token(given)
            if user is None:
                raise _unauthorized("this API token is unknown, revoked, or its user is disabled", "invalid_token")
            return Principal("user", user["id"], user["username"], user["role"], "token")
        if self._is_service(given):
            return SERVICE
        raise _unauthorized("missing or wrong API token (Authorization: Bearer <token>)", "unauthorized")

    # -- logging in ------------------------------------------------------------------
    def login(self, username: str, password: str, address: str) -> tuple[dict[str, object], str, str]:
        """(user row, cookie secret, csrf token); 401 for a wrong name or password, 429 while locked."""
        cfg = self.config
        subjects = [f"user:{username.casefold()}", f"addr:{address}"]
        at = time.time()
        wait = self.store.locked_for(subjects, at)
        if wait > 0:
            self.store.audit(username, "login_failed", address=address, detail={"reason": "locked"})
            raise ApiError(429, "login_locked", f"too many failed logins: try again in {int(wait) + 1} s",
                           {"Retry-After": str(int(wait) + 1)}, retry_after_s=int(wait) + 1)
        user = self.store.user_by_name(username)
        good = verify_password(user["password_hash"] if user else None, password)
        if not good or user is None or user["disabled"]:
            self.store.record_failure(subjects[0], at, cfg.lockout_attempts, cfg.lockout_s, cfg.lockout_s)
            self.store.record_failure(subjects[1], at, cfg.lockout_address_attempts, cfg.lockout_s, cfg.lockout_s)
            self.store.audit(username, "login_failed", address=address,
                             detail={"reason": "disabled" if good and user else "bad_credentials"})
            raise _unauthorized("wrong user name or password", "invalid_credentials")
        self.store.clear_failures(subjects[0])
        secret, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
        self.store.open_login(user["id"], secret, csrf, cfg.session_hours, address)
        self.store.audit(user["username"], "login", address=address)
        return user, secret, csrf

    def cookie_header(self, value: str, max_age: int) -> str:
        parts = [f"{COOKIE}={value}", "Path=/", "HttpOnly", "SameSite=Strict", f"Max-Age={max_age}"]
        if self.config.cookie_secure:
            parts.append("Secure")
        return "; ".join(parts)

    def new_api_token(self) -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(32)

    @staticmethod
    def cookie_of(headers: Headers) -> str:
        return _cookie(headers.get("Cookie", "") or "")


def _cookie(raw: str) -> str:
    if not raw:
        return ""
    try:
        jar = SimpleCookie(raw)
    except CookieError:
        return ""
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else ""
