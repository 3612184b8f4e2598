"""Podman for the deployment test (tests/deploy): an engine that runs here, base images made here, builds.

Why these settings: on a machine without systemd cgroups or raisable ulimits (CI runners, VMs like
this one) Podman runs containers only with `runc`, the `cgroupfs` cgroup manager and no default
ulimits, so every command gets a `containers.conf` saying so (`CONTAINERS_CONF`). Nothing is pulled
from a registry: the base image is Debian bookworm made with `debootstrap`, with the CPython this
checkout's venv runs on copied into /usr/local (the layout of python:3.11-slim: Debian plus a CPython
built from source), and image builds run with `--network none` from a wheelhouse (`make
deploy-wheels`). Why not Debian's own python3: it is 3.11.2, and a pinned package (soupsieve 4.1.3,
HTML ingestion) needs 3.11.5; installed anyway, it fails to parse CSS selectors.
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from testkit import REPO_ROOT

log = logging.getLogger(__name__)

CONTAINERS_CONF = """[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"

[network]
network_backend = "netavark"
"""
BASE_REPO = "localhost/docent-base"
#: The shared libraries CPython's modules link (ssl, ctypes, sqlite3, bz2, lzma, readline, curses, uuid,
#: dbm), CA certificates, and what the RAG API's runtime stage would otherwise install from Debian
#: (llama.cpp's OpenMP, OpenCV's glib, antiword).
BASE_PACKAGES = ("ca-certificates", "libssl3", "libffi8", "libsqlite3-0", "libbz2-1.0", "liblzma5", "libreadline8",
                 "zlib1g", "libncursesw6", "libuuid1", "libgdbm6", "libexpat1", "libtirpc3", "libnsl2",
                 "libgomp1", "libglib2.0-0", "antiword")
DEBIAN_MIRROR = "http://deb.debian.org/debian"


class EngineError(RuntimeError):
    pass


@dataclass(frozen=True)
class Engine:
    """`podman` with this machine's settings; `run()` raises with the command's output on failure."""

    conf: Path

    @classmethod
    def prepare(cls, work: Path) -> Engine:
        if shutil.which("podman") is None:
            raise EngineError("podman is not installed: `sudo make setup-deploy` (Debian's podman, runc, "
                              "debootstrap, iptables)")
        work.mkdir(parents=True, exist_ok=True)
        conf = work / "containers.conf"
        conf.write_text(CONTAINERS_CONF)
        return cls(conf)

    def env(self) -> dict[str, str]:
        return {**os.environ, "CONTAINERS_CONF": str(self.conf)}

    def run(self, *args: str, timeout: float = 600, check: bool = True,
            stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["podman", *args], env=self.env(), capture_output=True, timeout=timeout,
                              text=stdin is None, input=stdin)
        out = done.stdout if isinstance(done.stdout, str) else done.stdout.decode(errors="replace")
        err = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
        if check and done.returncode != 0:
            raise EngineError(f"podman {' '.join(args[:3])} failed ({done.returncode}):\n{err[-4000:]}")
        return subprocess.CompletedProcess(done.args, done.returncode, out, err)

    def exists(self, image: str) -> bool:
        return self.run("image", "exists", image, check=False).returncode == 0

    def image_bytes(self, image: str) -> int:
        return int(self.run("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())


def base_tag() -> str:
    return f"{BASE_REPO}:bookworm-py{platform.python_version()}"


def ensure_base(engine: Engine, tag: str | None = None) -> float:
    """Make the base image unless it exists (kept between runs: a minute or two); seconds spent."""
    tag = tag or base_tag()
    if engine.exists(tag):
        return 0.0
    if shutil.which("debootstrap") is None:
        raise EngineError("debootstrap is not installed: `sudo make setup-deploy`")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="docent-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        done = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
                               "bookworm", str(root), DEBIAN_MIRROR], capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise EngineError(f"debootstrap failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        _install_python(root)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (root / cache).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tar = subprocess.run(["tar", "-C", str(root), "-c", "."], capture_output=True, timeout=600, check=True)
        engine.run("import", "--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                   "--change", "ENV LANG=C.UTF-8", "--change", 'CMD ["python3"]', "-", tag, stdin=tar.stdout)
    return time.perf_counter() - t0


def _install_python(root: Path) -> None:
    """This interpreter's CPython (its install, not its venv) into `root`/usr/local, with pip, as python:3.11-slim has it."""
    home = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    target = root / "usr/local"
    stdlib = home / "lib" / version

    def skip(folder: str, names: list[str]) -> set[str]:
        """Installed packages, the stdlib's own tests, caches and static libraries stay behind."""
        here = Path(folder)
        out = {n for n in names if n == "__pycache__" or n.endswith(".a")}
        if here == stdlib:
            out |= {"site-packages", "test"} & set(names)
        return out

    for part in ("bin", "include", "lib"):
        shutil.copytree(home / part, target / part, symlinks=True, dirs_exist_ok=True, ignore=skip)
    (target / "lib" / version / "site-packages").mkdir(exist_ok=True)
    bin_dir = target / "bin"
    for name in ("python", "python3"):
        (bin_dir / name).unlink(missing_ok=True)
        (bin_dir / name).symlink_to(version)
    for argv in (["ldconfig"], [f"/usr/local/bin/{version}", "-m", "ensurepip", "--default-pip"]):
        done = subprocess.run(["chroot", str(root), *argv], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise EngineError(f"{' '.join(argv)} in the base image failed:\n{done.stderr[-2000:]}")


def build(engine: Engine, dockerfile: str, tag: str, wheels: Path, base: str | None = None,
          timeout: float = 3600) -> float:
    """Build `dockerfile` from the repository offline (no network at all); seconds it took."""
    t0 = time.perf_counter()
    engine.run("build", "--network", "none", "--pull=never", "-f", str(REPO_ROOT / dockerfile),
               "--build-arg", f"BASE_IMAGE={base or base_tag()}", "--build-arg", "PIP_OFFLINE=1",
               "--build-context", f"wheels={wheels}", "-t", tag, str(REPO_ROOT), timeout=timeout)
    return time.perf_counter() - t0


def prune(engine: Engine) -> None:
    """Drop what builds leave behind: dangling images (the build stage) and stopped build containers."""
    engine.run("image", "prune", "-f", check=False)
    engine.run("container", "prune", "-f", check=False)
