"""CLI commands about the library as a whole: which embedders exist (`embedders`), synced folders (`sync`).

Kept apart from `main.py` so the index/retrieve commands stay small; output
goes to stdout (`--json` for scripts), errors to stderr.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
from pathlib import Path
from typing import Any

LIBRARY_COMMANDS = ("embedders", "sync")
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _folder(text: str) -> Path:
    """A folder to bind; an `s3://` prefix is refused by name (as a Path it would read "s3:/…", a folder
    nobody has): there is nothing to watch there, and `index` brings an index in line with it."""
    if text.startswith("s3://"):
        raise argparse.ArgumentTypeError(
            f"{text}: sync binds local folders; index an s3:// prefix with "
            f"`python -m rag_system index {text} --index NAME` (run it again to bring the index up to date)")
    return Path(text)


def add_library_commands(sub: Any) -> None:
    emb = sub.add_parser("embedders", help="list the embedders an index can be built with")
    emb.add_argument("--json", action="store_true", help="print the list as JSON")
    syn = sub.add_parser("sync", help="bind folders to an index and bring it up to date (--watch: keep it so)")
    syn.add_argument("folders", nargs="+", type=_folder, help="folders to keep the index in line with")
    syn.add_argument("--index", required=True, help="index name")
    syn.add_argument("--watch", action="store_true", help="keep watching and syncing until Ctrl-C")
    syn.add_argument("--embedder", help="the embedder of a new index (an existing index keeps its own)")
    syn.add_argument("--json", action="store_true", help="print one JSON line per sync")


def run_library_command(args: argparse.Namespace, settings: Any) -> int:
    if args.command == "embedders":
        return _embedders(args, settings)
    if args.command == "sync":
        return _sync(args, settings)
    return EXIT_USAGE


def _embedders(args: argparse.Namespace, settings: Any) -> int:
    from rag_system.embedding.registry import listing

    rows = listing(settings)
    if args.json:
        sys.stdout.write(json.dumps({"embedders": rows}) + "\n")
        return EXIT_OK
    for row in rows:
        marks = ("default" if row["default"] else "") + ("" if row["installed"] else " not installed")
        sys.stdout.write(f"{row['name']:<10} {row['model']}  {row['dimension']}-d, {row['languages']}"
                         f"{'  [' + marks.strip() + ']' if marks.strip() else ''}\n    {row['description']}\n")
    return EXIT_OK


def _sync(args: argparse.Namespace, settings: Any) -> int:
    """Record the folders as the index's bound folders, sync once, and with --watch on every change."""
    from rag_system.embedding.base import EmbedderLoadError
    from rag_system.indexing.store import EmbedderMismatchError, InvalidIndexNameError, open_store, validate_index_name
    from rag_system.indexing.sync import sync_index
    from rag_system.indexing.sync_state import SyncStore
    from rag_system.indexing.sync_watch import FolderWatcher

    folders = [f.expanduser().resolve() for f in args.folders]
    missing = [str(f) for f in folders if not f.is_dir()]
    from rag_system.embedding.registry import UnknownEmbedderError, check_name

    try:
        validate_index_name(args.index)
        if args.embedder:
            check_name(args.embedder)
    except (InvalidIndexNameError, UnknownEmbedderError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    if missing:
        sys.stderr.write(f"error: not a folder: {', '.join(missing)}\n")
        return EXIT_USAGE
    store = SyncStore(open_store(settings), args.index)
    state = store.load()
    state.folders = sorted({*state.folders, *(str(f) for f in folders)})
    state.embedder = state.embedder or args.embedder
    store.save(state)
    # Every bound folder, not only the ones named now: a sync builds the index from all of them, so a folder
    # bound earlier (here or through the API) keeps its files in the index.
    folders = [Path(f) for f in state.folders]
    due: queue.Queue[str] = queue.Queue()
    watcher = FolderWatcher(lambda index, reason: due.put(reason), debounce_s=settings.sync_debounce_s,
                            rescan_s=settings.sync_rescan_s)
    reason = "cli"
    try:
        if args.watch:
            _stop_on_sigterm()
            watcher.start()
            for folder in folders:
                watcher.bind(args.index, folder)
            sys.stderr.write(f"watching {', '.join(map(str, folders))} for index {args.index} (Ctrl-C stops)\n")
        while True:
            run = sync_index(args.index, folders, settings, trigger=reason, embedder_name=state.embedder)
            _report(args, run, folders)
            if run.held and args.watch:
                watcher.mark(args.index)
            if not args.watch:
                return EXIT_OK
            reason = due.get()
    except KeyboardInterrupt:
        sys.stderr.write("stopped\n")
        return EXIT_INTERRUPTED if not args.watch else EXIT_OK
    except (EmbedderMismatchError, EmbedderLoadError, FileNotFoundError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    finally:
        if args.watch:
            watcher.stop()


def _stop_on_sigterm() -> None:
    """SIGTERM stops a watching CLI the way Ctrl-C does: a service manager or `docker stop` sends it,
    and a watcher started in the background (`nohup ... &`) inherits SIGINT ignored, so Ctrl-C alone
    would leave it no clean way to stop."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def _report(args: argparse.Namespace, run: Any, folders: list[Path]) -> None:
    from dataclasses import asdict

    if args.json:
        sys.stdout.write(json.dumps({"index": args.index, "folders": [str(f) for f in folders], **asdict(run),
                                     "files_changed": run.files_changed}) + "\n")
    else:
        held = f", {len(run.held)} still being written (next sync)" if run.held else ""
        sys.stdout.write(f"synced {args.index} ({run.trigger}): {run.added} added, {run.updated} updated, "
                         f"{run.removed} removed, {len(run.failed)} failed{held} in {run.seconds:.1f}s\n")
        for failure in run.failed:
            sys.stdout.write(f"  failed: {failure['path']}: {failure['reason']}\n")
    sys.stdout.flush()
