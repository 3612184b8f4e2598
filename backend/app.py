"""The gateway's service objects, built once at start-up and shared by all handler threads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.authn import Auth
from backend.config import GatewayConfig
from backend.metrics import Metrics
from backend.pages import PageRenderer
from backend.rag_client import RagClient
from backend.rag_replicas import RagReplicas
from backend.store import Store
from common import grants


@dataclass
class App:
    config: GatewayConfig
    store: Store
    rag: RagClient | RagReplicas
    metrics: Metrics
    pages: PageRenderer
    auth: Auth = None  # type: ignore[assignment]  # built from config and store when not given

    def __post_init__(self) -> None:
        if self.auth is None:
            self.auth = Auth(self.config, self.store)
        auth, config = self.auth, self.config
        self.store.set_audit_key(lambda: auth.secret() if auth.enabled()
                                 else grants.load_secret(config.auth_secret, config.data_dir))

    @classmethod
    def build(cls, config: GatewayConfig) -> App:
        config.uploads_dir.mkdir(parents=True, exist_ok=True)
        store = Store(config.database)
        auth = Auth(config, store)
        if auth.enabled():
            auth.secret()  # made now, so the RAG API and the web app see that accounts are on
        return cls(config=config, store=store, rag=_rag(config, auth.service_token), metrics=Metrics(),
                   pages=PageRenderer(config.page_cache_dir), auth=auth)

    def close(self) -> None:
        self.pages.close()
        self.store.close()


def _rag(config: GatewayConfig, token: str | Callable[[], str] | None = None) -> RagClient | RagReplicas:
    """One RAG API (the usual case, unchanged) or query replicas plus a writer; `token` defaults to
    DOCENT_API_TOKEN (with accounts on and no token set, App.build passes the derived service token)."""
    token = config.api_token if token is None else token
    timeout, index_timeout = config.rag_api_timeout_s, config.rag_api_index_timeout_s
    if len(config.rag_api_urls) == 1 and config.rag_writer_url == config.rag_api_url:
        return RagClient(config.rag_api_url, token=token, timeout_s=timeout, index_timeout_s=index_timeout)
    return RagReplicas(config.rag_api_urls, config.rag_writer_url, token=token, timeout_s=timeout,
                       index_timeout_s=index_timeout)
