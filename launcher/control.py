"""`--stop` and `--health`: act on a launcher that runs in another process, via its pid file.

Why verify start times before signalling: the pid file may be stale (the
launcher was killed with -9, the machine rebooted) and its pids recycled;
`ProcessRecord.alive` compares the recorded start time so only processes the
launcher started are ever signalled.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from launcher import health, pidfile
from launcher.services import ServiceSpec


def _wait_gone(records: list[pidfile.ProcessRecord], timeout: float) -> list[pidfile.ProcessRecord]:
    end = time.monotonic() + timeout
    left = [r for r in records if r.alive()]
    while left and time.monotonic() < end:
        time.sleep(0.1)
        left = [r for r in left if r.alive()]
    return left


def _signal(record: pidfile.ProcessRecord, sig: signal.Signals, group: bool) -> None:
    if not record.alive():
        return
    try:
        if group:
            os.killpg(record.pid, sig)
        else:
            os.kill(record.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop(pid_path: Path, timeout: float = 30.0) -> tuple[bool, str]:
    """Stop the launcher (it stops its services), then make sure no child is left.

    Returns (everything stopped, message).
    """
    record = pidfile.read(pid_path)
    if record is None:
        return True, f"nothing to stop: no readable pid file at {pid_path}"
    children = list(record.services.values())
    if record.launcher.alive():
        _signal(record.launcher, signal.SIGTERM, group=False)
        _wait_gone([record.launcher], timeout)
    # Whatever the launcher did not stop (it was killed, or hung): stop it here.
    left = [c for c in children if c.alive()]
    for child in left:
        _signal(child, signal.SIGTERM, group=True)
    left = _wait_gone(left, 10.0)
    for child in left:
        _signal(child, signal.SIGKILL, group=True)
    if record.launcher.alive():
        _signal(record.launcher, signal.SIGKILL, group=False)
    survivors = _wait_gone([record.launcher, *children], 5.0)
    if not survivors:
        pid_path.unlink(missing_ok=True)
        return True, f"stopped launcher {record.launcher.pid} and {len(children)} service(s)"
    return False, "could not stop pid(s) " + ", ".join(str(r.pid) for r in survivors)


def targets(pid_path: Path, specs: list[ServiceSpec], explicit: bool) -> list[tuple[str, str]]:
    """(service, base URL) to check: the running launcher's record unless ports were given."""
    record = None if explicit else pidfile.read(pid_path)
    if record is not None and record.services:
        return [(name, rec.url) for name, rec in record.services.items()]
    return [(s.name, s.url) for s in specs]


def check_all(pid_path: Path, specs: list[ServiceSpec], explicit: bool,
              timeout: float = 10.0) -> list[health.HealthResult]:
    return [health.check(name, url, timeout=timeout) for name, url in targets(pid_path, specs, explicit)]
