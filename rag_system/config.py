"""Settings: named profiles, overridden by `.env` and the environment.

Every request gets its own frozen `Settings`; nothing here is a module-level
mutable object, so two requests can never see each other's overrides. The
precedence is: profile defaults < `.env` file < process environment <
explicit per-request overrides (`Settings.with_overrides`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from dotenv import dotenv_values


class ConfigError(ValueError):
    """A setting has a value the product cannot use; the message names it."""


def _env(name: str) -> dict[str, str]:
    return {"env": name}


@dataclass(frozen=True)
class Settings:
    """All tunables of the engine. Field metadata names the environment variable."""

    profile: str = "default"
    data_dir: Path = field(default=Path("data"), metadata=_env("DOCENT_DATA_DIR"))
    lancedb_uri: str = field(default="", metadata=_env("LANCEDB_URI"))
    index_roots: tuple[str, ...] = field(default=(), metadata=_env("DOCENT_INDEX_ROOTS"))
    # Embedding. Empty model means the packaged all-MiniLM-L6-v2.
    embedding_model: str = field(default="", metadata=_env("EMBEDDING_MODEL"))
    embedding_batch_size: int = field(default=32, metadata=_env("EMBEDDING_BATCH_SIZE"))
    embedding_max_tokens: int = field(default=512, metadata=_env("EMBEDDING_MAX_TOKENS"))
    embedding_precision: str = field(default="auto", metadata=_env("EMBEDDING_PRECISION"))
    torch_threads: int = field(default=0, metadata=_env("DOCENT_TORCH_THREADS"))
    # Chunking (tokens measured by the embedder's tokenizer).
    chunk_tokens: int = field(default=512, metadata=_env("CHUNK_SIZE"))
    chunk_overlap_sentences: int = field(default=1, metadata=_env("CHUNK_OVERLAP_SENTENCES"))
    chunk_context: str = field(default="document", metadata=_env("CHUNK_CONTEXT"))
    # Vector windows per chunk (0 = one vector per chunk); see Documentation/evaluation.md.
    chunk_window_tokens: int = field(default=128, metadata=_env("CHUNK_WINDOW_TOKENS"))
    # Ingestion.
    ocr_engine: str = field(default="auto", metadata=_env("OCR_ENGINE"))
    ocr_min_chars: int = field(default=40, metadata=_env("OCR_MIN_CHARS"))
    max_file_bytes: int = field(default=512 * 1024 * 1024, metadata=_env("DOCENT_MAX_FILE_BYTES"))
    max_pages: int = field(default=5000, metadata=_env("DOCENT_MAX_PAGES"))
    # Full-text index configuration (LanceDB native FTS).
    fts_stem: bool = field(default=True, metadata=_env("FTS_STEM"))
    fts_remove_stop_words: bool = field(default=True, metadata=_env("FTS_REMOVE_STOP_WORDS"))
    fts_ascii_folding: bool = field(default=True, metadata=_env("FTS_ASCII_FOLDING"))
    # With windows: a second full-text ranking by exact words (stop words kept).
    fts_exact: bool = field(default=True, metadata=_env("FTS_EXACT"))
    # Retrieval defaults.
    retrieval_mode: str = field(default="hybrid", metadata=_env("RETRIEVAL_MODE"))
    retrieval_k: int = field(default=20, metadata=_env("RETRIEVAL_K"))
    fusion: str = field(default="score", metadata=_env("FUSION"))
    rrf_k: float = field(default=60.0, metadata=_env("RRF_K"))
    fts_weight: float = field(default=1.0, metadata=_env("FTS_WEIGHT"))
    vector_weight: float = field(default=1.0, metadata=_env("VECTOR_WEIGHT"))
    reranker_model: str = field(default="", metadata=_env("RERANKER_MODEL"))
    # Off by default: no benchmark here has shown a reranker that helps yet.
    rerank: bool = field(default=False, metadata=_env("RERANK"))
    reranker_min_score: float = field(default=0.5, metadata=_env("RERANKER_MIN_SCORE"))
    reranker_min_keep: int = field(default=3, metadata=_env("RERANKER_MIN_KEEP"))
    reranker_top_k: int = field(default=8, metadata=_env("RERANKER_TOP_K"))

    def with_overrides(self, **overrides: Any) -> Settings:
        """Return a new validated `Settings`; unknown names are a `ConfigError`."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(unknown)}")
        coerced = {name: _coerce(self, name, value) for name, value in overrides.items()}
        return _validated(dataclasses.replace(self, **coerced))

    @property
    def resolved_lancedb_uri(self) -> str:
        """Where the index tables live: `LANCEDB_URI` or `<data_dir>/lancedb`."""
        return self.lancedb_uri or str(self.data_dir / "lancedb")

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"


