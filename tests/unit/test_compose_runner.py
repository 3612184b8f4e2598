"""testkit/compose.py reads docker-compose.yml as compose would (checked here without an engine; the
images and the stack themselves run in `make test-deploy`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testkit.compose import ComposeError, ComposeStack, interpolate
from testkit.containers import Engine


def test_interpolation_refuses_a_required_variable_and_fills_defaults() -> None:
    with pytest.raises(ComposeError, match="set it please"):
        interpolate("${TOKEN:?set it please}", {})
    assert interpolate("${TOKEN:?x}", {"TOKEN": "t"}) == "t"
    assert interpolate("${SECRET:-}", {}) == "" and interpolate("${PORT:-8000}", {}) == "8000"


def test_the_default_services_start_in_dependency_order_with_their_settings(tmp_path: Path) -> None:
    stack = ComposeStack(Engine(tmp_path / "containers.conf"), env={"DOCENT_API_TOKEN": "tok"},
                         overrides={"rag-api": {"LLM_BACKEND": "extractive"}})
    assert stack._order() == ["rag-api", "backend", "frontend"]  # profiles (ollama, scale) are left out
    rag = stack.environment("rag-api")
    assert rag["DOCENT_API_TOKEN"] == "tok" and rag["RAG_API_HOST"] == "0.0.0.0" and rag["LLM_BACKEND"] == "extractive"
    assert stack.environment("frontend")["DOCENT_FRONTEND_API_TOKEN"] == "tok"
    args = stack._run_args("backend")
    assert args[-4:] == ["docent/backend:0.1.0", "python", "-m", "backend"]
    assert f"{stack.project}_docent-data:/data" in args and "--network-alias" in args
    health = json.loads(args[args.index("--health-cmd") + 1])
    assert health[:2] == ["python", "-c"] and "8000/health" in health[2]
    published = args[args.index("-p") + 1]
    assert published.startswith("127.0.0.1:") and published.endswith(":8000")
    with pytest.raises(ComposeError, match="DOCENT_API_TOKEN"):
        ComposeStack(Engine(tmp_path / "c.conf"), env={}).environment("rag-api")
