"""What the MCP tools ask Docent, with the caller's own credential: the same tokens and grants as HTTP.

The MCP server holds no index and loads no model: every tool is a call to the running RAG API (the
store's one owner, with its models loaded), so access is decided exactly where it is for HTTP:

- the service token (`DOCENT_API_TOKEN`, or none on a single-user install) goes to the RAG API as
  it is and reads every index;
- a person's API token (`dpt_…`, accounts on) goes to the gateway: `GET /indexes` lists what that
  person may read, and before a search or an answer `POST /auth/rag-token` turns it into a
  short-lived grant for that one index (refused, rate-limited and audited as for the web app),
  which the RAG API then checks like any grant;
- a grant (`dg1.…`) goes to the RAG API as it is, limited to the indexes it names.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from common.errors import error_fields

PERSONAL_PREFIX = "dpt_"
TIMEOUT_S = 300.0


class DocentError(RuntimeError):
    """A refusal or failure to show the agent as the tool's error (`status`: the HTTP status behind it)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Docent:
    rag_url: str
    gateway_url: str
    token: str = ""

    @property
    def personal(self) -> bool:
        return self.token.startswith(PERSONAL_PREFIX)

    # -- tools -------------------------------------------------------------------
    def list_indexes(self) -> list[dict[str, Any]]:
        """`[{"name", "id", "chunks"}]`: what this credential may read (display names where the gateway has them)."""
        if self.personal:
            found = self._gateway("GET", "/indexes")["indexes"]
            return [{"name": i["name"], "id": i["id"], "chunks": None} for i in found]
        sizes = self._rag("GET", "/indexes", token=self.token)["indexes"]
        names = self._display_names()
        return [{"name": names.get(i["name"], i["name"]), "id": i["name"], "chunks": i["chunks"]} for i in sizes]

    def search(self, query: str, index: str, k: int) -> dict[str, Any]:
        target, token = self._access(index)
        return self._rag("POST", "/retrieve", {"query": query, "index": target, "retrieval_k": k}, token=token)

    def ask(self, question: str, index: str) -> dict[str, Any]:
        target, token = self._access(index)
        return self._rag("POST", "/chat", {"query": question, "index": target, "force_rag": True}, token=token)

    def verify(self, text: str, index: str, question: str = "") -> dict[str, Any]:
        """The verifier on any text, each sentence checked against what the index says (POST /verify)."""
        target, token = self._access(index)
        body: dict[str, Any] = {"text": text, "index": target}
        if question:
            body["question"] = question
        return self._rag("POST", "/verify", body, token=token)

    # -- access --------------------------------------------------------------------
    def _access(self, index: str) -> tuple[str, str]:
        """(the index as the RAG API names it, the bearer to send it)."""
        if not self.personal:
            return index, self.token
        wanted = " ".join(index.split()).casefold()
        readable = self._gateway("GET", "/indexes")["indexes"]
        matches = [i for i in readable if i["id"] == index] or \
            [i for i in readable if " ".join(str(i["name"]).split()).casefold() == wanted]
        if not matches:
            raise DocentError(f"no index {index!r} that you may read; list_indexes shows yours", 404)
        if len(matches) > 1:
            raise DocentError(f"{len(matches)} indexes are named {index!r}; use one of their ids: "
                              f"{', '.join(i['id'] for i in matches)}", 400)
        grant = self._gateway("POST", "/auth/rag-token", {"indexes": [matches[0]["id"]], "purpose": "chat"})
        return matches[0]["id"], str(grant.get("token") or "")

    def _display_names(self) -> dict[str, str]:
        """Gateway id -> display name, when the gateway answers this credential (else the RAG API's names)."""
        try:
            return {i["id"]: i["name"] for i in self._gateway("GET", "/indexes")["indexes"]}
        except DocentError:
            return {}

    # -- transport -------------------------------------------------------------------
    def _rag(self, method: str, path: str, body: dict[str, Any] | None = None, *, token: str) -> dict[str, Any]:
        return _call("the RAG API", self.rag_url, method, path, body, token,
                     "start it with `python -m rag_system api` (or `make run`)")

    def _gateway(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return _call("the gateway", self.gateway_url, method, path, body, self.token,
                     "start it with `python -m backend` (or `make run`)")


def _call(who: str, base: str, method: str, path: str, body: dict[str, Any] | None, token: str,
          hint: str) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base.rstrip("/") + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=TIMEOUT_S) as resp:
            payload = json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            code, message = error_fields(json.loads(exc.read() or b"{}"))
        except ValueError:
            code, message = "", ""
        raise DocentError(f"{who} refused: {message or f'HTTP {exc.code}'}" + (f" ({code})" if code else ""),
                          exc.code) from exc
    except (OSError, ValueError) as exc:
        raise DocentError(f"{who} at {base} is not reachable ({exc}); {hint}") from exc
    return payload if isinstance(payload, dict) else {"data": payload}
