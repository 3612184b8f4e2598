"""Process identity from /proc: start times (so a recycled pid is never killed) and
the owner of a listening port (so "port in use" names the process).

Why /proc and not psutil: psutil is not a dependency, and Linux is the only
platform the launcher supports; `ss -ltnp` is used as a fallback when /proc
does not show the socket's owner (another user's process).
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


def start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or None."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = stat.rsplit(")", 1)[1].split()
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def alive(pid: int, ticks: int | None = None) -> bool:
    """True if `pid` runs and (when given) is the same process that started at `ticks`.

    A zombie counts as dead: it has exited and only waits to be reaped.
    """
    if pid <= 0:
        return False
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state in ("Z", "X"):
        return False
    return ticks is None or start_ticks(pid) == ticks


def cmdline(pid: int) -> str:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


@dataclass(frozen=True)
class PortHolder:
    pid: int | None
    command: str


def port_free(host: str, port: int) -> bool:
    """Can we bind (host, port) right now? (SO_REUSEADDR, as the services' servers do.)"""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    return inodes


def port_holder(port: int) -> PortHolder | None:
    """Who listens on `port`: scan /proc/*/fd for the socket inode, else ask `ss`."""
    inodes = _listening_inodes(port)
    targets = {f"socket:[{i}]" for i in inodes}
    if targets:
        for proc in PROC.iterdir():
            if not proc.name.isdigit():
                continue
            try:
                fds = list((proc / "fd").iterdir())
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(fd) in targets:
                        pid = int(proc.name)
                        return PortHolder(pid, cmdline(pid))
                except OSError:
                    continue
    return _ss_holder(port)


def _ss_holder(port: int) -> PortHolder | None:
    ss = shutil.which("ss")
    if ss is None:
        return None
    try:
        out = subprocess.run([ss, "-ltnpH", f"sport = :{port}"], capture_output=True, text=True,
                             timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if "pid=" in line:
            pid = int(line.split("pid=", 1)[1].split(",", 1)[0])
            return PortHolder(pid, cmdline(pid) or line.strip())
        if line.strip():
            return PortHolder(None, line.strip())
    return None


def describe_port_conflict(service: str, host: str, port: int) -> str:
    """The message shown when `port` is taken: which process holds it and how to fix it."""
    holder = port_holder(port)
    if holder is None:
        who = "a process this user cannot see (try `sudo ss -ltnp`)"
    elif holder.pid is None:
        who = holder.command
    else:
        who = f"pid {holder.pid} ({holder.command or 'unknown command'})"
    return (f"cannot start {service}: port {port} on {host} is already in use by {who}. "
            f"Stop that process or choose another port (--{_flag(service)}-port).")


def _flag(service: str) -> str:
    return {"rag-api": "rag", "gateway": "gateway", "frontend": "frontend"}.get(service, service)
