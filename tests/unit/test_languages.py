"""Language detection, per-language full-text analyzers, embedder names, CJK queries, coverage across languages."""

from __future__ import annotations

import pytest

from rag_system.config import ConfigError, load_settings
from rag_system.grounding.terms import coverage
from rag_system.embedding.registry import CHOICES, UnknownEmbedderError, check_name, listing, name_for_model
from rag_system.embedding.e5 import E5_MODEL_ID
from rag_system.embedding.minilm import PACKAGED_MODEL_ID
from rag_system.indexing.languages import analyzer, detect_language, fts_options
from rag_system.retrieval.fts_query import sanitize_fts_query


@pytest.mark.parametrize(("text", "code"), [
    ("Mit apt-get install installieren Sie ein Paket, das nicht auf der Liste ist.", "de"),
    ("Utilisez la commande pour installer les paquets et ce qui est dans le système.", "fr"),
    ("Para instalar un paquete se usa el comando que es parte del sistema.", "es"),
    ("The package is installed with the command that is in the list.", "en"),
    ("パッケージを削除するには apt-get remove を使います。", "ja"),
    ("软件包管理使用 apt 命令。这是系统的一部分。", "zh"),
    ("ls -l /etc", "en"),
])
def test_detect_language(text: str, code: str) -> None:
    assert detect_language(text) == code


def test_analyzers_per_language() -> None:
    assert analyzer("de", stem=True, remove_stop_words=True) == {
        "base_tokenizer": "simple", "language": "German", "stem": True, "remove_stop_words": True}
    assert analyzer("ja", stem=True, remove_stop_words=True)["base_tokenizer"] == "icu"
    assert analyzer("id", stem=True, remove_stop_words=True)["stem"] is False  # no Indonesian stemmer
    english = load_settings(environ={}, dotenv_path=None)
    assert fts_options(english, ["The package is installed with the command."]) == {
        "base_tokenizer": "simple", "language": "English", "stem": True, "remove_stop_words": True,
        "ascii_folding": True}
    fixed = english.with_overrides(fts_language="fr")
    assert fts_options(fixed, ["The package is installed."])["language"] == "French"


def test_settings_check_embedder_and_language() -> None:
    settings = load_settings(environ={"EMBEDDER": "e5-small", "FTS_LANGUAGE": "de"}, dotenv_path=None)
    assert (settings.embedder, settings.fts_language) == ("e5-small", "de")
    with pytest.raises(ConfigError, match="EMBEDDER"):
        load_settings(environ={"EMBEDDER": "bert"}, dotenv_path=None)
    with pytest.raises(ConfigError, match="FTS_LANGUAGE"):
        load_settings(environ={"FTS_LANGUAGE": "klingon"}, dotenv_path=None)


def test_embedder_registry() -> None:
    settings = load_settings(environ={}, dotenv_path=None)
    assert CHOICES == ("auto", "minilm", "bge-small", "bge-small-fp32", "e5-small")
    assert check_name("e5-small") == "e5-small"
    with pytest.raises(UnknownEmbedderError, match="minilm"):
        check_name("bert")
    assert name_for_model(PACKAGED_MODEL_ID, settings) == "minilm"
    assert name_for_model(E5_MODEL_ID, settings) == "e5-small"
    assert name_for_model("someone/else", settings) is None
    assert name_for_model("BAAI/bge-small-en-v1.5 (onnx int8)", settings) == "bge-small"
    assert name_for_model("BAAI/bge-small-en-v1.5 (onnx fp32)", settings) == "bge-small-fp32"
    rows = listing(settings)
    assert {row["name"] for row in rows} == {"minilm", "bge-small", "bge-small-fp32", "e5-small"}
    assert sum(row["auto_english"] for row in rows) == 1  # what EMBEDDER=auto builds English with


def test_cjk_query_runs_are_cut_not_dropped() -> None:
    long = "パッケージを削除するにはどのコマンドを使いますか" * 2
    terms = sanitize_fts_query(long + "?").split()
    assert "".join(terms) == long and all(len(t) <= 40 for t in terms)
    assert sanitize_fts_query("what does ack_delay mean?") == "what does ack_delay mean"


def test_coverage_ignores_other_languages_function_words() -> None:
    score, missing = coverage("Wie entferne ich ein Paket mit apt?", ["Mit apt remove entfernen Sie ein Paket."])
    assert score >= 0.5 and "wie" not in missing and "ich" not in missing
    score, _ = coverage("Comment est-ce que je configure le réseau ?", ["Pour configurer le réseau, éditez."])
    assert score >= 0.5
    assert coverage("What is the capital of Mongolia?", ["Pour configurer le réseau."])[0] == 0.0
