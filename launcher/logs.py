"""Service logs: `logs/<service>.log`, JSON lines, rotated by size; and `--logs` (follow).

Why a reader thread: the services already log one JSON object per line to
stderr, so the launcher owns rotation by reading each child's stdout+stderr
and writing it through a `RotatingFileHandler`. Lines that are not JSON (a
traceback, `error: ...` before logging is set up) are wrapped in a JSON
object, so every line of every file parses.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 5


def as_json_line(service: str, line: str) -> str:
    """`line` unchanged when it is a JSON object, else wrapped as one."""
    text = line.rstrip("\r\n")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            if isinstance(json.loads(stripped), dict):
                return stripped
        except ValueError:
            pass
    level = "error" if stripped.startswith(("error", "Traceback")) else "info"
    return json.dumps({"ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), "level": level,
                       "logger": f"{service}.output", "msg": text}, ensure_ascii=False)


def file_logger(service: str, log_dir: Path, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> logging.Logger:
    """A private logger (not propagated) that writes message text only, rotated by size."""
    log_dir.mkdir(parents=True, exist_ok=True)
    logger = logging.getLogger(f"docent.launcher.service.{service}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    for old in list(logger.handlers):
        logger.removeHandler(old)
        old.close()
    handler = logging.handlers.RotatingFileHandler(log_dir / f"{service}.log", maxBytes=max_bytes,
                                                   backupCount=backups, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    return logger


class LogPump(threading.Thread):
    """Copies one child's output into its log file until the pipe closes."""

    def __init__(self, service: str, stream: IO[bytes], logger: logging.Logger, echo: IO[str] | None = None) -> None:
        super().__init__(name=f"docent-log-{service}", daemon=True)
        self.service, self.stream, self.logger, self.echo = service, stream, logger, echo
        self.tail: list[str] = []  # last lines, shown when a service fails to start

    def run(self) -> None:
        for raw in iter(self.stream.readline, b""):
            line = as_json_line(self.service, raw.decode("utf-8", errors="replace"))
            self.logger.info(line)
            self.tail = (self.tail + [line])[-20:]
            if self.echo is not None:
                self.echo.write(f"[{self.service}] {line}\n")
                self.echo.flush()
        self.stream.close()


def follow(log_dir: Path, out: IO[str], lines: int = 10, poll: float = 0.5,
           stop: threading.Event | None = None) -> None:
    """`tail -F` of every `*.log` in `log_dir`, prefixed with the service name; survives rotation."""
    positions: dict[Path, tuple[int, int]] = {}  # path -> (inode, offset of the next unread byte)
    first = True
    while stop is None or not stop.is_set():
        for path in sorted(log_dir.glob("*.log")):
            try:
                st = path.stat()
                with path.open("rb") as f:
                    known = positions.get(path)
                    if known is None:
                        data = f.read()
                        start = 0
                    else:
                        inode, offset = known
                        start = 0 if inode != st.st_ino or st.st_size < offset else offset
                        f.seek(start)
                        data = f.read()
            except OSError:
                continue
            complete = data[: data.rfind(b"\n") + 1]  # a half-written last line waits for the next poll
            new_lines = complete.decode("utf-8", errors="replace").splitlines()
            if known is None and first:
                new_lines = new_lines[-lines:]
            for line in new_lines:
                out.write(f"[{path.stem}] {line}\n")
            out.flush()
            positions[path] = (st.st_ino, start + len(complete))
        first = False
        if stop is not None:
            stop.wait(poll)
        else:
            time.sleep(poll)
