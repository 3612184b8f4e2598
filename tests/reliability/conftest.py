"""One gateway + RAG API stack (token configured) shared by the bad-input, hostile-file and security tests.

The stack is seeded with an index, a linked session and one answered turn;
`baseline` is a snapshot of that data taken before any test probes it, so
every test can prove that nothing it sent changed what a user owns. The
fault tests start stacks of their own, because they kill processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from eval.faults import DyingLLM, dying_llm_env
from eval.hostile import HOSTILE_ENV
from eval.stack import Stack


@pytest.fixture(scope="session")
def dying_llms() -> Iterator[tuple[DyingLLM, DyingLLM]]:
    """LLM servers that die mid-answer (chunked OpenAI, plain Ollama), reachable from the shared stack."""
    chunked, plain = DyingLLM(chunked=True), DyingLLM(chunked=False)
    yield chunked, plain
    chunked.stop()
    plain.stop()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory, dying_llms: tuple[DyingLLM, DyingLLM]) -> Iterator[Stack]:
    root = tmp_path_factory.mktemp("reliability")
    running = Stack(root, rag_env={**HOSTILE_ENV, **dying_llm_env(*dying_llms)}).start()
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
    from eval.stack import changed

    outside = stack.outside_files()
    yield
    assert stack.alive() == {"gateway": True, "rag_api": True}, "a service died"
    problems = changed(baseline, stack.snapshot(), ignore=set(stack.seed.extra.values()))
    assert not problems, "existing data changed:\n" + "\n".join(problems)
    assert stack.outside_files() == outside, "files appeared outside the data directory"

