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


#: What a Ray worker would otherwise find the store by; removed from the environment a test's cluster inherits.
STORE_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
                   "AWS_ALLOW_HTTP", "LANCEDB_URI")


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray cluster of two workers started without any AWS_* variable or LANCEDB_URI: its workers can
    reach the store and the objects only through what the driver sends in the task spec."""
    ray = pytest.importorskip("ray", reason="ray is not installed (requirements.txt)")
    from rag_system.indexing.distributed import ray_cluster

    if ray.is_initialized():
        pytest.skip("this process is already connected to a Ray cluster, started with another environment")
    with pytest.MonkeyPatch.context() as env:
        for name in STORE_VARIABLES:
            env.delenv(name, raising=False)
        with ray_cluster("local:2"):
            yield


def s3_settings(s3: S3Server, uri: str, data_dir: Path, creds: Credentials = WRITER, **env: str):  # type: ignore[no-untyped-def]
    """Settings of a Docent process whose store is `uri` on the test server."""
    from tests.integration.api_support import api_settings

    return api_settings(data_dir, LANCEDB_URI=uri, **s3.env(creds), **env)


__all__ = ["READER", "STORE_VARIABLES", "WRITER", "s3_settings"]
