"""Launcher logic without services: backoff, pid file, process identity, port owner, log lines."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from launcher import health, logs, pidfile, proc
from launcher.backoff import Backoff
from launcher.services import build_specs, resolve_port


def test_backoff_doubles_up_to_the_cap_and_resets_after_a_stable_run() -> None:
    b = Backoff(initial=1.0, factor=2.0, maximum=10.0, stable_s=30.0)
    assert [b.next_delay() for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    b.observe_uptime(29.9)
    assert b.next_delay() == 10.0  # not stable long enough: still backing off
    b.observe_uptime(30.0)
    assert b.attempts == 0 and b.next_delay() == 1.0


def test_first_restart_comes_within_the_ten_second_promise() -> None:
    assert Backoff().next_delay() <= 2.0


def test_pid_file_round_trip_and_atomic_write(tmp_path: Path) -> None:
    path = tmp_path / "logs" / pidfile.PID_FILE_NAME
    me = pidfile.ProcessRecord(os.getpid(), proc.start_ticks(os.getpid()))
    record = pidfile.PidFile(me, {"rag-api": pidfile.ProcessRecord(123, 456, "http://127.0.0.1:1", 2)})
    pidfile.write(path, record)
    assert json.loads(path.read_text())["services"]["rag-api"]["restarts"] == 2
    assert pidfile.read(path) == record
    assert [p.name for p in path.parent.iterdir()] == [pidfile.PID_FILE_NAME]  # no temp file left
    assert pidfile.running_launcher(path) == record


def test_stale_or_foreign_pid_file(tmp_path: Path) -> None:
    path = tmp_path / pidfile.PID_FILE_NAME
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)
    pidfile.write(path, pidfile.PidFile(pidfile.ProcessRecord(dead, 1)))
    assert pidfile.running_launcher(path) is None  # a dead launcher's file is stale
    # Our own pid with another start time is a recycled pid, not our launcher.
    pidfile.write(path, pidfile.PidFile(pidfile.ProcessRecord(os.getpid(), (proc.start_ticks(os.getpid()) or 0) + 1)))
    assert pidfile.running_launcher(path) is None
    pidfile.remove(path, owner_pid=os.getpid() + 1)
    assert path.exists()  # another launcher's file is left alone
    pidfile.remove(path, owner_pid=os.getpid())
    assert not path.exists()
    path.write_text("{not json")
    assert pidfile.read(path) is None


def test_port_owner_is_named() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not proc.port_free("127.0.0.1", port)
        holder = proc.port_holder(port)
        assert holder is not None and holder.pid == os.getpid()
        message = proc.describe_port_conflict("rag-api", "127.0.0.1", port)
        assert f"port {port}" in message and f"pid {os.getpid()}" in message and "--rag-port" in message
    assert proc.port_free("127.0.0.1", port)


def test_log_lines_are_always_json() -> None:
    line = '{"ts": "x", "level": "info", "msg": "hello"}\n'
    assert logs.as_json_line("gateway", line) == line.strip()
    wrapped = json.loads(logs.as_json_line("rag-api", "error: cannot listen on 127.0.0.1:8001\n"))
    assert wrapped["level"] == "error" and wrapped["logger"] == "rag-api.output"
    assert wrapped["msg"] == "error: cannot listen on 127.0.0.1:8001"
    assert json.loads(logs.as_json_line("x", "[1, 2]"))["msg"] == "[1, 2]"


def test_service_log_rotates(tmp_path: Path) -> None:
    logger = logs.file_logger("svc", tmp_path, max_bytes=200, backups=2)
    for i in range(20):
        logger.info(logs.as_json_line("svc", f"line {i:03d} " + "x" * 40))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["svc.log", "svc.log.1", "svc.log.2"]
    for name in names:
        for line in (tmp_path / name).read_text().splitlines():
            json.loads(line)


def test_follow_prints_new_lines_with_the_service_name(tmp_path: Path) -> None:
    (tmp_path / "gateway.log").write_text('{"msg": "old"}\n')
    out = io.StringIO()
    stop = threading.Event()
    thread = threading.Thread(target=logs.follow, args=(tmp_path, out), kwargs={"poll": 0.05, "stop": stop})
    thread.start()
    try:
        with (tmp_path / "gateway.log").open("a") as f:
            f.write('{"msg": "new"}\n{"msg": "half')
        deadline = threading.Event()
        for _ in range(100):
            if '"new"' in out.getvalue():
                break
            deadline.wait(0.05)
    finally:
        stop.set()
        thread.join()
    text = out.getvalue()
    assert '[gateway] {"msg": "old"}' in text and '[gateway] {"msg": "new"}' in text
    assert "half" not in text  # an incomplete line waits


def test_specs_wire_the_services_together() -> None:
    ports = {"rag-api": 9001, "gateway": 9000, "frontend": 9003}
    rag, gateway, frontend = build_specs("127.0.0.1", ports, with_frontend=True, environ={})
    assert rag.argv[-4:] == ("--host", "127.0.0.1", "--port", "9001")
    assert gateway.env["RAG_API_URL"] == "http://127.0.0.1:9001"
    assert rag.env["DOCENT_GATEWAY_URL"] == "http://127.0.0.1:9000"
    assert "http://localhost:9003" in frontend.env["DOCENT_CORS_ORIGINS"]
    assert frontend.env["FRONTEND_PORT"] == "9003"
    assert frontend.env["DOCENT_GATEWAY_PUBLIC_URL"] == "http://127.0.0.1:9000"
    assert frontend.env["DOCENT_RAG_PUBLIC_URL"] == "http://127.0.0.1:9001"
    *_, mine = build_specs("127.0.0.1", ports, with_frontend=True, environ={"DOCENT_RAG_PUBLIC_URL": "https://rag.example"})
    assert "DOCENT_RAG_PUBLIC_URL" not in mine.env  # the user's own setting is inherited, not overridden
    assert len(build_specs("0.0.0.0", ports, with_frontend=False, environ={})) == 2
    assert resolve_port("gateway", None, {"GATEWAY_PORT": "8100"}) == 8100
    assert resolve_port("gateway", 8200, {"GATEWAY_PORT": "8100"}) == 8200
    assert resolve_port("rag-api", None, {}) == 8001


def test_health_of_nothing_listening_is_unreachable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = health.check("rag-api", f"http://127.0.0.1:{port}", timeout=2)
    assert not result.healthy and result.status == "unreachable"
    assert "unreachable (unhealthy)" in health.table([result])


@pytest.mark.parametrize("code, body, healthy", [
    (200, {"status": "ok"}, True), (200, {"status": "degraded"}, True),
    (503, {"status": "unavailable"}, False), (200, {"status": "unavailable"}, False), (404, None, False)])
def test_health_reads_status_and_body(code: int, body: object, healthy: bool) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            raw = json.dumps(body).encode() if body is not None else b""
            self.send_response(code)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = health.check("x", f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert result.healthy is healthy and result.http_status == code
