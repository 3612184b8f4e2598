"""`logs/run_system.pid`: a JSON record of the launcher and its children.

Why JSON with start times rather than a bare pid: `--stop` and `--health` run
in another process, possibly long after the launcher died; they need every
child's pid and URL, and the start time proves a pid still belongs to the
process we started (pids are recycled), so `--stop` never signals a stranger.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from launcher import proc

PID_FILE_NAME = "run_system.pid"


@dataclass
class ProcessRecord:
    pid: int
    start_ticks: int | None = None
    url: str = ""
    restarts: int = 0

    def alive(self) -> bool:
        return proc.alive(self.pid, self.start_ticks)


@dataclass
class PidFile:
    launcher: ProcessRecord
    services: dict[str, ProcessRecord] = field(default_factory=dict)
    host: str = "127.0.0.1"

    def to_json(self) -> dict[str, Any]:
        return {"launcher": asdict(self.launcher), "host": self.host,
                "services": {name: asdict(rec) for name, rec in self.services.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PidFile:
        def rec(raw: dict[str, Any]) -> ProcessRecord:
            return ProcessRecord(pid=int(raw["pid"]), start_ticks=raw.get("start_ticks"),
                                 url=str(raw.get("url", "")), restarts=int(raw.get("restarts", 0)))

        return cls(launcher=rec(data["launcher"]), host=str(data.get("host", "127.0.0.1")),
                   services={name: rec(raw) for name, raw in data.get("services", {}).items()})


def write(path: Path, record: PidFile) -> None:
    """Atomic replace, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".run_system.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(record.to_json(), out, indent=2)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read(path: Path) -> PidFile | None:
    """The record, or None if there is none or it cannot be parsed (reported as stale)."""
    try:
        return PidFile.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove(path: Path, owner_pid: int | None = None) -> None:
    """Delete the file; with `owner_pid`, only if it is still that launcher's record."""
    if owner_pid is not None:
        current = read(path)
        if current is not None and current.launcher.pid != owner_pid:
            return
    path.unlink(missing_ok=True)


def running_launcher(path: Path) -> PidFile | None:
    """The record of a launcher that is still alive, else None (a stale file is ignored)."""
    record = read(path)
    if record is not None and record.launcher.alive():
        return record
    return None
