"""Multipart parsing (no `cgi`), file-name sanitising and the upload root guard."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from backend.handlers_documents import content_disposition
from backend.uploads import ALLOWED_EXTENSIONS, is_within, owner_dir, sanitize_filename, save_uploads
from common.errors import ApiError

OWNER = "0123456789abcdef0123456789abcdef"
BOUNDARY = "----docentBoundary7MA4YWxkTrZu0gW"


def multipart(parts: list[tuple[str, str | None, bytes]], boundary: str = BOUNDARY) -> bytes:
    out = io.BytesIO()
    out.write(b"preamble is ignored\r\n")
    for name, filename, data in parts:
        out.write(f"--{boundary}\r\n".encode())
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        out.write(f"Content-Disposition: {disp}\r\n".encode())
        if filename is not None:
            out.write(b"Content-Type: application/octet-stream\r\n")
        out.write(b"\r\n" + data + b"\r\n")
    out.write(f"--{boundary}--\r\nepilogue".encode())
    return out.getvalue()


def upload(root: Path, body: bytes, *, max_bytes: int = 10 * 1024 * 1024, ctype: str | None = None,
           stream: io.BufferedIOBase | None = None):
    return save_uploads(stream or io.BytesIO(body), ctype or f"multipart/form-data; boundary={BOUNDARY}",
                        len(body), root, OWNER, max_bytes)


class Dribble(io.RawIOBase):
    """A stream that returns at most 7 bytes per read, like a slow socket."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        chunk = self.data[self.pos:self.pos + min(7, n if n > 0 else 7)]
        self.pos += len(chunk)
        return chunk


def test_files_are_stored_by_sha256_and_name(tmp_path: Path) -> None:
    pdf = b"%PDF-1.4 fake\r\n--not-a-boundary\r\n" + bytes(range(256)) * 300
    body = multipart([("title", None, b"ignored field"), ("files", "report.pdf", pdf),
                      ("files", "notes.md", b"# Notes\n")])
    stored = upload(tmp_path, body)
    assert [s.filename for s in stored] == ["report.pdf", "notes.md"]
    digest = hashlib.sha256(pdf).hexdigest()
    assert stored[0].sha256 == digest and stored[0].size == len(pdf)
    assert stored[0].stored_path == str((tmp_path / OWNER / f"{digest}_report.pdf").resolve())
    assert Path(stored[0].stored_path).read_bytes() == pdf
    assert not [p for p in (tmp_path / OWNER).iterdir() if p.name.startswith(".upload-")]


def test_parser_handles_tiny_reads(tmp_path: Path) -> None:
    data = b"A" * 5000 + b"\r\n--" + b"B" * 5000
    body = multipart([("files", "a.txt", data)])
    stored = upload(tmp_path, body, stream=Dribble(body))
    assert Path(stored[0].stored_path).read_bytes() == data


def test_filename_star_and_unicode_names(tmp_path: Path) -> None:
    body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%80%94%20Bericht.txt\r\n\r\nhello\r\n--{BOUNDARY}--\r\n").encode()
    stored = upload(tmp_path, body)
    assert stored[0].filename == "Grüße _ Bericht.txt"


def test_size_limit_is_413_before_reading(tmp_path: Path) -> None:
    body = multipart([("files", "big.txt", b"x" * 2000)])
    with pytest.raises(ApiError) as err:
        upload(tmp_path, body, max_bytes=1000)
    assert err.value.status == 413
    assert not (tmp_path / OWNER).exists()


@pytest.mark.parametrize("name", ["evil.exe", "script.sh", "archive.zip", "noext", "a.pdf.exe", "doc.wpd"])
def test_disallowed_extensions_are_refused(tmp_path: Path, name: str) -> None:
    body = multipart([("files", "ok.txt", b"fine"), ("files", name, b"bad")])
    with pytest.raises(ApiError) as err:
        upload(tmp_path, body)
    assert err.value.status == 415
    assert not [p for p in (tmp_path / OWNER).iterdir()]  # the good file of the same request is removed too


def test_no_files_is_400(tmp_path: Path) -> None:
    with pytest.raises(ApiError) as err:
        upload(tmp_path, multipart([("other", None, b"x")]))
    assert err.value.status == 400 and err.value.code == "no_files"


def test_empty_file_is_400(tmp_path: Path) -> None:
    with pytest.raises(ApiError) as err:
        upload(tmp_path, multipart([("files", "empty.txt", b"")]))
    assert err.value.code == "empty_file"


@pytest.mark.parametrize("body", [b"", b"no boundary at all", f"--{BOUNDARY}\r\nContent-Disposition: form-data; "
                                  f"name=\"files\"; filename=\"a.txt\"\r\n\r\nunterminated".encode()])
def test_malformed_bodies_are_400(tmp_path: Path, body: bytes) -> None:
    with pytest.raises(ApiError) as err:
        upload(tmp_path, body)
    assert err.value.status == 400


@pytest.mark.parametrize(("ctype", "status"), [("application/json", 415), ("multipart/form-data", 400),
                                               ("text/plain; boundary=x", 415)])
