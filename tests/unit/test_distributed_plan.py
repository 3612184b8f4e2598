"""The distributed build's pure helpers: how `--workers` is read and how files are split into tasks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_system.indexing.distributed import Workers, parse_workers, split_work


def test_workers_spec_local_and_cluster() -> None:
    assert parse_workers("local:4") == Workers(cpus=4)
    assert parse_workers(" local:1 ") == Workers(cpus=1)
    assert parse_workers("ray://head:10001") == Workers(address="ray://head:10001")


@pytest.mark.parametrize("spec", ["local:0", "local:", "local:two", "4", "head:6379", "ray://", "http://x:1"])
def test_workers_spec_refused_with_the_forms_named(spec: str) -> None:
    with pytest.raises(ValueError, match="local:N"):
        parse_workers(spec)


def test_split_keeps_order_and_balances_bytes() -> None:
    assert split_work([], 4) == []
    assert split_work([5], 4) == [range(0, 1)]
    assert split_work([10, 10, 10, 10], 2) == [range(0, 2), range(2, 4)]
    # One large file takes a task of its own; the small ones share the rest.
    assert split_work([100, 1, 1, 1, 1], 2) == [range(0, 1), range(1, 5)]


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60), st.integers(min_value=1, max_value=20))
def test_split_covers_every_item_once_in_order(sizes: list[int], parts: int) -> None:
    ranges = split_work(sizes, parts)
    assert [i for r in ranges for i in r] == list(range(len(sizes)))
    assert all(len(r) for r in ranges)
    assert len(ranges) == min(parts, len(sizes))  # every worker gets work when there is enough
