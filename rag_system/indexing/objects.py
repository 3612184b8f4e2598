"""Files in S3-compatible object storage as a build's input: `index s3://bucket/prefix --index X`.

Why: a build fanned out over machines (rag_system/indexing/distributed.py) needs every worker to read
its files, and machines of a cluster share object storage, not a folder. So a build can take an
`s3://` prefix (or one object) the way it takes a folder: the driver lists the objects and hashes
them (streamed, never stored), and whoever converts a file (the driver alone, or a Ray task on any
machine) fetches it into a temporary folder first and checks that its bytes still have the hash the
plan was made with; an object replaced in between is *held*, as a local file written to during a
build is. An object's identity in the manifest and in `source_path` is its URI.

The objects are read with the same `AWS_*` settings as an S3 store (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`), through pyarrow's S3 file system, which
LanceDB already brings. Only `s3://` is understood.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rag_system.config import Settings

SCHEME = "s3://"
#: Bytes read at a time when hashing or fetching an object.
BLOCK_BYTES = 1 << 20
#: Objects hashed at once by the driver: the work is waiting on the network, not on a core.
HASH_THREADS = 8


class InvalidObjectUriError(ValueError):
    """An `s3://` input that names no bucket."""


class ObjectChangedError(RuntimeError):
    """An object's bytes are no longer those the build was planned with (it was replaced meanwhile)."""


@dataclass(frozen=True)
class FoundObject:
    uri: str
    size: int
    mtime_ns: int


@dataclass
class ObjectListing:
    """What the object inputs expand to: files to index, others skipped, prefixes that may lose files."""

    found: list[FoundObject] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)


def is_object_uri(text: str | Path) -> bool:
    return isinstance(text, str) and text.startswith(SCHEME)


def object_name(uri: str) -> str:
    """The object's file name (its key's last part): what a converter sees and a citation shows."""
    return PurePosixPath(uri[len(SCHEME):]).name


def filesystem(settings: Settings) -> Any:
    """A pyarrow S3 file system from the AWS_* settings (those unset are left to the library's defaults)."""
    from pyarrow import fs

    options: dict[str, Any] = {"allow_bucket_creation": False, "allow_bucket_deletion": False}
    if settings.aws_endpoint:
        options["endpoint_override"] = settings.aws_endpoint
    if settings.aws_access_key_id:
        options["access_key"] = settings.aws_access_key_id
        options["secret_key"] = settings.aws_secret_access_key
    if settings.aws_region:
        options["region"] = settings.aws_region
    return fs.S3FileSystem(**options)


def _key(uri: str) -> str:
    """`bucket/key` as pyarrow names an object; an empty bucket is the caller's mistake."""
    rest = uri[len(SCHEME):].strip("/")
    if not rest:
        raise InvalidObjectUriError(f"{uri!r}: name a bucket (s3://bucket or s3://bucket/prefix)")
    return rest


def list_objects(uris: Sequence[str], extensions: Iterable[str], settings: Settings) -> ObjectListing:
    """Expand each URI into the objects it names, as `plan.discover` expands files and folders.

    A prefix (a "folder") yields the objects under it with a supported extension, the others as
    skipped, and hidden ones (any part of the key under the prefix starting with ".") not at all; it
    is a root, so an object gone from under it is removed from the index. One object named exactly
    is always returned, whatever its extension, so an unsupported one is reported, not ignored.
    """
    from pyarrow import fs as pafs

    allowed = {e.lower() for e in extensions}
    system = filesystem(settings)
    listing = ObjectListing()
    found: dict[str, FoundObject] = {}
    for uri in uris:
        key = _key(uri)
        info = system.get_file_info(key)
        if info.type == pafs.FileType.File:
            found[SCHEME + key] = FoundObject(SCHEME + key, int(info.size or 0), int(info.mtime_ns or 0))
            continue
        if info.type != pafs.FileType.Directory:
            raise FileNotFoundError(f"no such object or prefix: {uri}")
        listing.roots.append(SCHEME + key)
        for entry in system.get_file_info(pafs.FileSelector(key, recursive=True)):
            relative = PurePosixPath(entry.path).relative_to(key)
            if entry.type != pafs.FileType.File or any(part.startswith(".") for part in relative.parts):
                continue
            item = SCHEME + entry.path
            if relative.suffix.lower() in allowed:
                found[item] = FoundObject(item, int(entry.size or 0), int(entry.mtime_ns or 0))
            else:
                listing.skipped.append(item)
    listing.found = sorted(found.values(), key=lambda o: o.uri)
    listing.skipped.sort()
    return listing


def _sha256(system: Any, uri: str, copy_to: Path | None = None) -> str:
    """The object's sha256, read once; with `copy_to`, its bytes written there on the way."""
    digest = hashlib.sha256()
    with system.open_input_stream(_key(uri)) as stream, \
            (open(copy_to, "wb") if copy_to is not None else nullcontext()) as out:
        while block := stream.read(BLOCK_BYTES):
            digest.update(block)
            if out is not None:
                out.write(block)
    return digest.hexdigest()


def hash_objects(uris: Sequence[str], settings: Settings) -> list[str]:
    """Each object's sha256, streamed (nothing is stored), several objects at a time."""
    if not uris:
        return []
    system = filesystem(settings)
    with ThreadPoolExecutor(max_workers=min(HASH_THREADS, len(uris))) as pool:
        return list(pool.map(lambda uri: _sha256(system, uri), uris))


@contextmanager
def fetched(uri: str, settings: Settings, expected_sha256: str | None = None) -> Iterator[Path]:
    """The object as a file in a temporary folder (under its own name) for the block, removed after.

    With `expected_sha256`, raises `ObjectChangedError` when the bytes fetched are not those.
    """
    with tempfile.TemporaryDirectory(prefix="docent-object-") as folder:
        path = Path(folder) / (object_name(uri) or "object")
        digest = _sha256(filesystem(settings), uri, copy_to=path)
        if expected_sha256 is not None and digest != expected_sha256:
            raise ObjectChangedError(f"{uri} changed since the build was planned")
        yield path


def is_under(key: str, root: str) -> bool:
    """Whether the object `key` lies under the prefix `root` (both URIs)."""
    return key.startswith(root.rstrip("/") + "/")
