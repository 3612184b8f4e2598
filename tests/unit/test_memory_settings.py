"""The process-wide memory settings: one shared LanceDB cache per size, and glibc's fixed mmap threshold."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from rag_system.config import ConfigError, load_settings
from rag_system.indexing.allocator import _libc
from rag_system.indexing.connection import cache_session, connect


def test_connections_with_the_same_sizes_share_one_cache(tmp_path: Path) -> None:
    sizes, other = (77, 11), (78, 11)
    writer = connect(str(tmp_path), cache_mb=sizes)
    table = writer.create_table("t", data=pa.table({"v": np.arange(2000), "s": [str(i) for i in range(2000)]}))
    table.create_scalar_index("v")
    before, apart = cache_session(*sizes).size_bytes, cache_session(*other).size_bytes
    reader = connect(str(tmp_path), cache_mb=sizes)
    assert reader.open_table("t").search().where("v = 5").to_list()[0]["s"] == "5"
    assert cache_session(*sizes).size_bytes > before  # the reader's lookup filled the shared cache
    assert cache_session(*other).size_bytes == apart  # another size is another cache
    assert cache_session(*sizes) is cache_session(*sizes)


def test_negative_sizes_are_refused() -> None:
    for name in ("LANCEDB_INDEX_CACHE_MB", "LANCEDB_METADATA_CACHE_MB", "DOCENT_MMAP_THRESHOLD_KB"):
        with pytest.raises(ConfigError):
            load_settings(environ={name: "-1"}, dotenv_path=None)


_PROBE = textwrap.dedent("""
    import ctypes, sys
    from rag_system.indexing.allocator import fix_mmap_threshold

    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = Info
    if sys.argv[1] == "fixed":
        assert fix_mmap_threshold(1024)
    libc.free(libc.malloc(16 << 20))  # glibc raises its dynamic threshold to the size freed (up to 32 MiB)
    held = libc.malloc(2 << 20)
    print(libc.mallinfo2().hblkhd >= 2 << 20)
""")


@pytest.mark.skipif(_libc() is None, reason="glibc only")
@pytest.mark.parametrize("mode, mapped", [("glibc", "False"), ("fixed", "True")])
def test_a_fixed_threshold_keeps_large_buffers_mapped(mode: str, mapped: str) -> None:
    # In a child process: the threshold is process-wide and glibc's own rule depends on what was freed before.
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == mapped


def test_only_a_process_that_serves_questions_fixes_the_threshold(tmp_path: Path) -> None:
    probe = textwrap.dedent(f"""
        import sys
        from rag_system.config import load_settings
        from rag_system.indexing import allocator
        from rag_system.indexing.connection import open_store

        settings = load_settings(environ={{"DOCENT_DATA_DIR": {str(tmp_path)!r}}}, dotenv_path=None)
        open_store(settings)
        print(allocator._applied)
        open_store(settings, replica=True)
        print(allocator._applied)
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    expected = ["None", "1024"] if _libc() is not None else ["None", "None"]
    assert out.stdout.split() == expected
