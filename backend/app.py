"""The gateway's service objects, built once at start-up and shared by all handler threads."""

from __future__ import annotations

from dataclasses import dataclass

from backend.config import GatewayConfig
from backend.metrics import Metrics
from backend.pages import PageRenderer
from backend.rag_client import RagClient
from backend.store import Store


@dataclass
class App:
    config: GatewayConfig
    store: Store
    rag: RagClient
    metrics: Metrics
    pages: PageRenderer

    @classmethod
    def build(cls, config: GatewayConfig) -> App:
        config.uploads_dir.mkdir(parents=True, exist_ok=True)
        return cls(
            config=config,
            store=Store(config.database),
            rag=RagClient(config.rag_api_url, token=config.api_token, timeout_s=config.rag_api_timeout_s,
                          index_timeout_s=config.rag_api_index_timeout_s),
            metrics=Metrics(),
            pages=PageRenderer(config.page_cache_dir),
        )

    def close(self) -> None:
        self.pages.close()
        self.store.close()
