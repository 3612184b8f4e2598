"""Command line: `python -m rag_system <command>`.

Machine-readable results go to stdout (`--json`); progress and logs go to
stderr, so `... --json | jq` always sees exactly one JSON document.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rag_system.cli.answer import add_commands as add_answer_commands
from rag_system.cli.answer import checked_query_options, run_ask, run_chat, run_task
from rag_system.api.main import add_command as add_api_command
from rag_system.api.main import run_api
from rag_system.cli.library import LIBRARY_COMMANDS, add_library_commands, run_library_command
from rag_system.mcp.main import add_command as add_mcp_command
from rag_system.mcp.main import run_mcp
from rag_system.config import ConfigError, load_settings
from rag_system.cli.progress import ProgressReporter
from rag_system.cli.reembed import run_reembed
from rag_system.cli.remote_index import RemoteBuildError, index_through
from rag_system.cli.running_api import ApiCallError, RunningApi, find_running_api
from rag_system.cli.verify import add_verify_command, run_verify

log = logging.getLogger("rag_system.cli")

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rag_system", description="Docent RAG engine")
    parser.add_argument("--profile", help="settings profile (default, fast)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    idx = sub.add_parser("index", help="index files or folders (incremental)")
    idx.add_argument("paths", nargs="+", type=_input, metavar="PATH|s3://BUCKET/PREFIX",
                     help="files or folders to index, or objects under an s3:// prefix (read with the AWS_* settings)")
    idx.add_argument("--index", required=True, help="index name")
    idx.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    idx.add_argument("--embedder", default=None, metavar="NAME",
                     help="embedder of a new index (`embedders` lists them; an index keeps its own)")
    idx.add_argument("--local", action="store_true",
                     help="build in this process even when a RAG API serves the same store")
    idx.add_argument("--workers", default=None, metavar="local:N|ray://HOST:PORT",
                     help="fan the build out on Ray: N workers on this machine, or an existing cluster "
                          "(the driver runs here, as with --local; Documentation/scale-out.md)")

    emb = sub.add_parser("reembed", help="re-embed an index with another embedder (its files are not read again)")
    emb.add_argument("--index", required=True, help="index name")
    emb.add_argument("--embedder", required=True, metavar="NAME",
                     help="the embedder to move the index to (`embedders` lists them; auto = English's default)")
    emb.add_argument("--json", action="store_true", help="print one JSON summary on stdout")

    ret = sub.add_parser("retrieve", help="rank evidence for a query (no answer)")
    ret.add_argument("query", help="the question or search text")
    ret.add_argument("--index", required=True, help="index name")
    ret.add_argument("--mode", choices=("hybrid", "vector_only", "fts_only"), default=None)
    ret.add_argument("--k", type=int, default=None, help="number of results")
    ret.add_argument("--filters", default=None, help="JSON filter object")
    ret.add_argument("--rerank", action="store_true", default=None,
                     help="run the rerank/select stage (needs RERANKER_MODEL)")
    ret.add_argument("--json", action="store_true", help="print the result as JSON")
    ret.add_argument("--local", action="store_true",
                     help="search in this process even when a RAG API serves the same store")
    add_answer_commands(sub)
    add_verify_command(sub)
    add_api_command(sub)
    add_mcp_command(sub)
    add_library_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        settings = load_settings(args.profile)
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    runners: dict[str, Callable[[argparse.Namespace, Any], int]] = {
        "index": _cmd_index, "retrieve": _cmd_retrieve, "reembed": run_reembed, "chat": run_chat,
        "summarize": run_task, "compare": run_task, "ask": run_ask, "verify": run_verify, "api": run_api,
        "mcp": run_mcp, **dict.fromkeys(LIBRARY_COMMANDS, run_library_command)}
    return runners[args.command](args, settings)  # argparse rejects unknown commands before this


def _input(text: str) -> Path | str:
    """A local file or folder as a Path; an `s3://` URI kept as text (a Path would fold its `//`)."""
    return text if text.startswith("s3://") else Path(text)


def _cmd_index(args: argparse.Namespace, settings) -> int:  # type: ignore[no-untyped-def]
    reporter = ProgressReporter(sys.stderr)
    try:
        result = _index_result(args, settings, reporter.handle)
    except CliFailure as exc:
        reporter.close()
        sys.stderr.write(f"error: {exc}\n")
        return exc.exit_code
    reporter.close()
    if args.json:
        sys.stdout.write(json.dumps(result) + "\n")
        return EXIT_OK
    files = result["files"]
    sys.stdout.write(
        f"index {result['index']}: {files['added']} added, {files['updated']} updated, "
        f"{files['unchanged']} unchanged, {files['removed']} removed, "
        f"{len(files['failed'])} failed; {result['chunks']} chunks from {result['pages']} pages "
        f"in {result['seconds']:.1f}s\n")
    for failure in files["failed"]:
        sys.stdout.write(f"  failed: {failure['path']}: {failure['reason']}\n")
    return EXIT_OK


class CliFailure(RuntimeError):
    """A build that did not happen, with the exit code it earns (usage or error)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _index_result(args: argparse.Namespace, settings, on_event) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The build summary JSON: by the running RAG API of this store when there is one, else built here."""
    if args.workers:
        return _index_distributed(args, settings, on_event)
    objects = [p for p in args.paths if isinstance(p, str)]
    api = None if args.local else find_running_api(settings)
    if api is not None and objects:
        sys.stderr.write(f"(s3:// inputs are read by this process, not by the RAG API at {api.url}; building here)\n")
        api = None
    if api is not None:
        try:
            remote = index_through(api, args.paths, args.index, args.embedder, on_event)
        except RemoteBuildError as exc:
            raise CliFailure(str(exc), EXIT_USAGE if exc.status in (400, 403, 404) else EXIT_ERROR) from exc
        except OSError as exc:
            raise CliFailure(f"the RAG API at {api.url} stopped answering ({exc}); run again, or add --local",
                             EXIT_ERROR) from exc
        if remote is not None:
            sys.stderr.write(f"(built by the RAG API at {api.url})\n")
            return remote
        sys.stderr.write(f"(the RAG API at {api.url} cannot build these paths; building here)\n")
    from rag_system.indexing.builder import build_index
    from rag_system.embedding.base import EmbedderLoadError
    from rag_system.embedding.registry import UnknownEmbedderError
    from rag_system.indexing.objects import InvalidObjectUriError
    from rag_system.indexing.store import EmbedderMismatchError, InvalidIndexNameError

    try:
        return build_index(args.paths, args.index, settings, embedder_name=args.embedder,
                           on_event=on_event).to_json()
    except (UnknownEmbedderError, FileNotFoundError, InvalidIndexNameError, InvalidObjectUriError) as exc:
        raise CliFailure(str(exc), EXIT_USAGE) from exc
    except (EmbedderMismatchError, EmbedderLoadError) as exc:
        raise CliFailure(str(exc), EXIT_ERROR) from exc
    except OSError as exc:  # the object store refused or could not be reached
        raise CliFailure(f"could not read the inputs ({exc})", EXIT_ERROR) from exc


def _index_distributed(args: argparse.Namespace, settings, on_event) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The build fanned out on Ray (`--workers`): this process plans and commits, the workers do the rest."""
    from rag_system.embedding.base import EmbedderLoadError
    from rag_system.embedding.registry import UnknownEmbedderError
    from rag_system.indexing.distributed import (DistributedBuildError, build_index_distributed, parse_workers,
                                                 ray_cluster)
    from rag_system.indexing.objects import InvalidObjectUriError
    from rag_system.indexing.store import EmbedderMismatchError, InvalidIndexNameError

    try:
        parse_workers(args.workers)
    except ValueError as exc:
        raise CliFailure(str(exc), EXIT_USAGE) from exc
    try:
        with ray_cluster(args.workers):
            return build_index_distributed(args.paths, args.index, settings, embedder_name=args.embedder,
                                           on_event=on_event).to_json()
    except (UnknownEmbedderError, FileNotFoundError, InvalidIndexNameError, InvalidObjectUriError) as exc:
        raise CliFailure(str(exc), EXIT_USAGE) from exc
    except (EmbedderMismatchError, EmbedderLoadError, DistributedBuildError, ConnectionError) as exc:
        raise CliFailure(str(exc), EXIT_ERROR) from exc
    except OSError as exc:  # the object store refused or could not be reached
        raise CliFailure(f"could not read the inputs ({exc})", EXIT_ERROR) from exc


