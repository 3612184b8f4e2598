"""Documents: `GET /documents/<id>/pages/<n>.png?highlight=` and `GET /documents/<id>/file`.

`<id>` is the gateway's document id or the document's sha256, which is what
the RAG API's citations carry as `document_id`.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from backend.app import App
from backend.pages import DEFAULT_DPI
from backend.uploads import is_within
from backend.web import Request, not_found
from common.errors import ApiError
from common.http import Response

_CHUNK = 256 * 1024
_INLINE = {".pdf": "application/pdf", ".txt": "text/plain; charset=utf-8", ".md": "text/plain; charset=utf-8"}


def _document(app: App, ident: str) -> tuple[dict[str, Any], Path]:
    doc = app.store.find_document(ident)
    if doc is None:
        raise not_found("document", ident)
    path = Path(doc["stored_path"])
    if not is_within(path, app.config.uploads_dir) or not path.is_file():
        raise ApiError(404, "document_file_missing", f"the file of document {ident!r} is no longer stored")
    return doc, path


def page_image(app: App, req: Request) -> Response:
    doc, path = _document(app, req.params["document_id"])
    raw_page = req.params["page"]
    if not raw_page.isdigit() or not 1 <= int(raw_page) <= 100_000:
        raise ApiError(400, "invalid_page", "the page number must be a positive integer")
    if path.suffix.lower() != ".pdf":
        raise ApiError(415, "not_a_pdf", f"{doc['filename']!r} is not a PDF: only PDF pages can be rendered; "
                                         f"open GET /documents/{doc['id']}/file instead")
    raw_dpi = req.query_value("dpi")
    if raw_dpi is not None and not raw_dpi.isdigit():
        raise ApiError(400, "invalid_dpi", "dpi must be a whole number")
    png, found = app.pages.render_marked(str(path), doc["sha256"], int(raw_page), req.query_value("highlight"),
                                         int(raw_dpi) if raw_dpi else DEFAULT_DPI)
    headers = {"Cache-Control": "private, max-age=3600"}
    if found is not None:  # whether the highlighted text is on this page (the viewer looks on when it is not)
        headers["X-Docent-Highlight"] = "found" if found else "not-found"
    return Response(200, png, content_type="image/png", headers=headers)


def original_file(app: App, req: Request) -> Response:
    doc, path = _document(app, req.params["document_id"])
    ext = path.suffix.lower()
    inline = ext in _INLINE and req.query_value("download") not in ("1", "true")
    ctype = _INLINE.get(ext) if inline else (mimetypes.guess_type(doc["filename"])[0] or "application/octet-stream")
    size = path.stat().st_size
    headers = {"Content-Disposition": content_disposition(doc["filename"], inline=inline),
               "Content-Length": str(size), "Content-Security-Policy": "sandbox"}
    return Response(200, _stream(path), content_type=ctype or "application/octet-stream", headers=headers)


def content_disposition(filename: str, *, inline: bool = False) -> str:
    """`attachment; filename="<ascii>"; filename*=UTF-8''<percent-encoded>` (RFC 6266 / RFC 5987)."""
    name = filename.replace("\\", "/").split("/")[-1] or "document"
    ascii_name = re.sub(r"[^A-Za-z0-9._ ()-]", "_", name.encode("ascii", "replace").decode("ascii")) or "document"
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"


def _stream(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            if not chunk:
                return
            yield chunk

