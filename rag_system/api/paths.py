"""Which files the RAG API may read: only those under the allowed roots.

Roots are the gateway's upload directory (`$DOCENT_DATA_DIR/uploads`) and
`DOCENT_INDEX_ROOTS`. Every requested path is resolved with `realpath`
(symlinks and `..` included) and must land inside a resolved root; folders
are walked the way the builder walks them, and a file inside whose real
path leaves the roots (a symlink pointing out) rejects the whole request.
A path outside the roots is a 403 whether or not it exists, so the API
never reveals what exists elsewhere on the machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from common.errors import ApiError
from rag_system.config import Settings


class PathNotAllowedError(PermissionError):
    """A path resolves outside every allowed root."""


@dataclass(frozen=True)
class AllowedRoots:
    roots: tuple[str, ...]  # realpaths

    @classmethod
    def of(cls, folders: Iterable[str | os.PathLike[str]]) -> AllowedRoots:
        return cls(tuple(dict.fromkeys(os.path.realpath(os.path.abspath(f)) for f in folders)))

    @classmethod
    def from_settings(cls, settings: Settings) -> AllowedRoots:
        return cls.of([settings.uploads_dir, *settings.index_roots])

    def contains(self, real: str) -> bool:
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def resolve(self, raw: str) -> Path:
        """The real path of `raw` if it lies inside a root, else `PathNotAllowedError`."""
        if not raw or "\x00" in raw:
            raise PathNotAllowedError("empty path")
        real = os.path.realpath(os.path.abspath(os.path.expanduser(raw)))
        if not self.contains(real):
            raise PathNotAllowedError(f"{raw} is outside the folders the RAG API may index")
        return Path(real)

    def check_tree(self, folder: Path) -> None:
        """Every non-hidden file under `folder` must also resolve inside a root."""
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                if name.startswith("."):
                    continue
                candidate = os.path.join(dirpath, name)
                if not self.contains(os.path.realpath(candidate)):
                    raise PathNotAllowedError(f"{candidate} links outside the folders the RAG API may index")

    def resolve_all(self, paths: Sequence[str]) -> list[Path]:
        """Resolve and check every requested path (and every file under a folder)."""
        out: list[Path] = []
        for raw in paths:
            path = self.resolve(raw)
            if path.is_dir():
                self.check_tree(path)
            elif not path.exists():
                raise FileNotFoundError(f"no such file or folder: {raw}")
            out.append(path)
        return out


def checked_paths(roots: AllowedRoots, paths: Sequence[str]) -> list[Path]:
    """`resolve_all` with its errors as API errors: 403 outside the roots, 404 missing."""
    try:
        return roots.resolve_all(paths)
    except PathNotAllowedError as exc:
        raise ApiError(403, "path_not_allowed", str(exc)) from exc
    except FileNotFoundError as exc:
        raise ApiError(404, "path_not_found", str(exc)) from exc
