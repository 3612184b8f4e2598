#!/usr/bin/env python3
"""Docent launcher: start, check, follow and stop all services. See Documentation/operations.md."""

import sys

from launcher.cli import main

if __name__ == "__main__":
    sys.exit(main())
