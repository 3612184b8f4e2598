"""Indexing files that live in object storage (`index s3://bucket/prefix`, issue 46) on a real SeaweedFS.

The objects are the same files a local folder holds, so the index must be the one a folder build
makes, but for each file's name (its URI): the same chunk ids and texts. The single process and a
local Ray cluster of two workers (which fetch their own objects, with the store and the source
credentials the driver sends them) must make identical rows and manifests; a re-run after one object
changed and one was deleted must touch exactly those two; an object replaced between plan and fetch
is held, not indexed with the wrong hash; and the CLI says what is wrong with a bad URI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rag_system.indexing.builder import build_index
from rag_system.indexing.plan import SourceFile
from testkit.docs import make_markdown, make_pdf
from testkit.seaweed import S3Server
from tests.integration.api_support import write_docs
from tests.scale.conftest import s3_settings

ray = pytest.importorskip("ray", reason="ray is not installed (requirements.txt)")
pytest.importorskip("lance", reason="pylance is not installed (requirements.txt)")

from rag_system.indexing.distributed import build_index_distributed  # noqa: E402
from tests.integration.test_distributed_build import _assert_same_rows, _manifest, _rows  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _filesystem(s3: S3Server) -> Any:
    from pyarrow import fs

    env = s3.env()
    return fs.S3FileSystem(endpoint_override=s3.endpoint, access_key=env["AWS_ACCESS_KEY_ID"],
                           secret_key=env["AWS_SECRET_ACCESS_KEY"], region=env["AWS_REGION"])


def _put(s3: S3Server, uri: str, data: bytes) -> None:
    with _filesystem(s3).open_output_stream(uri.removeprefix("s3://")) as out:
        out.write(data)


def _upload(s3: S3Server, folder: Path, prefix: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            _put(s3, f"{prefix}/{path.relative_to(folder).as_posix()}", path.read_bytes())


def _documents(folder: Path) -> Path:
    docs = write_docs(folder)
    make_pdf(docs / "atlas.pdf")
    make_markdown(docs / "guide.md")
    return docs


def test_an_s3_prefix_indexes_like_a_folder_on_one_process_and_on_ray(s3: S3Server, s3_uri: str, tmp_path: Path,
                                                                       cluster: None) -> None:
    docs = _documents(tmp_path / "docs")
    source = f"{s3_uri}-src/docs"
    _upload(s3, docs, source)
    _put(s3, f"{source}/.draft.md", b"# Draft\n\nNot for the index.\n")  # hidden: never listed
    _put(s3, f"{source}/photo.bin", b"\0\1\2")  # unsupported: skipped, and said so
    # fp32: with bfloat16 a vector depends on the batch it was embedded in (tests/integration/test_distributed_build.py)
    folder = s3_settings(s3, f"{s3_uri}-folder", tmp_path / "folder", EMBEDDING_PRECISION="fp32")
    single = s3_settings(s3, f"{s3_uri}-single", tmp_path / "single", EMBEDDING_PRECISION="fp32")
    spread = s3_settings(s3, f"{s3_uri}-spread", tmp_path / "spread", EMBEDDING_PRECISION="fp32")

    local = build_index([docs], "kb", folder)
    alone = build_index([source], "kb", single)
    assert (alone.added, alone.failed, alone.chunks) == (local.added, [], local.chunks) and alone.added == 5
    assert alone.skipped == [f"{source}/photo.bin"]
    by_folder, by_object = _rows(folder, "kb")["chunks"], _rows(single, "kb")["chunks"]
    assert by_object.keys() == by_folder.keys()  # same bytes, same chunk ids
    assert [r["text"] for r in by_object.values()] == [r["text"] for r in by_folder.values()]
    paths = {json.loads(r["metadata"])["source_path"] for r in by_object.values()}
    assert paths == {f"{source}/{p.name}" for p in docs.iterdir()}
    assert set(_manifest(single, "kb")) == paths

    events: list[Any] = []
    spread_summary = build_index_distributed([source], "kb", spread, on_event=events.append)
    assert (spread_summary.added, spread_summary.failed) == (5, [])
    assert [e.data["fragments"]["chunks"] >= 1 for e in events if e.type == "build_committed"] == [True]
    _assert_same_rows(_rows(single, "kb"), _rows(spread, "kb"))
    assert _manifest(single, "kb") == _manifest(spread, "kb")

    _put(s3, f"{source}/guide.md", b"# Guide\n\nQuokkas are small marsupials that live on Rottnest Island.\n")
    _filesystem(s3).delete_file(f"{source}/atlas.pdf".removeprefix("s3://"))
    for settings, build in ((single, build_index), (spread, build_index_distributed)):
        again = build([source], "kb", settings)
        assert (again.added, again.updated, again.removed, again.unchanged, again.failed) == (0, 1, 1, 3, [])
    _assert_same_rows(_rows(single, "kb"), _rows(spread, "kb"))
    assert set(_manifest(spread, "kb")) == paths - {f"{source}/atlas.pdf"}


def test_an_object_replaced_after_planning_is_held(s3: S3Server, s3_uri: str, tmp_path: Path) -> None:
    from rag_system.embedding.lazy import build_embedder
    from rag_system.indexing.builder import chunker_options
    from rag_system.indexing.prepare import prepare_file

    uri = f"{s3_uri}-src/note.md"
    _put(s3, uri, b"# Note\n\nThe first version.\n")
    settings = s3_settings(s3, f"{s3_uri}-store", tmp_path / "data")
    embedder = build_embedder(settings)
    events: list[Any] = []
    planned = SourceFile(Path("note.md"), "0" * 64, 27, uri)  # the hash of bytes no longer there
    prepared = prepare_file(planned, None, settings, embedder, chunker_options(settings, embedder), events.append)
    assert prepared.held and prepared.document is None and prepared.error is None
    assert [e.type for e in events] == ["file_started", "file_held"]


def _cli(s3: S3Server, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **s3.env(), "DOCENT_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "rag_system", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def test_the_cli_indexes_an_s3_prefix_and_names_a_wrong_one(s3: S3Server, s3_uri: str, tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    _upload(s3, docs, f"{s3_uri}-src")
    done = _cli(s3, tmp_path / "data", "index", f"{s3_uri}-src", "--index", "kb", "--json", "--local")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["files"]["added"] == len(list(docs.iterdir())) and summary["files"]["failed"] == []
    missing = _cli(s3, tmp_path / "data", "index", f"{s3_uri}-nothing-here", "--index", "kb")
    assert missing.returncode == 2 and f"no such object or prefix: {s3_uri}-nothing-here" in missing.stderr
    bucketless = _cli(s3, tmp_path / "data", "index", "s3://", "--index", "kb")
    assert bucketless.returncode == 2 and "name a bucket" in bucketless.stderr
