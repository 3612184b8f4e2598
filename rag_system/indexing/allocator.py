"""How the process's C allocator (glibc malloc) keeps large buffers: mapped, not pooled.

Why: LanceDB's reads (Rust, the system allocator), PyTorch's activations and
NumPy arrays all take their buffers of a megabyte and more from glibc. glibc
maps such a buffer on its own only above a threshold that it raises, up to 32
MiB, each time one is freed; after the first few, every buffer of a few MiB
comes from one of up to 16 arenas (8 per core) and what it frees stays there.
A RAG API answering 16 clients at a million chunks, with LanceDB's I/O
threads coming and going, grew to 3.0 GB that way and kept growing; with the
threshold fixed at 1 MiB, buffers above it are unmapped when freed, and the
same benchmark peaked at 2.5 GB (Documentation/evaluation.md, "A million
chunks"). Fixing it also stops the raising. The RAG API does it
when it opens its query connection (`connection.open_store`); elsewhere than
glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading

log = logging.getLogger(__name__)

#: glibc's mallopt parameter number for the mmap threshold (malloc.h).
M_MMAP_THRESHOLD = -3

_applied: int | None = None
_lock = threading.Lock()


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
        return libc
    except (OSError, AttributeError):
        return None


def fix_mmap_threshold(threshold_kb: int) -> bool:
    """Map every allocation of `threshold_kb` KiB or more on its own, once per process (0 = glibc's own rule).

    True when glibc took the setting (now or earlier in the process).
    """
    global _applied
    if threshold_kb <= 0:
        return False
    with _lock:
        if _applied == threshold_kb:
            return True
        libc = _libc()
        if libc is None or not libc.mallopt(M_MMAP_THRESHOLD, threshold_kb * 1024):
            log.info("malloc mmap threshold not set (not glibc, or refused)")
            return False
        _applied = threshold_kb
        return True
