"""The harness's own tests."""

from testkit import REPO_ROOT

#: The shared, read-only evaluation data beside the checkout (`--data-dir` of every harness).
EVAL_DATA = REPO_ROOT.parent / "shared" / "eval-data"