def _cmd_retrieve(args: argparse.Namespace, settings) -> int:  # type: ignore[no-untyped-def]
    from rag_system.retrieval.filters import FilterError

    try:
        filters = checked_query_options(args)  # before loading any model
    except (json.JSONDecodeError, FilterError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    api = None if args.local else find_running_api(settings)
    if api is not None:
        return _retrieve_through(api, args, filters)
    from rag_system.embedding.base import EmbedderLoadError
    from rag_system.embedding.registry import shared_embedder
    from rag_system.indexing.store import EmbedderMismatchError, IndexNotFoundError, InvalidIndexNameError
    from rag_system.retrieval.engine import RetrievalEngine

    try:
        engine = RetrievalEngine(settings, shared_embedder(settings))
        options = engine.options(mode=args.mode, k=args.k, filters=filters, rerank=args.rerank)
        result = engine.retrieve(args.index, args.query, options)
    except (FilterError, ValueError, IndexNotFoundError, InvalidIndexNameError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except (EmbedderMismatchError, EmbedderLoadError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    return _print_retrieval(result.to_json(), args.json)


def _retrieve_through(api: RunningApi, args: argparse.Namespace, filters: object) -> int:
    """`retrieve` by the running RAG API: the same result, without loading the embedder here."""
    body = {"query": args.query, "index": args.index, "retrieval_mode": args.mode, "retrieval_k": args.k,
            "filters": filters, "ai_rerank": args.rerank}
    try:
        payload = api.call("POST", "/retrieve", {k: v for k, v in body.items() if v is not None})
    except ApiCallError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE if 400 <= exc.status < 500 and exc.status != 409 else EXIT_ERROR
    except OSError as exc:
        sys.stderr.write(f"error: the RAG API at {api.url} stopped answering ({exc}); "
                         "run again, or add --local\n")
        return EXIT_ERROR
    log.info("retrieved through the RAG API at %s", api.url)
    if not args.json:
        sys.stderr.write(f"(searched by the RAG API at {api.url})\n")
    return _print_retrieval(payload, args.json)


def _print_retrieval(payload: dict[str, Any], as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps(payload) + "\n")
        return EXIT_OK
    for rank, item in enumerate(payload["results"], start=1):
        pages = f"p. {item['page_start']}" + (f"-{item['page_end']}" if item["page_end"] != item["page_start"] else "")
        snippet = " ".join(item["text"].split())[:160]
        sys.stdout.write(f"{rank:>2}. {item['document_name']}, {pages}  ({item['score']:.4f})\n    {snippet}\n")
    sys.stdout.write(f"evidence score {payload['evidence_score']:.2f}; "
                     f"{payload['timings_ms'].get('first_stage_ms', 0):.0f} ms\n")
    return EXIT_OK
