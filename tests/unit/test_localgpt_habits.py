"""localGPT's command lines keep working: `run_system.py --mode/--logs-only`, `python -m rag_system.main`."""

from __future__ import annotations

import subprocess
import sys

from launcher.cli import parser
from testkit import REPO_ROOT


def test_launcher_takes_localgpt_flags() -> None:
    args = parser().parse_args(["--mode", "dev", "--no-frontend"])
    assert args.mode == "dev" and args.logs is False
    assert parser().parse_args(["--logs-only"]).logs is True  # localGPT's name for --logs
    assert parser().parse_args([]).mode == "prod"


def test_rag_system_main_is_the_cli() -> None:
    for command in ("index", "chat", "api"):
        done = subprocess.run([sys.executable, "-m", "rag_system.main", command, "--help"], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0 and f"rag_system {command}" in done.stdout, done.stdout + done.stderr
