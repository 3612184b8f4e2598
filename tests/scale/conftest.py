"""One real SeaweedFS S3 server on loopback for the whole scale-out suite.

Starting `weed mini` takes about a second, so the suite shares one server and
each test keeps to its own key prefix (`s3_uri`), which is as isolated as a
separate bucket for LanceDB.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.seaweed import READER, WRITER, Credentials, S3Server, seaweed


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with seaweed(tmp_path_factory.mktemp("seaweed")) as server:
        yield server


@pytest.fixture()
def s3_uri(s3: S3Server) -> str:
    return s3.uri(f"t-{uuid.uuid4().hex[:12]}")


def s3_settings(s3: S3Server, uri: str, data_dir: Path, creds: Credentials = WRITER, **env: str):  # type: ignore[no-untyped-def]
    """Settings of a Docent process whose store is `uri` on the test server."""
    from tests.integration.api_support import api_settings

    return api_settings(data_dir, LANCEDB_URI=uri, **s3.env(creds), **env)


__all__ = ["READER", "WRITER", "s3_settings"]