#: Profile defaults; the `fast` profile trades recall for latency and memory.
PROFILES: Mapping[str, Mapping[str, Any]] = {
    "default": {},
    "fast": {"retrieval_k": 10, "embedding_batch_size": 64, "ocr_engine": "none"},
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_OCR_ENGINES = ("auto", "rapidocr", "tesseract", "none")
_MODES = ("hybrid", "vector_only", "fts_only")
_PRECISIONS = ("auto", "fp32", "bf16")
_CONTEXTS = ("none", "headings", "document")


def _coerce(base: Settings, name: str, value: Any) -> Any:
    """Convert a string (env/.env) or Python value to the field's type."""
    current = getattr(base, name)
    try:
        if isinstance(current, bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError(value)
        if isinstance(current, int):
            if isinstance(value, bool):
                raise ValueError(value)
            return int(value)
        if isinstance(current, float):
            return float(value)
        if isinstance(current, Path):
            return Path(value)
        if isinstance(current, tuple):
            if isinstance(value, str):
                return tuple(p for p in value.split(os.pathsep) if p)
            return tuple(str(v) for v in value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name}: cannot use {value!r} ({exc})") from exc


def _validated(settings: Settings) -> Settings:
    positive = ("embedding_batch_size", "embedding_max_tokens", "chunk_tokens",
                "retrieval_k", "max_file_bytes", "max_pages")
    for name in positive:
        if getattr(settings, name) <= 0:
            raise ConfigError(f"setting {name} must be > 0, got {getattr(settings, name)}")
    if settings.reranker_top_k <= 0:
        raise ConfigError(f"RERANKER_TOP_K must be > 0, got {settings.reranker_top_k}")
    for name in ("chunk_overlap_sentences", "chunk_window_tokens", "ocr_min_chars", "torch_threads", "reranker_min_keep"):
        if getattr(settings, name) < 0:
            raise ConfigError(f"setting {name} must be >= 0, got {getattr(settings, name)}")
    if settings.fusion not in ("score", "rrf"):
        raise ConfigError(f"FUSION must be score or rrf, got {settings.fusion!r}")
    if settings.fts_weight < 0 or settings.vector_weight < 0:
        raise ConfigError("FTS_WEIGHT and VECTOR_WEIGHT must be >= 0")
    if settings.rrf_k <= 0:
        raise ConfigError(f"setting rrf_k must be > 0, got {settings.rrf_k}")
    if settings.ocr_engine not in _OCR_ENGINES:
        raise ConfigError(f"OCR_ENGINE must be one of {', '.join(_OCR_ENGINES)}, got {settings.ocr_engine!r}")
    if settings.chunk_context not in _CONTEXTS:
        raise ConfigError(f"CHUNK_CONTEXT must be one of {', '.join(_CONTEXTS)}, got {settings.chunk_context!r}")
    if settings.embedding_precision not in _PRECISIONS:
        raise ConfigError(f"EMBEDDING_PRECISION must be one of {', '.join(_PRECISIONS)}, "
                          f"got {settings.embedding_precision!r}")
    if settings.retrieval_mode not in _MODES:
        raise ConfigError(f"RETRIEVAL_MODE must be one of {', '.join(_MODES)}, got {settings.retrieval_mode!r}")
    return settings


def load_settings(
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
    dotenv_path: str | os.PathLike[str] | None = ".env",
) -> Settings:
    """Build settings from a profile, a `.env` file and the environment.

    Pure: reads `environ` (default `os.environ`) and the `.env` file but never
    writes either, so calling it per request is safe.
    """
    env: dict[str, str] = {}
    if dotenv_path is not None and Path(dotenv_path).is_file():
        env.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
    env.update(os.environ if environ is None else environ)
    name = profile or env.get("DOCENT_PROFILE", "default")
    if name not in PROFILES:
        raise ConfigError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
    values: dict[str, Any] = {"profile": name, **PROFILES[name]}
    for f in fields(Settings):
        var = f.metadata.get("env")
        if var and var in env and env[var] != "":
            values[f.name] = env[var]
    return Settings().with_overrides(**values)
