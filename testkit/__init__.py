"""What tests/ and eval/ share: real service processes and clients, stacks, fixture documents, fault
scenarios and the pure-Python references of the native functions; it imports neither of them."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
