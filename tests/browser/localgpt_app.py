"""localGPT's own Next.js client, built from its source in a temporary folder and served by `next start`.

Nothing of it is copied into the repository: the test copies `frontend/` of the shared localGPT
checkout (MIT, commit 34f3107; DOCENT_LOCALGPT_APP, default /work/shared/localgpt-app) to a
temporary folder, runs `npm ci` there (from the npm registry, or its cache) and `next build`
with both services' URLs inlined (NEXT_PUBLIC_API_URL, NEXT_PUBLIC_RAG_API_URL), then
`next start`. A build takes minutes on two cores, so it is made once per test session for one
pair of ports (`LocalGptBuild`), and the services are started on those ports.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from testkit.processes import _Process, base_env

LOCALGPT_APP = Path(os.environ.get("DOCENT_LOCALGPT_APP", "/work/shared/localgpt-app"))
NPM_TIMEOUT_S = 900
BUILD_TIMEOUT_S = 900


class LocalGptUnavailable(RuntimeError):
    """localGPT's source is not on this machine (the message says where it was looked for)."""


@dataclass
class LocalGptBuild:
    folder: Path
    gateway_port: int
    rag_port: int


def build_localgpt(work: Path, gateway_port: int, rag_port: int) -> LocalGptBuild:
    source = LOCALGPT_APP / "frontend"
    if not (source / "package-lock.json").is_file():
        raise LocalGptUnavailable(f"localGPT's frontend is not at {source} (set DOCENT_LOCALGPT_APP)")
    app = work / "localgpt-frontend"
    shutil.copytree(source, app, ignore=shutil.ignore_patterns("node_modules", ".next"))
    env = _env(gateway_port, rag_port)
    _run(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"], app, env, NPM_TIMEOUT_S, work / "npm-ci.log")
    _run(["npx", "--no-install", "next", "build"], app, env, BUILD_TIMEOUT_S, work / "next-build.log")
    return LocalGptBuild(app, gateway_port, rag_port)


def _env(gateway_port: int, rag_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCENT_", "NEXT_"))}
    env.update({"NEXT_TELEMETRY_DISABLED": "1",
                "NEXT_FONT_GOOGLE_MOCKED_RESPONSES": str(LOCALGPT_APP / "fontmock" / "google-fonts-mock.js"),
                "NEXT_PUBLIC_API_URL": f"http://127.0.0.1:{gateway_port}",
                "NEXT_PUBLIC_RAG_API_URL": f"http://127.0.0.1:{rag_port}"})
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout_s: int, log: Path) -> None:
    with log.open("wb") as out:
        done = subprocess.run(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout_s,
                              check=False)
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{' '.join(args)} failed with {done.returncode} in {cwd}:\n{tail}")


class LocalGptServer(_Process):
    """`next start` of a build, on its own port (the services must allow its origin in CORS)."""

    name = "localGPT client"

    def __init__(self, build: LocalGptBuild, port: int, data_dir: Path) -> None:
        env = base_env(data_dir, **_env(build.gateway_port, build.rag_port))
        # node itself (not npx), so stopping the process stops the server
        super().__init__(["node", str(build.folder / "node_modules" / "next" / "dist" / "bin" / "next"), "start",
                          "-p", str(port), "-H", "127.0.0.1"], env, port, data_dir.parent / f"localgpt-{port}.log")
        self.cwd = build.folder
