"""The deployment layer runs only through `make test-deploy` (root, Podman, ~25 GB of disk, ~30 minutes).

A plain `pytest` (whose testpaths include tests/) skips it, saying how to run it.
"""

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("DOCENT_TEST_DEPLOY") == "1":
        return
    skip = pytest.mark.skip(reason="builds and runs the images: `make test-deploy` (sets DOCENT_TEST_DEPLOY=1)")
    for item in items:
        if "tests/deploy/" in str(item.fspath):
            item.add_marker(skip)
