"""The pytest fixtures tests/ and eval/tests share: offline models, isolated settings, a clean environment.

Each conftest imports them by name (pytest collects fixtures a conftest imports).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


def offline() -> None:
    """No model hub: every model is packaged (called by each conftest before anything loads one)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """The real packaged MiniLM, loaded once for the whole run."""
    from rag_system.embedding.minilm import MiniLMEmbedder

    return MiniLMEmbedder(threads=0)


@pytest.fixture()
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Settings isolated from the developer's environment and `.env`."""
    from rag_system.config import load_settings

    return load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)


@pytest.fixture()
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith(("DOCENT_", "LANCEDB_", "CHUNK_", "EMBEDDING_", "FTS_", "RETRIEVAL_")):
            monkeypatch.delenv(key, raising=False)
    yield
