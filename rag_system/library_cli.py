"""CLI commands about the library as a whole: which embedders exist (`embedders`).

Kept apart from `cli.py` so the index/retrieve commands stay small; output
goes to stdout (`--json` for scripts), errors to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

LIBRARY_COMMANDS = ("embedders",)
EXIT_OK = 0


def add_library_commands(sub: Any) -> None:
    emb = sub.add_parser("embedders", help="list the embedders an index can be built with")
    emb.add_argument("--json", action="store_true", help="print the list as JSON")


def run_library_command(args: argparse.Namespace, settings: Any) -> int:
    if args.command == "embedders":
        return _embedders(args, settings)
    return 2


def _embedders(args: argparse.Namespace, settings: Any) -> int:
    from rag_system.indexing.embedders import listing

    rows = listing(settings)
    if args.json:
        sys.stdout.write(json.dumps({"embedders": rows}) + "\n")
        return EXIT_OK
    for row in rows:
        marks = ("default" if row["default"] else "") + ("" if row["installed"] else " not installed")
        sys.stdout.write(f"{row['name']:<10} {row['model']}  {row['dimension']}-d, {row['languages']}"
                         f"{'  [' + marks.strip() + ']' if marks.strip() else ''}\n    {row['description']}\n")
    return EXIT_OK
