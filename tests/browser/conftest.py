"""The real three services (RAG API, gateway, web app) on free ports, and headless Debian Chromium.

The RAG API's server default stays `extractive` (fast, deterministic answers
for most tests); a test that needs a model writing tokens chooses `llamacpp`
in Settings, which runs the packaged Qwen2.5-Coder-0.5B GGUF embedded in the
RAG API (`MODEL_ENV`, shared with the reliability faults in testkit/stack.py), the smallest instruction model in the catalog.

Chromium comes from Debian (`apt-get install chromium`, or `make setup-browser`)
because `npx playwright install` cannot download browsers here; Playwright for
Python drives it through `executable_path`. Without it these tests fail with a
message saying how to install it (they are never skipped silently).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from testkit import REPO_ROOT
from testkit.processes import GatewayProcess, RagApiProcess, _Process, base_env, free_port
from testkit.stack import MODEL_ENV

CHROMIUM = os.environ.get("DOCENT_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = REPO_ROOT / "tests" / "browser" / "artifacts"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def _require_browser() -> None:
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.fail(f"Chromium is missing at {CHROMIUM}: the browser tests need Debian's chromium. "
                    "Install it with `make setup-browser` (runs `apt-get install -y chromium` as root) "
                    "or set DOCENT_CHROMIUM to a Chromium binary.", pytrace=False)
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.fail("Playwright for Python is missing: run `make setup` (it is pinned in requirements.txt).", pytrace=False)
    if not (REPO_ROOT / "frontend" / "node_modules" / "marked").is_dir():
        pytest.fail("frontend/node_modules is missing: run `make setup` (npm ci in frontend/).", pytrace=False)


class FrontendProcess(_Process):
    name = "web app"

    def __init__(self, data_dir: Path, port: int, gateway_url: str, rag_url: str) -> None:
        env = base_env(data_dir, DOCENT_GATEWAY_PUBLIC_URL=gateway_url, DOCENT_RAG_PUBLIC_URL=rag_url)
        super().__init__([sys.executable, "-m", "frontend", "--port", str(port)], env, port,
                         data_dir.parent / f"frontend-{port}.log")


class Stack:
    def __init__(self, data: Path, gateway: GatewayProcess, rag: RagApiProcess, web: FrontendProcess) -> None:
        self.data, self.gateway, self.rag, self.web = data, gateway, rag, web
        self.url = web.url


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with started_stack(tmp_path_factory, "browser", DOCENT_SSE_HEARTBEAT_S="5") as up:
        yield up


@contextmanager
def started_stack(tmp_path_factory: pytest.TempPathFactory, name: str, **rag_env: str) -> Iterator[Stack]:
    """The three services on free ports, the RAG API with the packaged model (`MODEL_ENV`) and `rag_env`
    (a test module's scripted model, say)."""
    _require_browser()
    data = tmp_path_factory.mktemp(name) / "data"
    gw_port, rag_port, web_port = free_port(), free_port(), free_port()
    origins = f"http://127.0.0.1:{web_port},http://localhost:{web_port}"
    gateway = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", DOCENT_CORS_ORIGINS=origins)
    rag = RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", DOCENT_CORS_ORIGINS=origins,
                        **{**MODEL_ENV, **rag_env})
    web = FrontendProcess(data, web_port, gateway.url, rag.url)
    with running(Stack(data, gateway, rag, web)) as up:
        yield up


@contextmanager
def running(stack: Stack) -> Iterator[Stack]:
    """The stack's three services started (the RAG API last: it loads models), and stopped afterwards."""
    started: list[_Process] = []
    try:
        for proc, wait in ((stack.gateway, 30), (stack.web, 30), (stack.rag, 240)):
            proc.start(wait_s=wait)
            started.append(proc)
        yield stack
    finally:
        for proc in reversed(started):
            proc.stop()


@pytest.fixture(scope="module")
def browser(stack: Stack) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                               args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                     "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture()
def page(browser: Any, stack: Stack, request: pytest.FixtureRequest) -> Any:
    ctx = browser.new_context(viewport=DESKTOP, bypass_csp=True, reduced_motion="reduce")  # lets wait_for_function eval; the app never needs it
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    pg.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    pg.errors = errors
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:  # what the browser showed when it failed
        pg.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"))
    ctx.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the test item, so the page fixture can screenshot a failure."""
    outcome = yield
    setattr(item, f"rep_{call.when}", outcome.get_result())
