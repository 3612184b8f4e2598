"""A distributed build (issue 46) onto the S3 store: the same index as a single-process build onto it.

A local Ray cluster of two workers builds onto a SeaweedFS prefix, the single process onto another;
both must hold the same chunk ids and rows in all three tables and the same manifest, first from
nothing and again after one file changed. The workers reach the store with the storage options the
driver sends in the task spec (`TaskSpec.storage_options`): the cluster starts without the AWS_*
endpoint and credential variables in its environment (the test's settings hold them), so nothing else
could carry them to the workers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rag_system.indexing.builder import build_index
from testkit.docs import make_markdown, make_pdf
from tests.integration.api_support import write_docs
from tests.scale.conftest import s3_settings

ray = pytest.importorskip("ray", reason="ray is not installed (requirements.txt)")
pytest.importorskip("lance", reason="pylance is not installed (requirements.txt)")

from rag_system.indexing.distributed import build_index_distributed  # noqa: E402
from tests.integration.test_distributed_build import _assert_same_rows, _manifest, _rows  # noqa: E402


def _assert_same(single: Any, spread: Any, index: str) -> None:
    a = _rows(single, index)
    assert a["chunks"], a.keys()
    _assert_same_rows(a, _rows(spread, index))
    assert _manifest(single, index) == _manifest(spread, index)


def test_distributed_build_onto_s3_equals_the_single_process_build(s3: Any, s3_uri: str, tmp_path: Path,
                                                                   cluster: None) -> None:
    docs = write_docs(tmp_path / "docs")
    make_pdf(docs / "atlas.pdf")
    make_markdown(docs / "guide.md")
    # fp32: with bfloat16 a vector depends on the batch it was embedded in (tests/integration/test_distributed_build.py)
    single = s3_settings(s3, f"{s3_uri}-single", tmp_path / "single", EMBEDDING_PRECISION="fp32")
    spread = s3_settings(s3, f"{s3_uri}-spread", tmp_path / "spread", EMBEDDING_PRECISION="fp32")
    assert spread.storage_options["aws_access_key_id"]  # the options the tasks carry

    alone = build_index([docs], "kb", single)
    events: list[Any] = []
    summary = build_index_distributed([docs], "kb", spread, on_event=events.append)
    assert (summary.added, summary.failed, summary.chunks) == (alone.added, [], alone.chunks) and alone.added == 5
    committed = [e.data for e in events if e.type == "build_committed"]
    assert len(committed) == 1 and committed[0]["fragments"]["chunks"] >= 1
    _assert_same(single, spread, "kb")
    assert not (tmp_path / "spread" / "lancedb").exists()  # everything went to the store

    (docs / "garden.md").write_text("# Garden\n\nQuokkas are small marsupials that live on Rottnest Island.\n")
    build_index([docs], "kb", single)
    again = build_index_distributed([docs], "kb", spread)
    assert (again.added, again.updated, again.unchanged, again.failed) == (0, 1, 4, [])
    _assert_same(single, spread, "kb")
