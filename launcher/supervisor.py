"""Start the services in order, restart the ones that crash, stop them all cleanly.

Why one supervisor loop instead of a process per service: the launcher must
know the whole picture to start in dependency order (each service waits for
the previous one's `/health`), to keep `logs/run_system.pid` current after
every restart, and to stop in reverse order on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from launcher import health, pidfile, proc
from launcher.backoff import Backoff
from launcher.logs import LogPump, file_logger
from launcher.services import ServiceSpec, child_environment

log = logging.getLogger("docent.launcher")

STOP_TIMEOUT_S = 15.0
HUNG_AFTER_FAILURES = 3  # consecutive failed health checks of a running service that was healthy
HEALTH_TIMEOUT_S = 10.0


class StartupError(RuntimeError):
    """A service could not be started; the message says which and why."""


@dataclass
class Child:
    spec: ServiceSpec
    backoff: Backoff = field(default_factory=Backoff)
    popen: subprocess.Popen[bytes] | None = None
    pump: LogPump | None = None
    started_at: float = 0.0
    restarts: int = 0
    restart_at: float | None = None  # when a crashed process is due to be started again
    healthy_once: bool = False  # this process has answered /health since it started
    failures: int = 0  # consecutive failed health checks since then
    hung: bool = False  # set by the health watch, acted on by the main loop

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


class Supervisor:
    def __init__(self, specs: list[ServiceSpec], log_dir: Path, stop: threading.Event,
                 backoff: Backoff | None = None, watch_interval_s: float = 10.0) -> None:
        self.children = [Child(s, Backoff(**vars(backoff)) if backoff else Backoff()) for s in specs]
        self.log_dir = log_dir
        self.pid_path = log_dir / pidfile.PID_FILE_NAME
        self.stop_event = stop
        self.host = specs[0].host if specs else "127.0.0.1"
        self._me = pidfile.ProcessRecord(os.getpid(), proc.start_ticks(os.getpid()))
        self.watch_interval_s = watch_interval_s

    # -- start ----------------------------------------------------------------------
    def start_all(self) -> list[health.HealthResult]:
        """Start each service and wait for its `/health` before the next; raise `StartupError`."""
        for child in self.children:
            if not proc.port_free(child.spec.host, child.spec.port):
                raise StartupError(proc.describe_port_conflict(child.spec.name, child.spec.host, child.spec.port))
        results = []
        for child in self.children:
            self._spawn(child)
            result = health.wait_healthy(child.spec.name, child.spec.url, child.spec.start_deadline_s,
                                         is_running=lambda c=child: c.running() and not self.stop_event.is_set())
            if self.stop_event.is_set():
                raise StartupError("interrupted while starting")
            if not result.healthy:
                tail = "\n  ".join(child.pump.tail[-8:]) if child.pump else ""
                code = child.popen.poll() if child.popen else None
                why = f"exited with code {code}" if code is not None else \
                    f"was not healthy after {child.spec.start_deadline_s:.0f} s ({result.status}: {result.detail})"
                raise StartupError(f"{child.spec.name} {why}; see {self.log_dir / (child.spec.name + '.log')}"
                                   + (f"\n  {tail}" if tail else ""))
            child.healthy_once = True
            log.info("service healthy", extra={"service": child.spec.name, "url": child.spec.url,
                                               "pid": child.popen.pid if child.popen else None})
            results.append(result)
        return results

    def _spawn(self, child: Child) -> None:
        spec = child.spec
        logger = file_logger(spec.name, self.log_dir)
        # A session of its own: Ctrl-C in the terminal reaches only the launcher, which
        # then stops the services in order, and killpg reaches anything a service forked.
        child.popen = subprocess.Popen(list(spec.argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, env=child_environment(spec),
                                       start_new_session=True)
        assert child.popen.stdout is not None
        child.pump = LogPump(spec.name, child.popen.stdout, logger)
        child.pump.start()
        child.started_at = time.monotonic()
        child.restart_at = None
        child.healthy_once, child.failures, child.hung = False, 0, False
        log.info("service started", extra={"service": spec.name, "pid": child.popen.pid,
                                           "argv": " ".join(spec.argv[1:]), "restarts": child.restarts})
        self.write_pid_file()

    def write_pid_file(self) -> None:
        services = {}
        for c in self.children:
            if c.popen is not None:
                services[c.spec.name] = pidfile.ProcessRecord(c.popen.pid, proc.start_ticks(c.popen.pid),
                                                              c.spec.url, c.restarts)
        pidfile.write(self.pid_path, pidfile.PidFile(self._me, services, self.host))

    # -- watch ------------------------------------------------------------------------
    def watch(self, tick: float = 0.25) -> None:
        """Until stopped: restart crashed services after their backoff delay, and hung ones."""
        watcher = threading.Thread(target=self._health_watch, name="docent-health-watch", daemon=True)
        watcher.start()
        while not self.stop_event.is_set():
            self.tick()
            self.stop_event.wait(tick)
        watcher.join(timeout=HEALTH_TIMEOUT_S + 1)

    def _health_watch(self) -> None:
        """A process can be alive and useless (deadlocked, stopped): after it has been healthy,
        `HUNG_AFTER_FAILURES` failed checks in a row mark it hung; one that never gets healthy
        within its start deadline is hung too. Runs in a thread so a slow check never delays
        the restart of a crashed service."""
        while not self.stop_event.wait(self.watch_interval_s):
            for child in self.children:
                if not child.running() or child.hung:
                    continue
                pid = child.popen.pid if child.popen else None
                result = health.check(child.spec.name, child.spec.url, timeout=HEALTH_TIMEOUT_S)
                if child.popen is None or child.popen.pid != pid:
                    continue  # restarted meanwhile
                if result.healthy:
                    child.healthy_once, child.failures = True, 0
                elif child.healthy_once:
                    child.failures += 1
                    child.hung = child.failures >= HUNG_AFTER_FAILURES
                else:
                    child.hung = time.monotonic() - child.started_at > child.spec.start_deadline_s
                if child.hung:
                    log.error("service not answering /health; restarting it", extra={
                        "service": child.spec.name, "pid": pid, "status": result.status, "detail": result.detail})

    def tick(self) -> None:
        now = time.monotonic()
        for child in self.children:
            if child.running() and child.hung and child.popen is not None:
                terminate_group(child.popen, 5.0)  # then restarted like a crash, with backoff
            if child.running():
                child.backoff.observe_uptime(now - child.started_at)
                continue
            if child.restart_at is None:
                code = child.popen.poll() if child.popen else None
                delay = child.backoff.next_delay()
                child.restart_at = now + delay
                log.warning("service exited; restarting", extra={
                    "service": child.spec.name, "exit_code": code, "delay_s": delay,
                    "attempt": child.backoff.attempts})
            elif now >= child.restart_at:
                if not proc.port_free(child.spec.host, child.spec.port):
                    log.error(proc.describe_port_conflict(child.spec.name, child.spec.host, child.spec.port))
                    child.restart_at = now + child.backoff.next_delay()
                    continue
                child.restarts += 1
                self._spawn(child)

    # -- stop -------------------------------------------------------------------------
    def stop_all(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM in reverse start order, SIGKILL whatever is left after `timeout`."""
        for child in reversed(self.children):
            if child.popen is None:
                continue
            terminate_group(child.popen, timeout)
            if child.pump is not None:
                child.pump.join(timeout=5)
            log.info("service stopped", extra={"service": child.spec.name, "exit_code": child.popen.returncode})
        pidfile.remove(self.pid_path, owner_pid=self._me.pid)


def terminate_group(popen: subprocess.Popen[bytes], timeout: float) -> None:
    """Stop a child started with `start_new_session=True` and everything in its group."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(popen.pid, sig)
            if sig == signal.SIGTERM:
                os.killpg(popen.pid, signal.SIGCONT)  # a stopped process handles SIGTERM only once resumed
        except ProcessLookupError:
            pass
        try:
            popen.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            log.warning("process did not stop in time; killing", extra={"pid": popen.pid, "timeout_s": wait})
    # The leader is gone; make sure nothing it forked survives in its group.
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
