"""What tests/ and eval/ share: real service processes and clients, stacks, fixture documents, fault
scenarios and the pure-Python references of the native functions; it imports neither of them."""

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

#: The shared evaluation corpora (read only, never copied into the repository): `DOCENT_EVAL_DATA`,
#: else `../shared/eval-data` beside the checkout, where the workplace keeps them.
EVAL_DATA = Path(os.environ.get("DOCENT_EVAL_DATA") or REPO_ROOT.parent / "shared" / "eval-data")
