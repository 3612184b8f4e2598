"""Settings: profiles, environment, .env, and per-request overrides never leak."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rag_system.config import ConfigError, Settings, load_settings


def test_defaults_and_derived_paths() -> None:
    s = load_settings(environ={}, dotenv_path=None)
    assert s.profile == "default"
    assert s.chunk_tokens == 512 and s.chunk_overlap_sentences == 1
    assert s.resolved_lancedb_uri == str(Path("data") / "lancedb")
    assert s.uploads_dir == Path("data") / "uploads"


def test_fast_profile_changes_its_values_only() -> None:
    fast = load_settings("fast", environ={}, dotenv_path=None)
    default = load_settings(environ={}, dotenv_path=None)
    assert fast.profile == "fast"
    assert fast.retrieval_k < default.retrieval_k
    assert fast.chunk_tokens == default.chunk_tokens


def test_environment_overrides_profile_and_dotenv(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("CHUNK_SIZE=300\nRETRIEVAL_K=7\nFTS_STEM=false\n")
    s = load_settings(environ={"CHUNK_SIZE": "256", "DOCENT_PROFILE": "fast"}, dotenv_path=dotenv)
    assert s.chunk_tokens == 256  # environment beats .env
    assert s.retrieval_k == 7  # .env beats the profile
    assert s.fts_stem is False
    assert s.profile == "fast"


def test_lancedb_uri_and_index_roots_from_env() -> None:
    s = load_settings(environ={"LANCEDB_URI": "s3://bucket/x", "DOCENT_INDEX_ROOTS": "/a:/b"},
                      dotenv_path=None)
    assert s.resolved_lancedb_uri == "s3://bucket/x"
    assert s.index_roots == ("/a", "/b")


@pytest.mark.parametrize("env, fragment", [
    ({"CHUNK_SIZE": "zero"}, "chunk_tokens"),
    ({"CHUNK_SIZE": "0"}, "chunk_tokens must be > 0"),
    ({"OCR_ENGINE": "magic"}, "OCR_ENGINE"),
    ({"RETRIEVAL_MODE": "semantic"}, "RETRIEVAL_MODE"),
    ({"FTS_STEM": "maybe"}, "fts_stem"),
    ({"CHUNK_WINDOW_AT_TOPICS": "1.5"}, "CHUNK_WINDOW_AT_TOPICS must be in"),
    ({"DOCENT_PROFILE": "turbo"}, "unknown profile"),
    ({"EMBEDDING_QUERY_RUNTIME": "tensorrt"}, "EMBEDDING_QUERY_RUNTIME must be onnx or torch"),
])
def test_bad_values_are_named(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        load_settings(environ=env, dotenv_path=None)


def test_overrides_return_new_object_and_leave_base_untouched() -> None:
    base = load_settings(environ={}, dotenv_path=None)
    request = base.with_overrides(retrieval_k=5, retrieval_mode="fts_only")
    assert request.retrieval_k == 5 and request.retrieval_mode == "fts_only"
    assert base.retrieval_k == 20 and base.retrieval_mode == "hybrid"
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.retrieval_k = 1  # type: ignore[misc]
    with pytest.raises(ConfigError, match="unknown setting"):
        base.with_overrides(retreival_k=3)
    with pytest.raises(ConfigError, match="retrieval_k"):
        base.with_overrides(retrieval_k=True)


def test_settings_is_hashable_value() -> None:
    assert Settings() == Settings()
    assert hash(Settings()) == hash(Settings())


def test_the_question_encoders_cache_follows_the_models_dir_unless_set() -> None:
    from rag_system.embedding.minilm import onnx_cache_dir

    assert onnx_cache_dir(load_settings(environ={}, dotenv_path=None)) == ""
    assert onnx_cache_dir(load_settings(environ={"DOCENT_MODELS_DIR": "/models"}, dotenv_path=None)) == "/models/onnx"
    both = {"DOCENT_MODELS_DIR": "/models", "EMBEDDING_ONNX_DIR": "/cache/x"}
    assert onnx_cache_dir(load_settings(environ=both, dotenv_path=None)) == "/cache/x"
