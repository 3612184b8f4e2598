"""The build's stages: files prepared ahead in order and bounded, writes behind in order, the switch interval."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field

import pytest

from rag_system.indexing.build_stages import Ahead, Behind, short_switch_interval


@dataclass
class Item:
    name: int
    chunks: list[int] = field(default_factory=list)


def _wait_for(predicate, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_groups_keep_the_order_and_reach_the_group_size() -> None:
    items = [Item(i, [0] * (1 + i % 3)) for i in range(20)]  # 1, 2 or 3 chunks each
    with Ahead(items, lambda item: item, ahead_chunks=10) as ahead:
        groups = list(ahead.groups(5))
    assert [i.name for g in groups for i in g] == list(range(20))
    assert all(sum(len(i.chunks) for i in g) >= 5 for g in groups[:-1])
    assert all(sum(len(i.chunks) for i in g[:-1]) < 5 for g in groups)  # no more files than needed


def test_files_are_prepared_ahead_while_a_group_is_consumed_but_no_further_than_the_bound() -> None:
    prepared: list[int] = []
    items = [Item(i, [0, 0]) for i in range(30)]

    def prepare(item: Item) -> Item:
        prepared.append(item.name)
        return item

    with Ahead(items, prepare, ahead_chunks=8) as ahead:
        groups = ahead.groups(4)
        first = next(groups)  # 2 files; the consumer now holds them, as the embedder would
        assert [i.name for i in first] == [0, 1]
        # Without asking for more, the next 4 files (8 chunks) get prepared, and then it stops.
        assert _wait_for(lambda: len(prepared) == 6)
        time.sleep(0.2)
        assert len(prepared) == 6
        rest = [i.name for g in groups for i in g]
    assert rest == list(range(2, 30))


def test_an_idle_consumer_gets_what_is_ready_once_a_batch_is_rather_than_waiting_for_a_whole_group() -> None:
    release = threading.Event()

    def prepare(item: Item) -> Item:
        if item.name >= 3:  # the first three files are quick, then conversion stalls
            release.wait(5)
        return item

    items = [Item(i, [0, 0]) for i in range(6)]
    with Ahead(items, prepare, ahead_chunks=100) as ahead:
        groups = ahead.groups(8, start_chunks=4)
        first = next(groups)  # 4 chunks were ready: taken without waiting for 8
        assert [i.name for i in first] in ([0, 1], [0, 1, 2])
        release.set()
        rest = [i.name for g in groups for i in g]
    assert [i.name for i in first] + rest == list(range(6))


def test_many_tiny_files_are_grouped_by_the_file_bound_without_waiting_forever() -> None:
    items = [Item(i, []) for i in range(10)]  # files with no chunks (failed conversions)
    with Ahead(items, lambda item: item, ahead_chunks=8, ahead_files=3) as ahead:
        groups = list(ahead.groups(4))
    assert [i.name for g in groups for i in g] == list(range(10))
    assert max(len(g) for g in groups) <= 3


def test_an_error_while_preparing_reaches_the_consumer() -> None:
    def prepare(item: Item) -> Item:
        if item.name == 3:
            raise RuntimeError("converter crashed")
        return item

    with Ahead([Item(i, [0]) for i in range(6)], prepare) as ahead:
        with pytest.raises(RuntimeError, match="converter crashed"):
            list(ahead.groups(1))


def test_leaving_early_stops_the_preparing_thread() -> None:
    prepared: list[int] = []
    items = [Item(i, [0]) for i in range(100)]
    with Ahead(items, lambda item: (prepared.append(item.name), item)[1], ahead_chunks=4) as ahead:
        next(ahead.groups(1))
    count = len(prepared)
    time.sleep(0.1)
    assert len(prepared) == count < 100


def test_writes_run_in_order_on_another_thread_one_at_a_time() -> None:
    done: list[int] = []
    running = threading.Semaphore(1)
    threads: set[str] = set()

    def write(n: int) -> None:
        assert running.acquire(blocking=False), "two writes at once"
        threads.add(threading.current_thread().name)
        time.sleep(0.01)
        done.append(n)
        running.release()

    behind = Behind()
    for n in range(5):
        behind.submit(write, n)
    behind.close()
    assert done == [0, 1, 2, 3, 4]
    assert threads and threading.current_thread().name not in threads


def test_a_failed_write_surfaces_at_the_next_submit() -> None:
    def fail() -> None:
        raise OSError("disk full")

    behind = Behind()
    behind.submit(fail)
    with pytest.raises(OSError, match="disk full"):
        behind.submit(lambda: None)
    behind.close()


def test_the_switch_interval_is_short_while_builds_run_and_restored_after_the_last() -> None:
    before = sys.getswitchinterval()
    with short_switch_interval(0.0005):
        assert sys.getswitchinterval() == pytest.approx(0.0005)
        with short_switch_interval(0.0005):
            pass
        assert sys.getswitchinterval() == pytest.approx(0.0005)  # the outer build still runs
    assert sys.getswitchinterval() == pytest.approx(before)
