"""`python -m rag_system ask|chat` as a user runs them: JSON on stdout, nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from testkit import REPO_ROOT

QUIC = ("ack_delay_exponent (0x0a): The acknowledgment delay exponent is an integer value. If this value is "
        "absent, a default value of 3 is assumed (indicating a multiplier of 8). Values above 20 are invalid.")


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"), DOCENT_DATA_DIR=str(tmp_path / "data"),
               OLLAMA_HOST="http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rag_system", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_ask_answers_a_folder_and_removes_its_temporary_index(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "quic.txt").write_text(QUIC)
    (folder / "garden.txt").write_text("Tomatoes need six hours of sun every day.")
    env = _env(tmp_path)
    done = _run(["ask", str(folder), "What value is assumed when ack_delay_exponent is absent?", "--json",
                 "--backend", "extractive"], env)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["answer_source"] == "extractive"
    assert payload["citations"][0]["document_name"] == "quic.txt"
    assert "default value of 3" in payload["answer"]
    assert set(payload["token_usage"]) >= {"stages", "total"} and "total_ms" in payload["timings_ms"]
    assert list((tmp_path / "tmp").glob("docent-ask-*")) == []
    assert not (tmp_path / "data").exists()  # ask never touches the real data dir


def test_a_refusal_in_text_says_why(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "quic.txt").write_text(QUIC)
    done = _run(["ask", str(folder), "What is the annual salary of the QUIC working group chair?",
                 "--backend", "extractive"], _env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("The documents do not contain enough information")
    assert "\nWhy: " in done.stdout and "salary" in done.stdout.split("Why: ")[1]


def test_ask_on_a_missing_folder_is_a_usage_error(tmp_path: Path):
    done = _run(["ask", str(tmp_path / "nope"), "q"], _env(tmp_path))
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_sigterm_during_ask_leaves_nothing_behind(tmp_path: Path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(60):
        (folder / f"doc{i:02d}.txt").write_text(f"Document {i}. " + QUIC * 40)
    env = _env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "rag_system", "ask", str(folder), "What is assumed?",
                             "--backend", "extractive"], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not any((tmp_path / "tmp").glob("docent-ask-*/lancedb")):
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert list((tmp_path / "tmp").glob("docent-ask-*")) == []


def test_chat_on_a_missing_index_is_a_clear_error(tmp_path: Path):
    done = _run(["chat", "--index", "nothing_here", "what?", "--backend", "extractive"], _env(tmp_path))
    assert done.returncode == 2
    assert "nothing_here" in done.stderr and "Traceback" not in done.stderr
