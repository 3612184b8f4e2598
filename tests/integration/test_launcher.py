"""`run_system.py` end to end: real services on free ports, health, crash restart, stop, port in use.

The services run as real subprocesses (the launcher's children) with the
extractive backend and no LLM preload, so only the packaged embedder loads.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher import proc
from launcher.services import frontend_available
from testkit import REPO_ROOT

RUN_SYSTEM = str(REPO_ROOT / "run_system.py")
START_DEADLINE_S = 400.0  # model loading on a busy 2-core machine; a deadline, not a timing assertion


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def launcher_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCENT_", "RAG_API_", "GATEWAY_"))}
    env.update(DOCENT_DATA_DIR=str(tmp / "data"), LLM_BACKEND="extractive", LLM_PRELOAD="false",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", OLLAMA_HOST="http://127.0.0.1:9")
    return env


def cli(tmp: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, RUN_SYSTEM, *args], cwd=tmp, env=launcher_env(tmp),
                          capture_output=True, text=True, timeout=timeout)


def pid_record(tmp: Path) -> dict[str, Any] | None:
    try:
        return json.loads((tmp / "logs" / "run_system.pid").read_text())
    except (OSError, ValueError):
        return None


def wait_for(predicate: Any, deadline_s: float, what: str, interval: float = 0.5) -> Any:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {deadline_s:.0f} s waiting for {what}")


class Running:
    def __init__(self, tmp: Path, ports: list[int], popen: subprocess.Popen[str]) -> None:
        self.tmp, self.ports, self.popen = tmp, ports, popen
        self.seen_pids: set[tuple[int, int | None]] = set()

    def remember(self) -> dict[str, Any]:
        record = pid_record(self.tmp)
        assert record is not None
        for rec in [record["launcher"], *record["services"].values()]:
            self.seen_pids.add((rec["pid"], rec["start_ticks"]))
        return record


def start_launcher(tmp: Path) -> Running:
    """Start `run_system.py` on free ports and return once it printed its summary."""
    rag, gateway, front = free_ports(3)
    args = ["--rag-port", str(rag), "--gateway-port", str(gateway), "--frontend-port", str(front),
            "--watch-interval", "1"]
    if not frontend_available():
        args.append("--no-frontend")
    popen = subprocess.Popen([sys.executable, RUN_SYSTEM, *args], cwd=tmp, env=launcher_env(tmp),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    state = Running(tmp, [rag, gateway, front], popen)
    assert popen.stdout is not None
    output = []
    for line in popen.stdout:  # the launcher prints its summary once everything is healthy
        output.append(line)
        if line.startswith("Docent is up"):
            break
    assert popen.poll() is None, f"launcher exited: {popen.returncode}: {''.join(output)}"
    state.remember()
    return state


def cleanup(state: Running) -> None:
    """Whatever a failed test left running: stop the launcher, then any child by recorded pid."""
    if state.popen.poll() is None:
        state.popen.send_signal(signal.SIGTERM)
        try:
            state.popen.wait(timeout=60)
        except subprocess.TimeoutExpired:
            state.popen.kill()
    for pid, ticks in state.seen_pids:
        if proc.alive(pid, ticks):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    state = start_launcher(tmp_path_factory.mktemp("launcher"))
    try:
        yield state
    finally:
        cleanup(state)


def test_health_exits_zero_when_everything_is_up(running: Running) -> None:
    done = cli(running.tmp, "--health")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rag-api" in done.stdout and "gateway" in done.stdout and "unhealthy" not in done.stdout
    record = running.remember()
    assert record["launcher"]["pid"] == running.popen.pid
    assert set(record["services"]) == ({"rag-api", "gateway", "frontend"} if frontend_available()
                                       else {"rag-api", "gateway"})
    for name in record["services"]:
        lines = (running.tmp / "logs" / f"{name}.log").read_text().splitlines()
        assert lines and all(isinstance(json.loads(line), dict) for line in lines)


def test_killed_rag_api_is_restarted(running: Running) -> None:
    before = running.remember()["services"]["rag-api"]
    os.kill(before["pid"], signal.SIGKILL)
    wait_for(lambda: not proc.alive(before["pid"], before["start_ticks"]), 10, "the RAG API to die")
    done = cli(running.tmp, "--health")
    assert done.returncode != 0 and "rag-api" in done.stdout and "unhealthy" in done.stdout

    def respawned() -> dict[str, Any] | None:
        rec = (pid_record(running.tmp) or {}).get("services", {}).get("rag-api")
        return rec if rec and rec["pid"] != before["pid"] and proc.alive(rec["pid"], rec["start_ticks"]) else None

    after = wait_for(respawned, 10, "the launcher to start a new RAG API")  # the 10 s promise
    assert after["restarts"] == before["restarts"] + 1
    running.remember()
    wait_for(lambda: cli(running.tmp, "--health").returncode == 0, START_DEADLINE_S, "a healthy RAG API again", 2)
    events = [json.loads(line) for line in (running.tmp / "logs" / "launcher.log").read_text().splitlines()]
    assert any(e["msg"] == "service exited; restarting" and e.get("service") == "rag-api" for e in events)


def test_hung_gateway_is_restarted(running: Running) -> None:
    """A gateway that is alive but answers nothing (SIGSTOP) fails its health checks and is replaced."""
    before = running.remember()["services"]["gateway"]
    os.kill(before["pid"], signal.SIGSTOP)

    def replaced() -> dict[str, Any] | None:
        rec = (pid_record(running.tmp) or {}).get("services", {}).get("gateway")
        return rec if rec and rec["pid"] != before["pid"] else None

    after = wait_for(replaced, 120, "the launcher to replace the hung gateway")
    assert after["restarts"] == before["restarts"] + 1
    running.remember()
    assert not proc.alive(before["pid"], before["start_ticks"])
    wait_for(lambda: cli(running.tmp, "--health").returncode == 0, START_DEADLINE_S, "a healthy gateway again", 2)
    events = [json.loads(line) for line in (running.tmp / "logs" / "launcher.log").read_text().splitlines()]
    assert any(e["msg"].startswith("service not answering") and e.get("service") == "gateway" for e in events)


def test_stop_leaves_no_process_behind(running: Running) -> None:
    running.remember()
    done = cli(running.tmp, "--stop")
    assert done.returncode == 0, done.stdout + done.stderr
    running.popen.wait(timeout=30)
    left = [pid for pid, ticks in running.seen_pids if proc.alive(pid, ticks)]
    assert left == []
    assert pid_record(running.tmp) is None
    for port in running.ports:
        assert proc.port_free("127.0.0.1", port)
    again = cli(running.tmp, "--stop")
    assert again.returncode == 0 and "nothing to stop" in again.stdout
    after = cli(running.tmp, "--health")
    assert after.returncode != 0 and "unreachable" in after.stdout


def test_port_in_use_names_the_holder(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        (gateway,) = free_ports(1)
        done = cli(tmp_path, "--no-frontend", "--rag-port", str(port), "--gateway-port", str(gateway))
    assert done.returncode == 1
    assert f"port {port}" in done.stderr and f"pid {os.getpid()}" in done.stderr and "--rag-port" in done.stderr
    assert pid_record(tmp_path) is None


def test_stop_after_the_launcher_was_killed_leaves_no_service_behind(tmp_path: Path) -> None:
    state = start_launcher(tmp_path)
    try:
        record = state.remember()
        os.kill(record["launcher"]["pid"], signal.SIGKILL)
        state.popen.wait(timeout=30)
        services = list(record["services"].values())
        assert all(proc.alive(r["pid"], r["start_ticks"]) for r in services)  # orphans, still serving
        done = cli(tmp_path, "--stop")
        assert done.returncode == 0, done.stdout + done.stderr
        assert [r["pid"] for r in services if proc.alive(r["pid"], r["start_ticks"])] == []
        assert pid_record(tmp_path) is None
    finally:
        cleanup(state)
