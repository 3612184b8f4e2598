"""``docent_native.sha256_files`` / ``sha256_bytes`` must equal ``hashlib``.

Why: ingestion skips unchanged documents by their SHA-256, so the parallel
streaming hasher must agree exactly with ``hashlib`` (through the reference
in ``testkit.native_reference``) for every size, chunk size and ordering, and
must fail like ``open()`` does for bad paths.
"""

from __future__ import annotations

import errno
import hashlib
import os
import random
import re
import tempfile
from pathlib import Path

import docent_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.native_reference import MAX_CHUNK_SIZE, sha256_bytes_reference, sha256_files_reference

EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


@settings(max_examples=150, deadline=None)
@given(
    contents=st.lists(st.binary(max_size=5000), max_size=8),
    chunk_size=st.integers(min_value=1, max_value=4096),
    order=st.randoms(use_true_random=False),
)
def test_files_match_reference(contents: list[bytes], chunk_size: int, order: random.Random) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = [write(Path(tmp) / f"f{i}", data) for i, data in enumerate(contents)]
        paths += paths[: len(paths) // 2]  # repeated paths keep their slots
        order.shuffle(paths)
        native = docent_native.sha256_files(paths, chunk_size=chunk_size)
        assert native == sha256_files_reference(paths, chunk_size=chunk_size)
        assert native == [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths]


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=10_000))
def test_bytes_match_hashlib(data: bytes) -> None:
    assert docent_native.sha256_bytes(data) == sha256_bytes_reference(data)


def test_large_bytes_release_the_gil_path() -> None:
    data = os.urandom(3 * 1024 * 1024 + 17)
    assert docent_native.sha256_bytes(data) == hashlib.sha256(data).hexdigest()


def test_random_files_at_chunk_boundaries(tmp_path: Path) -> None:
    chunk = 1 << 20
    sizes = [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 12345]
    paths = [write(tmp_path / f"r{size}", os.urandom(size)) for size in sizes]
    expected = [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths]
    assert expected[0] == EMPTY_SHA256
    assert docent_native.sha256_files(paths) == expected
    assert docent_native.sha256_files(paths, chunk_size=4096) == expected
    assert docent_native.sha256_files(paths, chunk_size=MAX_CHUNK_SIZE) == expected
    assert sha256_files_reference(paths) == expected


def test_many_files_keep_input_order(tmp_path: Path) -> None:
    paths = [write(tmp_path / f"n{i:03}", os.urandom(i * 97)) for i in range(150)]
    paths.reverse()
    assert docent_native.sha256_files(paths, chunk_size=64) == sha256_files_reference(paths, 64)


def test_accepts_path_objects_and_empty_list(tmp_path: Path) -> None:
    path = tmp_path / "abc"
    path.write_bytes(b"abc")
    assert docent_native.sha256_files([path]) == [hashlib.sha256(b"abc").hexdigest()]
    assert docent_native.sha256_files([]) == []


def test_missing_file_raises_file_not_found_naming_it(tmp_path: Path) -> None:
    ok = write(tmp_path / "ok", b"x")
    missing = str(tmp_path / "does-not-exist.pdf")
    with pytest.raises(FileNotFoundError) as native:
        docent_native.sha256_files([ok, missing, str(tmp_path / "also-missing")])
    assert native.value.errno == errno.ENOENT
    assert native.value.filename == missing
    assert missing in str(native.value)
    with pytest.raises(FileNotFoundError) as reference:
        sha256_files_reference([ok, missing])
    assert str(native.value) == str(reference.value)


def test_missing_path_object_reports_fspath(tmp_path: Path) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(FileNotFoundError) as exc:
        docent_native.sha256_files([missing])
    assert exc.value.filename == str(missing)


def test_directory_raises_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as exc:
        docent_native.sha256_files([str(tmp_path)])
    assert exc.value.filename == str(tmp_path)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file_raises_permission_error(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_bytes(b"x")
    path.chmod(0)
    with pytest.raises(PermissionError):
        docent_native.sha256_files([str(path)])


@pytest.mark.parametrize("chunk_size", [0, -1, MAX_CHUNK_SIZE + 1])
def test_bad_chunk_size(chunk_size: int) -> None:
    message = f"^{re.escape(f'chunk_size must be between 1 and {MAX_CHUNK_SIZE}')}$"
    with pytest.raises(ValueError, match=message):
        docent_native.sha256_files([], chunk_size=chunk_size)
    with pytest.raises(ValueError, match=message):
        sha256_files_reference([], chunk_size=chunk_size)


def test_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError):
        docent_native.sha256_files("not-a-list")  # a str is a Sequence, but not a list of paths
