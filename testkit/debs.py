"""Debian packages as data: where the Debian Reference .debs are kept and how to read files out of one.

Tests and the multilingual benchmark (eval/debref/) read real HTML in nine
languages from Debian's `debian-reference-*` packages. `make setup-debref`
downloads them (`apt-get download`, version pinned) into `DEBREF_DIR`; the
files are read straight out of the .deb (an ar archive holding data.tar.*),
so nothing is installed and the bytes are exactly the package's.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

#: The languages Debian ships the Debian Reference in (package suffixes).
DEBREF_LANGUAGES = ("en", "de", "fr", "es", "it", "ja", "pt", "zh-cn", "id")
DEBREF_VERSION = "2.100"
DEFAULT_DIR = Path.home() / ".cache" / "docent" / "debian-reference"


class MissingDebError(FileNotFoundError):
    """A package the data needs has not been downloaded; the message names the command that fetches it."""


def debref_dir() -> Path:
    return Path(os.environ.get("DOCENT_DEBREF_DIR") or DEFAULT_DIR)


def debref_deb(language: str, folder: Path | None = None) -> Path:
    """The downloaded `debian-reference-<language>` .deb, or `MissingDebError` saying how to get it."""
    path = (folder or debref_dir()) / f"debian-reference-{language}_{DEBREF_VERSION}_all.deb"
    if not path.is_file():
        raise MissingDebError(f"{path} is missing: run `make setup-debref` (apt-get download "
                              f"debian-reference-{language}={DEBREF_VERSION} into {path.parent})")
    return path


def ar_members(data: bytes) -> dict[str, bytes]:
    """The members of an ar archive (a .deb), by name."""
    if not data.startswith(b"!<arch>\n"):
        raise ValueError("not an ar archive")
    members: dict[str, bytes] = {}
    pos = 8
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        members[name] = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size % 2)
    return members


def deb_files(deb: Path, prefix: str) -> dict[str, bytes]:
    """Regular files under `prefix` (e.g. `usr/share/debian-reference/`) in the package's data, by path."""
    members = ar_members(deb.read_bytes())
    name = next((n for n in members if n.startswith("data.tar")), None)
    if name is None:
        raise ValueError(f"{deb}: no data.tar member")
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(members[name])) as archive:
        for info in archive.getmembers():
            path = info.name.removeprefix("./")
            if info.isfile() and path.startswith(prefix):
                handle = archive.extractfile(info)
                if handle is not None:
                    out[path] = handle.read()
    return out
