"""`chat` (over an existing index) and `ask` (ephemeral: index a folder, answer, delete).

Why `ask` cleans up in a `finally` plus signal handlers: a user who presses
Ctrl-C, or a supervisor that sends SIGTERM, must not leave a temporary index
(possibly a copy of private documents' text) behind on disk.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_system.config import Settings


EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_commands(sub: Any) -> None:
    chat = sub.add_parser("chat", help="answer a question from an index, with checked citations")
    chat.add_argument("query")
    chat.add_argument("--index", required=True, action="append", help="index name (repeatable)")
    _answer_options(chat)
    ask = sub.add_parser("ask", help="index a folder into a temporary store, answer, delete everything")
    ask.add_argument("folder", type=Path)
    ask.add_argument("query")
    _answer_options(ask, local=False)
    summ = sub.add_parser("summarize", help="a cited summary of one document (fixed sections)")
    summ.add_argument("document", help="the document's name (fuzzy, must match one) or id")
    summ.add_argument("--index", required=True, action="append", help="index name (repeatable)")
    _answer_options(summ, task=False)
    comp = sub.add_parser("compare", help="compare 2-4 documents as a cited table")
    comp.add_argument("documents", nargs="+", help="the documents' names (fuzzy, each must match one) or ids")
    comp.add_argument("--index", required=True, action="append", help="index name (repeatable)")
    _answer_options(comp, task=False)


def _answer_options(p: argparse.ArgumentParser, task: bool = True, local: bool = True) -> None:
    if task:
        p.add_argument("--task", choices=("qa", "summary", "compare", "auto"), default=None,
                       help="qa (default), summary, compare, or auto-detect from the wording")
    p.add_argument("--mode", choices=("hybrid", "vector_only", "fts_only"), default=None)
    p.add_argument("--k", type=int, default=None, help="first-stage candidates")
    p.add_argument("--filters", default=None, help="JSON filter object")
    p.add_argument("--backend", choices=("auto", "llamacpp", "ollama", "openai", "extractive"), default=None)
    p.add_argument("--model", default=None, help="model name for ollama/openai backends")
    p.add_argument("--no-expand", action="store_true", help="do not add neighbouring chunks")
    p.add_argument("--json", action="store_true", help="print the full result as one JSON object")
    p.add_argument("--stream", action="store_true",
                   help="print answer tokens as they arrive (stdout; stderr with --json)")
    if local:
        p.add_argument("--local", action="store_true",
                       help="answer in this process even when a RAG API is running (loads the models here)")


class _Interrupted(Exception):
    pass


class _SignalCancel(threading.Event):
    """The cancel flag workers poll, plus the name of the signal that set it."""

    signal_name = ""


@contextmanager
def _terminate_as_interrupt() -> Iterator[_SignalCancel]:
    """Turn SIGTERM/SIGINT into an exception in the main thread, and a cancel flag for workers.

    The exception alone is not enough: a signal that lands while Python runs a
    weakref callback or `__del__` has its exception printed and dropped, and
    the build then stops on the flag instead (`BuildCancelled`), so callers
    also check `cancel.is_set()`.
    """
    cancel = _SignalCancel()

    def handler(signum: int, frame: Any) -> None:
        cancel.signal_name = signal.Signals(signum).name
        cancel.set()
        raise _Interrupted(cancel.signal_name)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield cancel
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def checked_query_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """Validate --filters and --k before any model loads; return the parsed filters.

    Raises `json.JSONDecodeError`, `FilterError` or `ValueError` (all usage errors).
    """
    from rag_system.retrieval.filters import compile_filters

    filters = json.loads(args.filters) if args.filters else None
    compile_filters(filters)
    if args.k is not None and not 1 <= args.k <= 1000:
        raise ValueError("--k must be between 1 and 1000")
    return filters


def run_chat(args: argparse.Namespace, settings: Settings) -> int:
    from rag_system.cli.running_api import find_running_api

    api = None if args.local else find_running_api(settings)
    if api is not None:
        return _answer_remote(args, list(args.index), api)
    with _terminate_as_interrupt() as cancel:
        try:
            code = _answer(args, settings, list(args.index), cancel)
        except _Interrupted:
            code = EXIT_INTERRUPTED
        if cancel.is_set():
            sys.stderr.write(f"interrupted ({cancel.signal_name})\n")
            return EXIT_INTERRUPTED
        return code


def run_task(args: argparse.Namespace, settings: Settings) -> int:
    """`summarize` / `compare`: a chat request whose task and documents come from the command."""
    if args.command == "summarize":
        args.task, args.documents = "summary", [args.document]
    else:
        if not 2 <= len(args.documents) <= 4:
            sys.stderr.write(f"error: compare takes 2 to 4 documents, got {len(args.documents)}\n")
            return EXIT_USAGE
        args.task = "compare"
    args.query = f"{args.task}: " + " | ".join(args.documents)
    return run_chat(args, settings)


def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    from rag_system.indexing.builder import BuildCancelled, build_index
    from rag_system.cli.progress import ProgressReporter

    folder: Path = args.folder
    if not folder.exists():
        sys.stderr.write(f"error: {folder} does not exist\n")
        return EXIT_USAGE
    workdir = Path(tempfile.mkdtemp(prefix="docent-ask-"))
    try:
        with _terminate_as_interrupt() as cancel:
            try:
                local = settings.with_overrides(data_dir=workdir, lancedb_uri=str(workdir / "lancedb"))
                reporter = ProgressReporter(sys.stderr)
                summary = build_index([folder], "ask", local, on_event=reporter.handle, cancel=cancel)
                reporter.close()
                if summary.chunks == 0 and not cancel.is_set():
                    sys.stderr.write(f"error: nothing indexable under {folder}\n")
                    return EXIT_USAGE
                code = EXIT_INTERRUPTED if cancel.is_set() else _answer(args, local, ["ask"], cancel)
            except (_Interrupted, BuildCancelled):
                code = EXIT_INTERRUPTED
            if cancel.is_set():
                sys.stderr.write(f"interrupted ({cancel.signal_name}); temporary index removed\n")
                return EXIT_INTERRUPTED
            return code
    finally:
        _remove(workdir)


def _remove(workdir: Path, patience_s: float = 5.0) -> None:
    """Delete the temporary store, again until it is gone or `patience_s` passed.

    Why again: a signal interrupts the main thread while LanceDB's own loop
    may still be writing a table it was asked to create; files it adds after
    the first pass listed the folder would otherwise stay behind (CI saw it
    once in the SIGTERM test).
    """
    deadline = time.monotonic() + patience_s
    while True:
        shutil.rmtree(workdir, ignore_errors=True)
        if not workdir.exists() or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def _answer(args: argparse.Namespace, settings: Settings, indexes: list[str], cancel: threading.Event) -> int:
    from rag_system.agent.pipeline import QueryPipeline
    from rag_system.generation.registry import BackendRegistry, UnknownBackendError
    from rag_system.embedding.base import EmbedderLoadError
    from rag_system.embedding.registry import shared_embedder
    from rag_system.indexing.store import EmbedderMismatchError, IndexNotFoundError, InvalidIndexNameError
    from rag_system.retrieval.engine import RetrievalEngine
    from rag_system.retrieval.filters import FilterError

    try:
        filters = checked_query_options(args)
        engine = RetrievalEngine(settings, shared_embedder(settings))
        pipeline = QueryPipeline(settings, engine, BackendRegistry(settings))
        request = pipeline.request(args.query, indexes, mode=args.mode, k=args.k, filters=filters,
                                   backend=args.backend, model=args.model,
                                   context_expand=False if args.no_expand else None,
                                   task=getattr(args, "task", None), documents=getattr(args, "documents", None))

        streamer = _Streamer(args)
        response = pipeline.run(request, streamer.emit, cancel)
    except (json.JSONDecodeError, FilterError, ValueError, IndexNotFoundError, InvalidIndexNameError,
            UnknownBackendError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except (EmbedderMismatchError, EmbedderLoadError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    return _print(args, response.to_json(), streamer.text)


def _answer_remote(args: argparse.Namespace, indexes: list[str], api: Any) -> int:
    """The same answer from the running RAG API (remote_chat.py says why)."""
    from rag_system.cli.remote_chat import RemoteError, chat_body, remote_chat

    url = api.url
    sys.stderr.write(f"answering through the RAG API at {url} (--local to load the models here)\n")
    try:
        body = chat_body(args, indexes)
    except json.JSONDecodeError as exc:
        sys.stderr.write(f"error: --filters is not JSON: {exc}\n")
        return EXIT_USAGE

    streamer = _Streamer(args)
    try:
        payload = remote_chat(api, body, streamer.emit if args.stream else None)
    except RemoteError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE if 400 <= exc.status < 500 else EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except OSError as exc:
        sys.stderr.write(f"error: the RAG API at {url} stopped answering: {exc}\n")
        return EXIT_ERROR
    return _print(args, payload, streamer.text)


class _Streamer:
    """`--stream`: tokens as they come (stdout, or stderr under --json), what the model is doing on stderr."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.on = bool(args.stream)
        self.out = sys.stderr if args.json else sys.stdout
        self.text = ""

    def emit(self, event: str, data: dict[str, Any]) -> None:
        if not self.on:
            return
        if event == "token":
            self.text += data.get("text", "")
            self.out.write(data.get("text", ""))
            self.out.flush()
        elif event == "generation_started" and data.get("estimated_s") is not None:
            sys.stderr.write(f"reading {data.get('passages', 0)} passages (~{data['estimated_s']:.0f} s)\n")
        elif event == "backend_fallback":
            self.text = ""
            self.out.write(f"\n({data.get('from')} failed: {data.get('error')}; trying the next backend)\n")


