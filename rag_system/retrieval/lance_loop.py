"""Hand a coroutine to LanceDB's own event loop: the one place the retrieval code does so.

Why its loop: the asynchronous table handles (`legs.handle`) belong to the
loop thread LanceDB's synchronous API already runs; a coroutine run on any
other loop could not await them. The legs and the row maps' scans use this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def submit(coroutine: Coroutine[Any, Any, T]) -> Future[T]:
    """`coroutine` started on LanceDB's loop; wait on the future from any other thread (never that loop's)."""
    from lancedb.background_loop import LOOP

    return asyncio.run_coroutine_threadsafe(coroutine, LOOP.loop)