def test_content_type_is_checked(tmp_path: Path, ctype: str, status: int) -> None:
    with pytest.raises(ApiError) as err:
        upload(tmp_path, multipart([("files", "a.txt", b"x")]), ctype=ctype)
    assert err.value.status == status


def test_missing_content_length_is_411(tmp_path: Path) -> None:
    with pytest.raises(ApiError) as err:
        save_uploads(io.BytesIO(b""), f"multipart/form-data; boundary={BOUNDARY}", None, tmp_path, OWNER, 100)
    assert err.value.status == 411


@pytest.mark.parametrize(("raw", "clean"), [
    ("report.pdf", "report.pdf"),
    ("../../etc/passwd.txt", "passwd.txt"),
    ("..\\..\\windows\\system32\\evil.txt", "evil.txt"),
    ("/abs/path/Doc.PDF", "Doc.pdf"),
    ("  spaced   out  .md", "spaced out.md"),
    (".hidden.txt", "hidden.txt"),
    ("a<b>c:d\"e|f?g*h.txt", "a_b_c_d_e_f_g_h.txt"),
    ("nul\x00byte\x1f.txt", "nulbyte.txt"),
    ("CON.txt", "_CON.txt"),
    ("résumé été.docx", "résumé été.docx"),
    ("x" * 300 + ".pdf", "x" * 116 + ".pdf"),
    ("semi;colon's \"quote\".html", "semi_colon_s _quote.html"),
])
def test_sanitize_filename(raw: str, clean: str) -> None:
    assert sanitize_filename(raw) == clean


@pytest.mark.parametrize("raw", ["", "..", "/", "...", "\\\\", " . ", "\x00\x01"])
def test_unusable_names_are_400(raw: str) -> None:
    with pytest.raises(ApiError):
        sanitize_filename(raw)


@pytest.mark.parametrize("owner", ["..", "../x", "a/b", "", ".hidden", "x" * 65])
def test_owner_ids_cannot_escape(tmp_path: Path, owner: str) -> None:
    with pytest.raises(ApiError):
        owner_dir(tmp_path, owner)


def test_is_within_resolves_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "uploads"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    os.symlink(outside, root / "link.txt")
    assert not is_within(root / "link.txt", root)
    assert not is_within(root / ".." / "secret.txt", root)
    assert is_within(root / "a" / "b.txt", root)


def test_allowed_extensions() -> None:
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".md", ".txt"} <= ALLOWED_EXTENSIONS
    # Exactly what the RAG API can convert: an upload the engine would refuse is refused at the door.
    from rag_system.ingestion import EXTENSIONS

    assert ALLOWED_EXTENSIONS == set(EXTENSIONS)


@pytest.mark.parametrize(("name", "header"), [
    ("report.pdf", "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"),
    ("Grüße.txt", "attachment; filename=\"Gr__e.txt\"; filename*=UTF-8''Gr%C3%BC%C3%9Fe.txt"),
    ('a"b;c.txt', "attachment; filename=\"a_b_c.txt\"; filename*=UTF-8''a%22b%3Bc.txt"),
    ("x\r\ny.txt", "attachment; filename=\"x__y.txt\"; filename*=UTF-8''x%0D%0Ay.txt"),
])
def test_content_disposition_is_safe(name: str, header: str) -> None:
    assert content_disposition(name) == header
    assert "\r" not in content_disposition(name) and "\n" not in content_disposition(name)


def test_body_cut_off_mid_part_is_400_and_stores_nothing(tmp_path: Path) -> None:
    whole = multipart([("files", "first.txt", b"complete"), ("files", "second.txt", b"y" * 100_000)])
    cut = whole[: whole.index(b"y" * 100) + 5000]
    for body, length in ((cut, len(cut)), (cut, len(whole))):  # closing boundary missing; stream ends early
        with pytest.raises(ApiError) as err:
            save_uploads(io.BytesIO(body), f"multipart/form-data; boundary={BOUNDARY}", length, tmp_path, OWNER,
                         10 * 1024 * 1024)
        assert err.value.status == 400
        assert not list((tmp_path / OWNER).iterdir())  # the complete first file and the partial one are gone


class Sized(io.RawIOBase):
    """A multipart body of one `size`-byte file, made as it is read (the test itself holds no copy)."""

    def __init__(self, head: bytes, size: int, tail: bytes) -> None:
        self.pieces, self.left, self.tail = [head], size, tail

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.pieces:
            return self.pieces.pop()
        if self.left > 0:
            k = min(n if n > 0 else 65536, self.left)
            self.left -= k
            return b"x" * k
        tail, self.tail = self.tail, b""
        return tail


def test_a_200_mb_upload_streams_to_disk_in_flat_memory(tmp_path: Path) -> None:
    import tracemalloc

    size = 200 * 1024 * 1024
    head = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.txt"\r\n\r\n').encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    tracemalloc.start()
    try:
        stored = save_uploads(Sized(head, size, tail), f"multipart/form-data; boundary={BOUNDARY}",
                              len(head) + size + len(tail), tmp_path, OWNER, 300 * 1024 * 1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stored[0].size == size and os.path.getsize(stored[0].stored_path) == size
    assert peak < 8 * 1024 * 1024  # a few 64 KiB chunks, never the body
