"""`python -m rag_system.main index|chat|api …`: localGPT's entry point, kept as an alias.

localGPT's users (and its scripts) start the RAG engine as `python -m rag_system.main api` and
index or chat with `python -m rag_system.main index|chat …`. Those are the same commands as
`python -m rag_system …` (rag_system/cli/main.py), so this module only hands its arguments over.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from rag_system.cli.main import main as cli_main

    return cli_main(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
