"""Scale-out settings: the store's S3 options, roles and the version retention rule."""

from __future__ import annotations

import pytest

from rag_system.config import ConfigError, load_settings


def _load(**env: str):  # type: ignore[no-untyped-def]
    return load_settings(environ=env, dotenv_path=None)


def test_s3_options_come_from_the_environment():
    s = _load(LANCEDB_URI="s3://b/p", AWS_ENDPOINT_URL="http://127.0.0.1:9000", AWS_ACCESS_KEY_ID="k",
              AWS_SECRET_ACCESS_KEY="s", AWS_REGION="eu-west-1", AWS_ALLOW_HTTP="true")
    assert s.storage_options == {"aws_endpoint": "http://127.0.0.1:9000", "aws_access_key_id": "k",
                                 "aws_secret_access_key": "s", "aws_region": "eu-west-1", "allow_http": "true"}
    # Unset keys are left to LanceDB's own lookup (instance roles, ~/.aws).
    assert _load(LANCEDB_URI="s3://b/p", AWS_REGION="us-east-1").storage_options == {"aws_region": "us-east-1"}
    # A local folder takes no object-store options at all.
    assert _load(AWS_REGION="us-east-1").storage_options == {}


def test_plain_http_endpoint_needs_allow_http():
    with pytest.raises(ConfigError, match="AWS_ALLOW_HTTP"):
        _load(LANCEDB_URI="s3://b/p", AWS_ENDPOINT_URL="http://minio:9000")


def test_roles_and_defaults():
    s = _load()
    assert (s.role, s.read_consistency_s, s.keep_versions_s) == ("all", 0.0, 3600.0)
    assert _load(DOCENT_ROLE="reader", DOCENT_WRITER_URL="http://w:8001").writer_url == "http://w:8001"
    with pytest.raises(ConfigError, match="DOCENT_ROLE"):
        _load(DOCENT_ROLE="leader")


def test_cleanup_must_outlive_replica_lag():
    with pytest.raises(ConfigError, match="DOCENT_KEEP_VERSIONS_S"):
        _load(DOCENT_READ_CONSISTENCY_S="600", DOCENT_KEEP_VERSIONS_S="300")
    with pytest.raises(ConfigError, match="DOCENT_READ_CONSISTENCY_S"):
        _load(DOCENT_READ_CONSISTENCY_S="-1")
    assert _load(DOCENT_READ_CONSISTENCY_S="600", DOCENT_KEEP_VERSIONS_S="660").keep_versions_s == 660
