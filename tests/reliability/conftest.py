"""One gateway + RAG API stack (token configured) shared by the bad-input, hostile-file and security tests.

The stack is seeded with an index, a linked session and one answered turn;
`baseline` is a snapshot of that data taken before any test probes it, so
every test can prove that nothing it sent changed what a user owns. Its RAG
API sends `backend: openai` to a real llama.cpp server (`model_server`) that
the LLM fault kills. The other fault tests start stacks of their own, because
they kill our processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from testkit.model_server import ModelServer
from testkit.scenarios.hostile import HOSTILE_ENV
from testkit.stack import Stack


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    """llama-cpp-python's server with the packaged 0.5B GGUF, started once; the LLM fault SIGKILLs it."""
    server = ModelServer(tmp_path_factory.mktemp("model-server")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, model_server: ModelServer) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("reliability")
    running = Stack(root, rag_env={**HOSTILE_ENV, **model_server.rag_env()}).start()
    try:
        running.make_seed(tmp_path_factory.mktemp("seed-files"))
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def baseline(stack: Stack) -> dict[str, Any]:
    return stack.snapshot()


@pytest.fixture()
def intact(stack: Stack, baseline: dict[str, Any]) -> Iterator[None]:
    """After the test: the seed data is unchanged, both services are up, nothing was written outside the data dir."""
    from testkit.stack import changed

    outside = stack.outside_files()
    yield
    assert stack.alive() == {"gateway": True, "rag_api": True}, "a service died"
    problems = changed(baseline, stack.snapshot(), ignore=set(stack.seed.extra.values()))
    assert not problems, "existing data changed:\n" + "\n".join(problems)
    assert stack.outside_files() == outside, "files appeared outside the data directory"

