"""`python -m rag_system verify`: check a text against an index, or against the sources it cites.

Why a command: anyone can check a draft — a colleague's memo, another assistant's answer — against
their own documents from a shell or a script. It goes through a running RAG API over the same store
when there is one (the parser and the embedder are already loaded there; `retrieve` does the same),
else it checks in this process; both paths run `rag_system.verification.run.check`, so they print
the same verdicts. Exit status: 0 every sentence supported, 1 not (or the check failed), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from common.errors import ApiError, DomainError

EXIT_SUPPORTED, EXIT_NOT_SUPPORTED, EXIT_USAGE = 0, 1, 2
MARKS = {"supported": "✓", "contradicted": "✗", "unsupported": "✗"}


class _Usage(Exception):
    """Input the user has to fix (exit status 2)."""


def add_verify_command(sub: Any) -> None:
    ver = sub.add_parser("verify", help="check each sentence of a text against an index or given sources")
    ver.add_argument("text", nargs="?", help="the text to check ('-' reads it from stdin)")
    ver.add_argument("--file", type=Path, help="read the text to check from this file")
    ver.add_argument("--index", action="append", default=[], metavar="NAME",
                     help="search this index for support (repeat for several)")
    ver.add_argument("--sources", type=Path, metavar="FILE.json",
                     help='the passages the text cites: [{"n": 1, "text": "...", "name": "..."}] (or {"sources": [...]})')
    ver.add_argument("--question", default=None, help="the question the text answers (helps read 'Yes.'/'No.')")
    ver.add_argument("--json", action="store_true", help="print the /verify response as JSON")
    ver.add_argument("--local", action="store_true", help="check in this process even when a RAG API serves the same store")


def run_verify(args: argparse.Namespace, settings: Any) -> int:
    from rag_system.verification.request import parse_verify

    try:
        body = _body(args)
        parse_verify(body)  # every usage error before anything loads or connects
    except (_Usage, ApiError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    payload = _through_api(args, settings, body) if not args.local else None
    if isinstance(payload, int):
        return payload
    if payload is None:
        payload = _local(body, settings)
        if isinstance(payload, int):
            return payload
    if args.json:
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(payload))
    return EXIT_SUPPORTED if payload.get("supported") else EXIT_NOT_SUPPORTED


def _body(args: argparse.Namespace) -> dict[str, Any]:
    if args.file is not None and args.text is not None:
        raise _Usage("give the text or --file, not both")
    if args.file is not None:
        try:
            text = args.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _Usage(f"cannot read {args.file}: {exc}") from exc
    elif args.text == "-":
        text = sys.stdin.read()
    elif args.text is None:
        raise _Usage("give the text to check (an argument, --file, or '-' for stdin)")
    else:
        text = args.text
    body: dict[str, Any] = {"text": text}
    if args.question is not None:
        body["question"] = args.question
    if args.index:
        body["indexes"] = list(args.index)
    if args.sources is not None:
        body["sources"] = _sources_file(args.sources)
    if not args.index and args.sources is None:
        raise _Usage("say what to check against: --index NAME (search it) or --sources FILE.json")
    return body


def _sources_file(path: Path) -> Any:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _Usage(f"cannot read the sources from {path}: {exc}") from exc
    return data.get("sources") if isinstance(data, dict) else data


def _through_api(args: argparse.Namespace, settings: Any, body: dict[str, Any]) -> dict[str, Any] | int | None:
    """The running RAG API's answer; None when none serves this store; an exit status on failure."""
    from rag_system.cli.running_api import ApiCallError, find_running_api

    api = find_running_api(settings)
    if api is None:
        return None
    try:
        payload = api.call("POST", "/verify", body, timeout=600.0)
    except ApiCallError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE if 400 <= exc.status < 500 and exc.status != 409 else EXIT_NOT_SUPPORTED
    except OSError as exc:
        sys.stderr.write(f"error: the RAG API at {api.url} stopped answering ({exc}); run again, or add --local\n")
        return EXIT_NOT_SUPPORTED
    if not args.json:
        sys.stderr.write(f"(checked by the RAG API at {api.url})\n")
    return payload


def _local(body: dict[str, Any], settings: Any) -> dict[str, Any] | int:
    from rag_system.grounding.parser import ParserUnavailable
    from rag_system.verification.request import parse_verify
    from rag_system.verification.run import check

    request = parse_verify(body)
    try:
        engine = None
        if request.indexes:
            from rag_system.embedding.registry import shared_embedder
            from rag_system.retrieval.engine import RetrievalEngine

            engine = RetrievalEngine(settings, shared_embedder(settings))
        return check(request, engine).to_json()
    except DomainError as exc:  # an unknown index (404), another embedder's index (409)
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE if 400 <= exc.status < 500 and exc.status != 409 else EXIT_NOT_SUPPORTED
    except (ParserUnavailable, RuntimeError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_NOT_SUPPORTED


def render(payload: dict[str, Any]) -> str:
    """Each sentence with its mark and verdict, then its findings and evidence (document, page)."""
    lines: list[str] = []
    counts = {"supported": 0, "contradicted": 0, "unsupported": 0}
    for s in payload["sentences"]:
        counts[s["verdict"]] = counts.get(s["verdict"], 0) + 1
        label = s["verdict"] if s.get("checked", True) else "nothing to check"
        lines.append(f"{MARKS.get(s['verdict'], '?')} {label:<13} {' '.join(s['text'].split())}")
        lines.extend(f"    - {finding}" for finding in s["findings"])
        for e in s["evidence"]:
            where = ", ".join(x for x in (e.get("document"), f"p. {e['page']}" if e.get("page") else None) if x)
            lines.append(f"    [{e['n']}]{' ' + where if where else ''}: \"{e['quote']}\"")
    total = len(payload["sentences"])
    lines.append(f"{total} sentence{'s' if total != 1 else ''}: {counts['supported']} supported, "
                 f"{counts['contradicted']} contradicted, {counts['unsupported']} unsupported")
    for note in [*payload.get("notes", []), *payload.get("warnings", [])]:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"
