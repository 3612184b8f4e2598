"""localGPT's environment names: honoured where they mean the same as Docent's, named where they do not."""

from __future__ import annotations

from pathlib import Path

from rag_system.api.model_choice import with_session_model
from rag_system.config import environment_notes, load_settings


def settings(tmp_path: Path, **env: str):  # type: ignore[no-untyped-def]
    return load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path), **env}, dotenv_path=None)


def test_localgpt_names_are_used_as_docents_own(tmp_path: Path) -> None:
    s = settings(tmp_path, LANCEDB_PATH="/srv/localgpt/lancedb", GENERATION_MODEL="qwen3:14b", RAG_CONFIG_MODE="fast")
    assert s.lancedb_uri == "/srv/localgpt/lancedb" and s.ollama_model == "qwen3:14b" and s.profile == "fast"
    notes = environment_notes({"LANCEDB_PATH": "/srv/localgpt/lancedb", "GENERATION_MODEL": "qwen3:14b"}, None)
    assert notes == ["LANCEDB_PATH (localGPT) is used as LANCEDB_URI='/srv/localgpt/lancedb'",
                     "GENERATION_MODEL (localGPT) is used as OLLAMA_MODEL='qwen3:14b'"]


def test_docents_own_name_wins_and_the_rest_is_named_as_ignored(tmp_path: Path) -> None:
    env = {"LANCEDB_PATH": "/old", "LANCEDB_URI": "/new", "RAG_CONFIG_MODE": "react", "ENRICHMENT_MODEL": "qwen3:0.6b"}
    s = settings(tmp_path, **env)
    assert s.lancedb_uri == "/new" and s.profile == "default"
    notes = environment_notes(env, None)
    assert any(n.startswith("LANCEDB_PATH (localGPT) is ignored: LANCEDB_URI is set too") for n in notes)
    assert any(n.startswith("RAG_CONFIG_MODE='react' (localGPT) is ignored: Docent's profiles are default, fast")
               for n in notes)
    assert any(n.startswith("ENRICHMENT_MODEL (localGPT) is ignored: Docent does not rewrite chunks") for n in notes)
    assert environment_notes({"OLLAMA_HOST": "http://x"}, None) == []


def test_the_sessions_model_answers_unless_the_request_names_one() -> None:
    assert with_session_model({"k": 5}, "qwen3:8b") == {"k": 5, "model": "qwen3:8b"}
    assert with_session_model({}, "extractive") == {"backend": "extractive"}
    assert with_session_model({"model": "other"}, "qwen3:8b") == {"model": "other"}
    assert with_session_model({"backend": "llamacpp"}, "qwen3:8b") == {"backend": "llamacpp"}
    assert with_session_model({}, "") == {}
