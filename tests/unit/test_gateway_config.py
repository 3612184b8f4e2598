"""Gateway settings from the environment, and the bind rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config import DEFAULT_ORIGINS, GatewayConfigError, load_gateway_config
from common.net import is_loopback


def test_defaults() -> None:
    c = load_gateway_config(environ={}, dotenv_path=None)
    assert (c.host, c.port, c.api_token, c.rag_api_url) == ("127.0.0.1", 8000, "", "http://127.0.0.1:8001")
    assert c.max_upload_bytes == 200 * 1024 * 1024 and c.rag_api_timeout_s == 300
    assert c.cors_origins == DEFAULT_ORIGINS
    assert c.database == Path("data/docent.db") and c.uploads_dir == Path("data/uploads")


def test_environment_overrides(tmp_path: Path) -> None:
    c = load_gateway_config(environ={"DOCENT_DATA_DIR": str(tmp_path), "DOCENT_MAX_UPLOAD_MB": "1",
                                     "RAG_API_URL": "http://rag:9/", "RAG_API_TIMEOUT": "2.5",
                                     "DOCENT_CORS_ORIGINS": "http://a:1/, http://b:2", "DB_PATH": "/x/y.db"},
                            dotenv_path=None)
    assert c.max_upload_bytes == 1024 * 1024 and c.rag_api_url == "http://rag:9" and c.rag_api_timeout_s == 2.5
    assert c.cors_origins == ("http://a:1", "http://b:2") and c.database == Path("/x/y.db")
    assert c.uploads_dir == tmp_path / "uploads"


@pytest.mark.parametrize("env", [{"DOCENT_MAX_UPLOAD_MB": "lots"}, {"RAG_API_TIMEOUT": "0"},
                                 {"DOCENT_CORS_ORIGINS": "*"}, {"RAG_API_URL": "ftp://x"}, {"GATEWAY_PORT": "x"}])
def test_bad_values_name_the_variable(env: dict[str, str]) -> None:
    with pytest.raises(GatewayConfigError) as err:
        load_gateway_config(environ=env, dotenv_path=None)
    assert next(iter(env)) in str(err.value)


def test_non_loopback_bind_needs_a_token() -> None:
    open_config = load_gateway_config(environ={}, dotenv_path=None)
    with pytest.raises(GatewayConfigError):
        open_config.check_bind("0.0.0.0")
    open_config.check_bind("127.0.0.1")
    open_config.check_bind("::1")
    load_gateway_config(environ={"DOCENT_API_TOKEN": "t"}, dotenv_path=None).check_bind("0.0.0.0")


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                                ("localhost", True), ("0.0.0.0", False), ("", False),
                                                ("192.168.1.4", False), ("example.com", False)])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