def _print(args: argparse.Namespace, payload: dict[str, Any], streamed: str = "") -> int:
    if args.json:
        if streamed:
            sys.stderr.write("\n")
        sys.stdout.write(json.dumps(payload) + "\n")
        return EXIT_OK
    if not streamed:
        sys.stdout.write(payload["answer"] + "\n\n")
    elif payload["answer_source"] == "llm" or streamed.strip() == payload["answer"].strip():
        sys.stdout.write("\n\n")
    else:  # the check changed what was streamed: say so, and print what stands
        sys.stdout.write(f"\n\nChecked answer ({payload['answer_source']}):\n{payload['answer']}\n\n")
    if payload["answer_source"] == "refusal" and payload.get("refusal_reason"):  # why, as the web app says
        sys.stdout.write(f"Why: {payload['refusal_reason']}\n")
    for c in payload["citations"]:
        pages = f"p. {c['page_start']}" + (f"-{c['page_end']}" if c["page_end"] != c["page_start"] else "")
        sys.stdout.write(f"[{c['n']}] {c['document_name']}, {pages}: \"{' '.join(c['quote'].split())[:200]}\"\n")
    sys.stdout.write(f"({payload['answer_source']} via {payload['backend']}; "
                     f"{payload['timings_ms'].get('total_ms', 0):.0f} ms)\n")
    return EXIT_OK
