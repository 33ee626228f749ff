"""What ``/debug/memory`` reads of the allocators: free space that
fragmentation keeps told apart from space in use, and pymalloc's arenas."""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from api.observability.allocators import (
    MallocArena,
    allocator_lines,
    malloc_arenas,
    pymalloc_arenas,
)

BLOCK = 1024
BLOCKS = 4096
"""4 MiB of 1 KiB blocks: below the mmap threshold, from the main heap."""


FRESH_HEAP = "PROOFGATE_TEST_FRESH_HEAP"


def in_a_fresh_heap(test: Callable[..., None]) -> Callable[..., None]:
    """Runs ``test`` in an interpreter of its own: in a suite worker the
    heap already holds free chunks and pymalloc arenas with room, which the
    test's blocks fill instead of adding any (both counts failed so)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        if os.environ.get(FRESH_HEAP) == "1":
            return test(*args, **kwargs)
        child = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-n",
                "0",
                "-p",
                "no:cacheprovider",
                f"{__file__}::{test.__name__}",
            ],
            env={**os.environ, FRESH_HEAP: "1"},
            cwd=Path(__file__).parents[3],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert child.returncode == 0, child.stdout[-4000:]
        return None

    return run


@pytest.fixture
def libc() -> ctypes.CDLL:
    if sys.platform != "linux" or malloc_arenas() is None:
        pytest.skip("glibc's malloc only")
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


def _main() -> MallocArena:
    arenas = malloc_arenas()
    assert arenas
    return arenas[0]


@in_a_fresh_heap
def test_holes_between_live_blocks_count_as_free_under_a_page(libc: ctypes.CDLL) -> None:
    before = _main()
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    for block in blocks[::2]:
        libc.free(block)
    # A malloc of another size sorts the freed chunks into their bins.
    libc.free(libc.malloc(3 * BLOCK))
    holes = _main()
    for block in blocks[1::2]:
        libc.free(block)
    libc.free(libc.malloc(3 * BLOCK))
    after = _main()
    half = BLOCKS // 2 * BLOCK
    # Every other block freed: ~2 MiB free, all of it in 1 KiB holes.
    assert holes.free_under_page - before.free_under_page > half * 0.9
    assert holes.free_chunks - before.free_chunks > BLOCKS // 2 * 0.9
    # The rest freed: the holes join into whole pages, none left under a page.
    assert holes.free_under_page - after.free_under_page > half * 0.9


@in_a_fresh_heap
def test_pymalloc_arenas_grow_with_small_objects_and_go_back_when_empty() -> None:
    before = pymalloc_arenas()
    if before is None:
        pytest.skip("a Python without pymalloc's report")
    held = [bytearray(8) for _ in range(200_000)]  # small objects: pymalloc's
    grown = pymalloc_arenas()
    assert grown is not None
    assert grown.arenas - before.arenas >= 5
    assert grown.in_use - before.in_use > 5 * 2**20
    del held
    emptied = pymalloc_arenas()
    assert emptied is not None
    assert emptied.reclaimed - grown.reclaimed >= 5
    assert emptied.arenas < grown.arenas


def test_the_report_lines_name_each_arena(libc: ctypes.CDLL) -> None:
    lines = allocator_lines()
    arenas = malloc_arenas()
    assert arenas is not None
    assert lines[0].startswith(f"# malloc {len(arenas)} arenas")
    assert [line.split(":")[0] for line in lines[1 : 1 + len(arenas)]] == [
        f"#   arena {index}" for index in range(len(arenas))
    ]
    assert lines[-1].startswith("# pymalloc ")
