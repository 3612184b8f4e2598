"""One identity per index: what clients call an index, resolved to the RAG API's own name.

An index made in the web app has three names: the gateway's id (which is
the RAG API's name for it), its `vector_table_name` (`idx_<id>`) and the
display name a person gave it ("Debian PDFs"); localGPT clients also send
`text_pages_<id>`. `/chat`, `/chat/stream` and `/retrieve` accept all of
them. Display names belong to the gateway (it owns SQLite, Documentation/architecture.md), so a
name that is not an index is looked up there (`GET /indexes`, every time: a
cached list would hide a rename or a second index of the same name); a name
two indexes share is refused with both ids, never guessed. With accounts on, display
names are matched only among the indexes the caller's grant may read (`may_read`), so
neither the refusal nor a match tells a user the id, or the existence, of an index they
cannot read; two readable indexes of one name are still refused with both ids.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

from common.errors import ApiError
from common.options import normalise_keys
from rag_system.api.options import LEGACY_TABLE_PREFIX
from rag_system.indexing.store import TABLE_PREFIX, InvalidIndexNameError, validate_index_name

log = logging.getLogger(__name__)

GATEWAY_TIMEOUT_S = 3.0
_KEYS = ("index", "table_name")


def _valid(name: str) -> bool:
    try:
        validate_index_name(name)
    except InvalidIndexNameError:
        return False
    return True


class IndexNames:
    def __init__(self, known: Callable[[bool], Iterable[str]], gateway_url: str,
                 token: Callable[[], str] = lambda: "") -> None:
        self._known = known  # the RAG API's index names (the argument: list them afresh, not from a cache)
        self._gateway_url = gateway_url.rstrip("/")
        self._token = token

    def resolve_body(self, body: Any, may_read: Callable[[str], bool] = lambda _index: True) -> Any:
        """The body with every index it names given as the RAG API's name (anything else is left as sent)."""
        if not isinstance(body, dict):
            return body
        out = normalise_keys(body)
        for key in _KEYS:
            if isinstance(out.get(key), str):
                out[key] = self.resolve(out[key], may_read)
        if isinstance(out.get("indexes"), list):
            out["indexes"] = [self.resolve(v, may_read) if isinstance(v, str) else v for v in out["indexes"]]
        return out

    def resolve(self, value: str, may_read: Callable[[str], bool] = lambda _index: True) -> str:
        name = value.strip()
        if name.startswith(LEGACY_TABLE_PREFIX):
            name = name[len(LEGACY_TABLE_PREFIX):]
        known: set[str] | None = None
        if _valid(name):
            if name in set(self._known(False)):
                return name
            known = set(self._known(True))  # an index built a moment ago is not in the cached list yet
            if name in known:
                return name
            bare = name[len(TABLE_PREFIX):] if name.startswith(TABLE_PREFIX) else ""
            if bare in known:
                return bare  # the gateway's vector_table_name
        ids = [i for i in self._fetch().get(" ".join(name.split()).casefold(), []) if may_read(i)]
        if len(ids) > 1:
            raise ApiError(400, "ambiguous_index_name",
                           f"{len(ids)} indexes are named {value!r} ({', '.join(sorted(ids))}); give the index id")
        if ids:
            return ids[0]
        if known is None:  # not an index name either: say what would have worked
            raise ApiError(400, "invalid_index_name",
                           f"no index is named {value!r}: give the index's id, its vector_table_name, "
                           "or its name as the web app shows it")
        return name

    def _fetch(self) -> dict[str, list[str]]:
        """Display name (case and spacing folded) -> gateway index ids; empty when the gateway is unreachable."""
        if not self._gateway_url:
            return {}
        request = urllib.request.Request(self._gateway_url + "/indexes")
        token = self._token()
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(request, timeout=GATEWAY_TIMEOUT_S) as resp:
                listed = json.loads(resp.read()).get("indexes") or []
        except (OSError, ValueError, AttributeError) as exc:
            log.info("index display names unavailable (gateway %s: %s)", self._gateway_url, exc)
            return {}
        out: dict[str, list[str]] = {}
        for item in listed:
            if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("id"), str):
                out.setdefault(" ".join(item["name"].split()).casefold(), []).append(item["id"])
        return out
