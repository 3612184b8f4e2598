"""The services of docker-compose.yml started with Podman as compose would, for tests/deploy.

Why not a compose client: none is installed here (Debian's podman has no `podman compose`), and the
test must see what compose does with this file, step by step: the `${VAR:?message}` refusal, the env
file, the service's environment over it, named volumes, one network on which each service is reached
by its name, `depends_on: condition: service_healthy`, and the health checks (run with `podman
healthcheck run`, which needs no systemd timer). Only the fields our compose file uses are read; host
ports are replaced by free ones, so the test never collides with services already on 8000-8001.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testkit import REPO_ROOT
from testkit.containers import Engine, EngineError
from testkit.processes import free_port

_VAR = re.compile(r"\$\{(\w+)(?::([?-])([^}]*))?\}")


class ComposeError(RuntimeError):
    """What `docker compose` would refuse with (a required variable unset, a service never healthy)."""


def interpolate(value: str, env: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        given = env.get(name, "")
        if op == "?" and not given:
            raise ComposeError(f"required variable {name} is missing a value: {arg}")
        return given or (arg if op == "-" else "")

    return _VAR.sub(one, value)


def env_file(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value
    return out


@dataclass
class ComposeStack:
    engine: Engine
    env: dict[str, str]
    overrides: dict[str, dict[str, str]] = field(default_factory=dict)  # extra environment per service
    path: Path = REPO_ROOT / "docker-compose.yml"
    project: str = field(default_factory=lambda: f"docent-test-{uuid.uuid4().hex[:8]}")
    ports: dict[tuple[str, int], int] = field(default_factory=dict)  # (service, container port) -> host port

    def __post_init__(self) -> None:
        self.doc = yaml.safe_load(self.path.read_text())
        self.services = {n: s for n, s in self.doc["services"].items() if not s.get("profiles")}

    # -- life cycle ----------------------------------------------------------------
    def up(self, health_timeout_s: float = 600) -> None:
        """Create the network (once), then start the services in dependency order; like compose, a
        required variable that is unset stops it before anything is created."""
        planned = {name: self._run_args(name) for name in self._order()}
        if self.engine.run("network", "exists", self.project, check=False).returncode != 0:
            self.engine.run("network", "create", self.project)
        for name, args in planned.items():
            for dep, rule in self._depends(name).items():
                if rule.get("condition") == "service_healthy":
                    self.wait_healthy(dep, health_timeout_s)
            self.engine.run("run", "-d", *args)

    def down(self, volumes: bool = False) -> None:
        for name in reversed(self._order()):
            self.engine.run("rm", "-f", "-t", "20", self.container(name), check=False)
        if volumes:
            self.engine.run("network", "rm", "-f", self.project, check=False)
            for volume in self.doc.get("volumes") or {}:
                self.engine.run("volume", "rm", "-f", f"{self.project}_{volume}", check=False)

    def wait_healthy(self, name: str, timeout_s: float) -> float:
        """Seconds until the service's health check passed (it is run here every second)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            state = self.engine.run("inspect", "--format", "{{.State.Status}}", self.container(name),
                                    check=False).stdout.strip()
            if state in ("exited", "stopped", ""):
                raise ComposeError(f"{name} stopped ({state or 'gone'}):\n{self.logs(name)[-3000:]}")
            if self.engine.run("healthcheck", "run", self.container(name), check=False).returncode == 0:
                return time.monotonic() - t0
            time.sleep(1)
        raise ComposeError(f"{name} not healthy in {timeout_s:g} s:\n{self.logs(name)[-3000:]}")

    def logs(self, name: str) -> str:
        done = self.engine.run("logs", self.container(name), check=False)
        return done.stdout + done.stderr

    def container(self, name: str) -> str:
        return f"{self.project}-{name}"

    def url(self, name: str, port: int) -> str:
        return f"http://127.0.0.1:{self.ports[(name, port)]}"

    # -- compose's rules ---------------------------------------------------------------
    def _depends(self, name: str) -> dict[str, dict[str, Any]]:
        deps = self.services[name].get("depends_on") or {}
        return {d: {} for d in deps} if isinstance(deps, list) else dict(deps)

    def _order(self) -> list[str]:
        done: list[str] = []

        def visit(name: str) -> None:
            if name not in done:
                for dep in self._depends(name):
                    visit(dep)
                done.append(name)

        for name in self.services:
            visit(name)
        return done

    def environment(self, name: str) -> dict[str, str]:
        svc = self.services[name]
        files = svc.get("env_file") or []
        env: dict[str, str] = {}
        for f in [files] if isinstance(files, str) else files:
            env.update(env_file(self.path.parent / f))
        env.update({k: interpolate(str(v), self.env) for k, v in (svc.get("environment") or {}).items()})
        return {**env, **self.overrides.get(name, {})}

    def _run_args(self, name: str) -> list[str]:
        svc = self.services[name]
        args = ["--name", self.container(name), "--network", self.project, "--network-alias", name,
                "--label", f"docent.test.project={self.project}"]
        for key, value in self.environment(name).items():
            args += ["-e", f"{key}={value}"]
        for volume in svc.get("volumes") or []:
            source, _, target = volume.partition(":")
            args += ["-v", f"{self.project}_{source}:{target}"]
        for port in svc.get("ports") or []:
            inner = int(str(port).rsplit(":", 1)[1])
            host = self.ports.setdefault((name, inner), free_port())
            args += ["-p", f"127.0.0.1:{host}:{inner}"]
        check = svc.get("healthcheck")
        if check:
            test = check["test"]
            args += ["--health-cmd", json.dumps(test[1:]) if test[0] == "CMD" else str(test[-1]),
                     "--health-interval", "disable"]  # run by wait_healthy, not by a timer
        image = svc.get("image")
        if not image:
            raise EngineError(f"service {name} has no image tag to run")
        return [*args, image, *svc.get("command", [])]
