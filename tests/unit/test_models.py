"""Joining packaged GGUF parts: order, verification, atomic publication, clear errors."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from rag_system.generation.models import (
    ModelIntegrityError,
    ModelNotFoundError,
    PackagedModel,
    ensure_joined,
    resolve_gguf,
)

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 700, b"c" * 5]


@pytest.fixture()
def packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PackagedModel:
    site = tmp_path / "site"
    names = []
    for i, data in enumerate(PARTS, start=1):
        name = f"docent_test_part{i}_{tmp_path.name.replace('-', '_')}"
        pkg = site / name / "data"
        pkg.mkdir(parents=True)
        (site / name / "__init__.py").write_text("")
        (pkg / f"part{i:02d}.bin").write_bytes(data)
        names.append(name)
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(PARTS)
    return PackagedModel("tiny", "test", tuple(names), hashlib.sha256(whole).hexdigest(), len(whole))


def test_parts_are_joined_in_order_and_verified(packaged: PackagedModel, tmp_path: Path):
    calls = []
    path = ensure_joined(packaged, tmp_path / "models", on_progress=lambda done, total: calls.append(done))
    assert path.read_bytes() == b"".join(PARTS)
    assert calls[-1] == packaged.size
    assert not list((tmp_path / "models").glob("*.partial"))
    mtime = path.stat().st_mtime_ns
    assert ensure_joined(packaged, tmp_path / "models") == path and path.stat().st_mtime_ns == mtime


def test_wrong_hash_publishes_nothing(packaged: PackagedModel, tmp_path: Path):
    bad = PackagedModel("tiny", "test", packaged.packages, "0" * 64, packaged.size)
    with pytest.raises(ModelIntegrityError, match="reinstall"):
        ensure_joined(bad, tmp_path / "models")
    assert list((tmp_path / "models").glob("tiny.gguf*")) == []


def test_missing_package_names_the_package_and_the_setting(tmp_path: Path):
    ghost = PackagedModel("ghost", "test", ("docent_no_such_package_xyz",), "0" * 64, 1)
    with pytest.raises(ModelNotFoundError, match="docent-no-such-package-xyz.*LLM_GGUF"):
        ensure_joined(ghost, tmp_path)


def test_resolve_accepts_a_file_and_rejects_nonsense(tmp_path: Path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF")
    assert resolve_gguf(str(f)) == f
    with pytest.raises(ModelNotFoundError, match="LLM_GGUF"):
        resolve_gguf(str(tmp_path / "missing.gguf"))
    assert "docent_test" not in " ".join(sys.modules)  # nothing imported the fake packages
