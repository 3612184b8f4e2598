"""Multipart uploads, parsed as they arrive by python-multipart's streaming parser.

File parts of the field `files` stream straight to a temporary file inside
the owner's upload folder while their sha256 is computed, then move to
`<upload root>/<owner id>/<sha256>_<sanitised name>`. Memory stays flat for a
200 MB upload. Names are sanitised and every final path is checked to lie
under the upload root.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from email.message import Message
from email.policy import HTTP
from pathlib import Path
from typing import TYPE_CHECKING

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser

from common.errors import ApiError
from common.http import Readable

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks  # declared only for type checkers

#: What the RAG API converts (rag_system/ingestion/sniff.py; kept in step by tests/unit/test_gateway_uploads.py).
ALLOWED_EXTENSIONS = frozenset({".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".md", ".markdown", ".txt",
                                ".xls", ".csv", ".tsv", ".tab", ".epub", ".odt", ".ods", ".odp", ".rtf", ".eml",
                                ".mbox", ".doc", ".ppt"})
FILE_FIELD = "files"
MAX_NAME_CHARS = 120
_CHUNK = 64 * 1024
_OWNER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


@dataclass(frozen=True)
class StoredUpload:
    filename: str        # the sanitised original name
    stored_path: str     # absolute path under the upload root
    sha256: str
    size: int
    new: bool = True     # False when the same bytes and name were already stored here


def sanitize_filename(name: str) -> str:
    """A safe single path component that keeps the original's readable parts and extension.

    Drops directories (both separators), control characters, leading dots and
    characters outside letters, digits, space, `.`, `-`, `_`, `(`, `)`; caps the
    length while keeping the extension. Raises a 400 when nothing usable is left.
    """
    base = unicodedata.normalize("NFC", name or "").replace("\\", "/").split("/")[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = re.sub(r"[^\w .()\-]", "_", base, flags=re.UNICODE)
    base = re.sub(r"\s+", " ", base).strip(" .")
    base = re.sub(r"_{2,}", "_", base)
    stem, ext = os.path.splitext(base)
    stem = stem.strip(" ._") or ""
    if not stem:
        raise ApiError(400, "invalid_filename", f"file name {name!r} has no usable characters")
    if stem.upper() in _RESERVED:
        stem = f"_{stem}"
    ext = ext.lower()
    stem = stem[: MAX_NAME_CHARS - len(ext)]
    return f"{stem}{ext}"


def check_extension(filename: str) -> None:
    ext = os.path.splitext(filename)[1].lower()
    if ext not in ALLOWED_EXTENSIONS:
        allowed = ", ".join(sorted(e.lstrip(".") for e in ALLOWED_EXTENSIONS))
        raise ApiError(415, "unsupported_file_type",
                       f"{filename!r}: files of type {ext or '(none)'} are not accepted; allowed: {allowed}")


def owner_dir(root: Path, owner_id: str) -> Path:
    """`<root>/<owner_id>`, refusing ids that could escape the root."""
    if not _OWNER_RE.match(owner_id):
        raise ApiError(400, "invalid_id", f"{owner_id!r} is not a valid id")
    target = (root / owner_id).resolve()
    if not is_within(target, root):
        raise ApiError(400, "invalid_id", f"{owner_id!r} is not a valid id")
    return target


def is_within(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def boundary_of(content_type: str | None) -> bytes:
    if not content_type:
        raise ApiError(400, "missing_content_type", "send multipart/form-data with a 'files' field")
    msg = Message(policy=HTTP)
    msg["Content-Type"] = content_type
    if msg.get_content_type() != "multipart/form-data":
        raise ApiError(415, "unsupported_media_type", "uploads must be multipart/form-data")
    boundary = msg.get_param("boundary")
    if not isinstance(boundary, str) or not 1 <= len(boundary) <= 200:
        raise ApiError(400, "invalid_multipart", "multipart/form-data without a usable boundary")
    return boundary.encode("latin-1")


class _Parts:
    """python-multipart's callbacks: each part's headers are gathered (the library bounds their size), a
    `files` part with a file name streams into a `_FileSink` as it arrives, anything else is skipped."""

    def __init__(self, folder: Path, root: Path) -> None:
        self.folder, self.root = folder, root
        self.stored: list[StoredUpload] = []
        self.sink: _FileSink | None = None
        self.headers: dict[str, str] = {}
        self.name, self.value, self.ended = b"", b"", False

    def callbacks(self) -> MultipartCallbacks:
        return {"on_part_begin": self.headers.clear, "on_header_field": self._name, "on_header_value": self._value,
                "on_header_end": self._header, "on_headers_finished": self._open, "on_part_data": self._data,
                "on_part_end": self._close, "on_end": self._end}

    def _name(self, data: bytes, start: int, end: int) -> None:
        self.name += data[start:end]

    def _value(self, data: bytes, start: int, end: int) -> None:
        self.value += data[start:end]

    def _header(self) -> None:
        self.headers[self.name.decode("latin-1").strip().lower()] = self.value.decode("utf-8", "replace").strip()
        self.name, self.value = b"", b""

    def _open(self) -> None:
        msg = Message(policy=HTTP)
        msg["Content-Disposition"] = self.headers.get("content-disposition") or "form-data"
        filename = msg.get_filename()
        if msg.get_param("name", header="content-disposition") == FILE_FIELD and filename:
            safe = sanitize_filename(filename)
            check_extension(safe)
            self.sink = _FileSink(self.folder, self.root, safe)

    def _data(self, data: bytes, start: int, end: int) -> None:
        if self.sink is not None:
            self.sink.write(data[start:end])

    def _close(self) -> None:
        if self.sink is not None:
            sink, self.sink = self.sink, None
            self.stored.append(sink.finish())

    def _end(self) -> None:
        self.ended = True


def save_uploads(stream: Readable, content_type: str | None, content_length: int | None,
                 root: Path, owner_id: str, max_bytes: int) -> list[StoredUpload]:
    """Parse a multipart body and store its `files` parts; other fields are ignored.

    A body over `max_bytes` is refused (413) before anything is read. If any
    file is refused, or the body is malformed or cut off, files stored by this
    request are removed again.
    """
    if content_length is None:
        raise ApiError(411, "length_required", "uploads need a Content-Length")
    if content_length > max_bytes:
        raise ApiError(413, "upload_too_large",
                       f"upload is {content_length} bytes; the limit is {max_bytes} (DOCENT_MAX_UPLOAD_MB)")
    boundary = boundary_of(content_type)
    parts = _Parts(owner_dir(root, owner_id), root)
    try:
        _feed(stream, content_length, MultipartParser(boundary, parts.callbacks()), parts, b"--" + boundary)
    except BaseException:
        if parts.sink is not None:
            parts.sink.abort()
        for item in parts.stored:
            if item.new:
                Path(item.stored_path).unlink(missing_ok=True)
        raise
    if not parts.stored:
        raise ApiError(400, "no_files", f"no files in the multipart field '{FILE_FIELD}'")
    return parts.stored


def _feed(stream: Readable, left: int, parser: MultipartParser, parts: _Parts, delimiter: bytes) -> None:
    """Feed exactly `left` bytes of the body to the parser, a chunk at a time (memory stays flat); the preamble
    before the first delimiter, which RFC 2046 allows and python-multipart does not, is skipped here."""
    preamble: bytes | None = b""
    while left > 0:
        data = stream.read(min(_CHUNK, left))
        if not data:
            raise ApiError(400, "truncated_body", "the request body ended early")
        left -= len(data)
        if preamble is not None:
            at = (preamble + data).find(delimiter)
            if at < 0:
                preamble = (preamble + data)[-len(delimiter):]
                continue
            data, preamble = (preamble + data)[at:], None
        try:
            parser.write(data)
        except MultipartParseError as exc:
            raise ApiError(400, "invalid_multipart", "malformed multipart/form-data body") from exc
    if preamble is not None:
        raise ApiError(400, "invalid_multipart", "no multipart boundary in the body")
    if not parts.ended:
        raise ApiError(400, "invalid_multipart", "the multipart body ended before its closing boundary")


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def _no_space(filename: str) -> ApiError:
    return ApiError(507, "insufficient_storage",
                    f"{filename!r} was not stored: the disk holding the data directory is full; nothing was kept")


class _FileSink:
    def __init__(self, folder: Path, root: Path, filename: str) -> None:
        self.folder, self.root, self.filename = folder, root, filename
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".upload-", dir=folder)
        except OSError as exc:
            if exc.errno in _NO_SPACE:
                raise _no_space(filename) from exc
            raise
        self.tmp = Path(tmp)
        self.file = os.fdopen(fd, "wb")
        self.hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        if data:
            try:
                self.file.write(data)
            except OSError as exc:
                if exc.errno in _NO_SPACE:
                    raise _no_space(self.filename) from exc
                raise
            self.hash.update(data)
            self.size += len(data)

    def finish(self) -> StoredUpload:
        try:
            self.file.close()  # flushes the last buffered bytes: the disk may fill here too
        except OSError as exc:
            self.tmp.unlink(missing_ok=True)
            if exc.errno in _NO_SPACE:
                raise _no_space(self.filename) from exc
            raise
        if self.size == 0:
            self.tmp.unlink(missing_ok=True)
            raise ApiError(400, "empty_file", f"{self.filename!r} is empty")
        digest = self.hash.hexdigest()
        final = self.folder / f"{digest}_{self.filename}"
        if not is_within(final, self.root):
            self.tmp.unlink(missing_ok=True)
            raise ApiError(400, "invalid_filename", f"{self.filename!r} would be stored outside the upload folder")
        if final.exists():
            self.tmp.unlink(missing_ok=True)
            return StoredUpload(self.filename, str(final), digest, self.size, new=False)
        os.replace(self.tmp, final)
        return StoredUpload(self.filename, str(final), digest, self.size)

    def abort(self) -> None:
        if not self.file.closed:
            try:
                self.file.close()
            except OSError:
                pass  # the disk is full: the partial file is removed below either way
        self.tmp.unlink(missing_ok=True)
