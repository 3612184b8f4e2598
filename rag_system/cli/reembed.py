"""`python -m rag_system reembed --index X --embedder Y`: move an index to another embedder in place.

Progress on stderr as a build's (the same bar), one JSON summary on stdout
with `--json`. Refused while a RAG API serves the same store: the API alone
writes LanceDB, and its open handles would go on querying with the old model.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rag_system.cli.progress import ProgressReporter
from rag_system.cli.running_api import find_running_api

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def run_reembed(args: argparse.Namespace, settings: Any) -> int:
    from rag_system.embedding.base import EmbedderLoadError
    from rag_system.embedding.registry import UnknownEmbedderError, check_name, embedder_named, english_default
    from rag_system.indexing.reembed import reembed_index
    from rag_system.indexing.store import IndexNotFoundError, InvalidIndexNameError

    try:
        name = check_name(args.embedder)
    except UnknownEmbedderError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    api = find_running_api(settings)
    if api is not None:
        sys.stderr.write(f"error: the RAG API at {api.url} serves this store; stop it before re-embedding "
                         "an index (it alone writes the store, and would keep querying with the old model)\n")
        return EXIT_ERROR
    reporter = ProgressReporter(sys.stderr)
    try:
        embedder = embedder_named(settings, english_default(settings) if name == "auto" else name)
        summary = reembed_index(args.index, settings, embedder, on_event=reporter.handle)
    except (IndexNotFoundError, InvalidIndexNameError) as exc:
        reporter.close()
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except EmbedderLoadError as exc:
        reporter.close()
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    reporter.close()
    result = summary.to_json()
    if args.json:
        sys.stdout.write(json.dumps(result) + "\n")
        return EXIT_OK
    if not result["switched"]:
        sys.stdout.write(f"index {args.index} already uses {result['model']}\n")
        return EXIT_OK
    sys.stdout.write(f"index {args.index}: {result['previous_model']} -> {result['model']}; "
                     f"{result['documents']} documents ({result['chunks']} chunks, {result['windows']} windows) "
                     f"embedded, {result['documents_kept']} kept from an interrupted run, "
                     f"in {result['seconds']:.1f}s\n")
    if result["windows_not_recorded"]:
        sys.stdout.write(f"  {result['windows_not_recorded']} vector-only windows were written before their "
                         "texts were recorded and are left out (their chunks keep their full-text windows); "
                         "rebuild the index from its files to restore them\n")
    return EXIT_OK
