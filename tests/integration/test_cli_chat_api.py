"""`chat` answers through a running RAG API (no model loaded in the CLI) and streams the answer once.

Checked by what the process imports (`python -X importtime`), not by the clock,
and by comparing the answer with the one the API gives directly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from testkit import REPO_ROOT
from tests.integration.api_support import api_settings, build, running_api, write_docs

QUESTION = "How many days of annual leave do employees accrue per year?"


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "rag_system", *args], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_chat_goes_through_the_running_api_and_streams_once(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    settings = api_settings(tmp_path / "data", LLM_BACKEND="extractive")
    docs = write_docs(tmp_path / "data" / "uploads" / "kb")
    with running_api(settings, embedder) as api:
        job, _ = build(api, "kb", [str(docs)])
        assert job["state"] == "done", job
        env = {**os.environ, "DOCENT_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1",
               "LLM_BACKEND": "extractive", "RAG_API_URL": f"http://{api.host}:{api.port}"}
        done = _cli(["chat", "--index", "kb", QUESTION, "--json"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "answering through the RAG API" in done.stderr
        assert "torch" not in _imported(done.stderr) and "llama_cpp" not in _imported(done.stderr)
        payload = json.loads(done.stdout)
        status, _, direct = api.call("POST", "/chat", {"query": QUESTION, "indexes": ["kb"]})
        assert status == 200
        assert payload["answer"] == direct["answer"] and "25 days" in payload["answer"]

        streamed = _cli(["chat", "--index", "kb", QUESTION, "--stream"], env)
        assert streamed.returncode == 0, streamed.stderr[-2000:]
        # the extractive backend streams no tokens, so the answer is printed once, on stdout
        assert streamed.stdout.count("25 days of annual leave") == 1
        assert "25 days of annual leave" not in streamed.stderr.replace(QUESTION, "")

        missing = _cli(["chat", "--index", "nosuch", QUESTION], env)
        assert missing.returncode == 2 and "error:" in missing.stderr

        local = _cli(["chat", "--index", "kb", QUESTION, "--local", "--json"], env)
        assert local.returncode == 0, local.stderr[-2000:]
        assert "answering through the RAG API" not in local.stderr
        assert json.loads(local.stdout)["answer"] == payload["answer"]
