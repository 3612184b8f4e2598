"""Gateway settings, read once from the environment (and `.env`) at start-up.

Only what the gateway alone reads lives here; the shared data layout
(`DOCENT_DATA_DIR`) follows the RAG API's (Documentation/configuration.md). Every variable is listed in
`ENV_VARS` and documented in `Documentation/configuration.md`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dotenv import dotenv_values

from common.net import bind_refusal

#: Every environment variable this module reads (checked against the docs by a unit test).
ENV_VARS = ("DOCENT_DATA_DIR", "DB_PATH", "GATEWAY_HOST", "GATEWAY_PORT", "DOCENT_API_TOKEN",
            "DOCENT_CORS_ORIGINS", "DOCENT_MAX_UPLOAD_MB", "DOCENT_MAX_JSON_MB", "RAG_API_URL",
            "RAG_API_TIMEOUT", "RAG_API_INDEX_TIMEOUT", "DOCENT_LOG_LEVEL", "RAG_WRITER_URL", "DOCENT_BUILD_WAIT_S",
            # accounts (Documentation/security.md)
            "DOCENT_AUTH", "DOCENT_AUTH_SECRET", "DOCENT_SESSION_HOURS", "DOCENT_LOCKOUT_ATTEMPTS",
            "DOCENT_LOCKOUT_ADDRESS_ATTEMPTS", "DOCENT_LOCKOUT_S", "DOCENT_RAG_GRANT_TTL_S",
            "DOCENT_RATE_CHAT_PER_MIN", "DOCENT_RATE_UPLOAD_PER_MIN", "DOCENT_COOKIE_SECURE")

DEFAULT_ORIGINS = ("http://127.0.0.1:3000", "http://localhost:3000")


class GatewayConfigError(ValueError):
    """A gateway setting cannot be used; the message names the variable."""


@dataclass(frozen=True)
class GatewayConfig:
    data_dir: Path = Path("data")
    db_path: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    api_token: str = ""
    cors_origins: tuple[str, ...] = DEFAULT_ORIGINS
    max_upload_bytes: int = 200 * 1024 * 1024
    max_json_bytes: int = 8 * 1024 * 1024
    rag_api_url: str = "http://127.0.0.1:8001"  # the first of `rag_api_urls`
    # Scale-out (Documentation/scale-out.md): chat spreads over these; index requests go to the writer.
    rag_api_urls: tuple[str, ...] = ("http://127.0.0.1:8001",)
    rag_writer_url: str = "http://127.0.0.1:8001"
    rag_api_timeout_s: float = 300.0
    rag_api_index_timeout_s: float = 60.0
    #: How long a legacy (localGPT) build call waits for its job before answering 202 (DOCENT_BUILD_WAIT_S).
    build_wait_s: float = 900.0
    log_level: str = "INFO"
    #: Accounts (Documentation/security.md): "accounts" turns them on; unset, the first user does.
    auth_mode: str = ""
    auth_secret: str = ""
    session_hours: float = 12.0
    lockout_attempts: int = 10
    lockout_address_attempts: int = 50
    lockout_s: float = 900.0
    rag_grant_ttl_s: float = 120.0
    rate_chat_per_min: int = 30
    rate_upload_per_min: int = 120
    cookie_secure: bool = False

    @property
    def database(self) -> Path:
        return self.db_path or self.data_dir / "docent.db"

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def page_cache_dir(self) -> Path:
        return self.data_dir / "cache" / "pages"

    def check_bind(self, host: str, accounts: bool = False) -> None:
        """Refuse a non-loopback bind without a token or accounts (`common.net.bind_refusal`)."""
        refusal = None if accounts else bind_refusal(host, self.api_token)
        if refusal:
            raise GatewayConfigError(refusal)


def _number(env: Mapping[str, str], name: str, default: float, kind: type = float) -> float:
    raw = env.get(name, "")
    if raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError as exc:
        raise GatewayConfigError(f"{name} must be a number, got {raw!r}") from exc
    if value <= 0:
        raise GatewayConfigError(f"{name} must be > 0, got {raw!r}")
    return value


def load_gateway_config(environ: Mapping[str, str] | None = None,
                        dotenv_path: str | os.PathLike[str] | None = ".env") -> GatewayConfig:
    """Defaults < `.env` < environment. Pure: never writes either."""
    env: dict[str, str] = {}
    if dotenv_path is not None and Path(dotenv_path).is_file():
        env.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
    env.update(os.environ if environ is None else environ)
    origins = tuple(o.strip().rstrip("/") for o in env.get("DOCENT_CORS_ORIGINS", "").split(",") if o.strip())
    if "*" in origins:
        raise GatewayConfigError("DOCENT_CORS_ORIGINS may not contain '*': list the frontend origin(s)")
    urls = tuple(u.strip().rstrip("/") for u in (env.get("RAG_API_URL", "") or GatewayConfig.rag_api_url).split(",")
                 if u.strip())
    for name, value in [*(("RAG_API_URL", u) for u in urls), ("RAG_WRITER_URL", env.get("RAG_WRITER_URL", ""))]:
        if value and not value.startswith(("http://", "https://")):
            raise GatewayConfigError(f"{name} must be an http(s) URL (RAG_API_URL: comma-separated), got {value!r}")
    if not urls:
        raise GatewayConfigError("RAG_API_URL lists no URL")
    return GatewayConfig(
        data_dir=Path(env.get("DOCENT_DATA_DIR") or "data"),
        db_path=Path(env["DB_PATH"]) if env.get("DB_PATH") else None,
        host=env.get("GATEWAY_HOST") or "127.0.0.1",
        port=int(_number(env, "GATEWAY_PORT", 8000, int)),
        api_token=env.get("DOCENT_API_TOKEN", ""),
        cors_origins=origins or DEFAULT_ORIGINS,
        max_upload_bytes=int(_number(env, "DOCENT_MAX_UPLOAD_MB", 200) * 1024 * 1024),
        max_json_bytes=int(_number(env, "DOCENT_MAX_JSON_MB", 8) * 1024 * 1024),
        rag_api_url=urls[0],
        rag_api_urls=urls,
        rag_writer_url=(env.get("RAG_WRITER_URL") or urls[0]).rstrip("/"),
        rag_api_timeout_s=_number(env, "RAG_API_TIMEOUT", 300.0),
        rag_api_index_timeout_s=_number(env, "RAG_API_INDEX_TIMEOUT", 60.0),
        build_wait_s=_number(env, "DOCENT_BUILD_WAIT_S", 900.0),
        log_level=(env.get("DOCENT_LOG_LEVEL") or "INFO").upper(),
        auth_mode=_auth_mode(env.get("DOCENT_AUTH", "")),
        auth_secret=env.get("DOCENT_AUTH_SECRET", ""),
        session_hours=_number(env, "DOCENT_SESSION_HOURS", 12.0),
        lockout_attempts=int(_number(env, "DOCENT_LOCKOUT_ATTEMPTS", 10, int)),
        lockout_address_attempts=int(_number(env, "DOCENT_LOCKOUT_ADDRESS_ATTEMPTS", 50, int)),
        lockout_s=_number(env, "DOCENT_LOCKOUT_S", 900.0),
        rag_grant_ttl_s=_number(env, "DOCENT_RAG_GRANT_TTL_S", 120.0),
        rate_chat_per_min=int(_number(env, "DOCENT_RATE_CHAT_PER_MIN", 30, int)),
        rate_upload_per_min=int(_number(env, "DOCENT_RATE_UPLOAD_PER_MIN", 120, int)),
        cookie_secure=(env.get("DOCENT_COOKIE_SECURE") or "").strip().lower() in ("1", "true", "yes", "on"),
    )


def _auth_mode(raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("", "accounts"):
        raise GatewayConfigError(f"DOCENT_AUTH must be 'accounts' or unset, got {raw!r}")
    return value
