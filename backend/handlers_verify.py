"""`POST /verify` on the gateway: the RAG API's verifier, with the gateway's access rules.

Why through the gateway: the web app and personal-token scripts talk to the gateway (cookie + CSRF,
`Bearer dpt_…`), and only the gateway knows who may read which index. A body naming indexes
(`index`, `table_name`, `indexes`; by id, `vector_table_name`, localGPT's `text_pages_<id>` or
display name) is resolved here among the indexes the caller may read and sent on as ids, so the
RAG API, called with the service token, searches nothing the caller may not read; an index that
is not theirs is 403 `index_forbidden`, one they cannot see 404 `index_not_found`, before the RAG
API is called. The sources form reads no index and passes as it is. Everything else about the body
is judged once, by the RAG API (its 4xx keeps its status and code). Nothing is stored.
"""

from __future__ import annotations

from typing import Any

from backend.access import can_read_index, require_index
from backend.app import App
from backend.handlers_chat import display_names
from backend.principal import Principal
from backend.web import Request
from common.errors import ApiError
from common.http import Response
from common.options import MAX_INDEXES

_NAME_KEYS = ("index", "table_name", "tableName")
_PREFIXES = ("idx_", "text_pages_")


def verify(app: App, req: Request) -> Response:
    data = req.json()
    payload = dict(data)
    names = _named(data)
    if names and not req.principal.unrestricted:
        ids = list(dict.fromkeys(_resolve(app, req.principal, name) for name in names))
        for key in (*_NAME_KEYS, "indexes"):
            payload.pop(key, None)
        payload["indexes"] = ids
    return Response.json(_shown(app.rag.verify(payload, req.request_id)),
                         audit={"indexes": payload.get("indexes") or names})


def _named(data: dict[str, Any]) -> list[str]:
    """The index names of a body, as sent (the RAG API checks their form)."""
    names = [data[k] for k in _NAME_KEYS if data.get(k) is not None]
    many = data.get("indexes")
    if many is not None:
        if not isinstance(many, list):
            raise ApiError(400, "invalid_option", "indexes must be a list of index names")
        names.extend(many)
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise ApiError(400, "invalid_index_name", "every index must be named by a non-empty string")
    if len(names) > MAX_INDEXES:
        raise ApiError(400, "invalid_option", f"at most {MAX_INDEXES} indexes per request")
    return names


def _resolve(app: App, who: Principal, name: str) -> str:
    """The id of the index `name` names among those `who` may read (403 / 404 otherwise)."""
    wanted = name.strip()
    bare = next((wanted[len(p):] for p in _PREFIXES if wanted.startswith(p)), wanted)
    for candidate in dict.fromkeys((wanted, bare)):
        exists, _ = app.store.owner_of("indexes", candidate)
        if exists:
            require_index(app.store, who, candidate, "read")
            return candidate
    folded = " ".join(wanted.split()).casefold()
    found = [i["id"] for i in app.store.list_indexes()
             if " ".join(i["name"].split()).casefold() == folded and can_read_index(app.store, who, i["id"])]
    if len(found) > 1:
        raise ApiError(400, "ambiguous_index_name",
                       f"{len(found)} indexes are named {name!r} ({', '.join(sorted(found))}); give the index id")
    if not found:
        raise ApiError(404, "index_not_found", f"no index named {name!r} that you may read")
    return found[0]


def _shown(result: dict[str, Any]) -> dict[str, Any]:
    """Document names as uploaded, not as stored (`<sha256>_report.pdf`), in sources and evidence."""
    sources = result.get("sources")
    if not isinstance(sources, list):
        return result
    shown = display_names({"source_documents": sources})["source_documents"]
    names = {s.get("n"): s.get("document_name") for s in shown if isinstance(s, dict)}
    sentences = []
    for sentence in result.get("sentences") or []:
        if isinstance(sentence, dict) and isinstance(sentence.get("evidence"), list):
            evidence = [{**e, "document": names.get(e.get("n"), e.get("document"))}
                        if isinstance(e, dict) and "document" in e else e for e in sentence["evidence"]]
            sentence = {**sentence, "evidence": evidence}
        sentences.append(sentence)
    return {**result, "sources": shown, "sentences": sentences}
