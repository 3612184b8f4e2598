"""`python -m rag_system` entry point."""

import sys

from rag_system.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
