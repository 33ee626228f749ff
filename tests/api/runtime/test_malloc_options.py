"""PROOFGATE_MALLOC_ARENA_MAX and PROOFGATE_MALLOC_MMAP_THRESHOLD_BYTES: glibc's
options, set in a fresh process (they are process-wide), and seen through
``/debug/memory``'s own reading of the arenas."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _asgi import environment

from api.runtime.malloc_options import M_ARENA_MAX, M_MMAP_THRESHOLD, set_malloc_options
from api.settings.gateway import Settings
from domain.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent(
    """
    import ctypes, json, sys, threading
    from api.observability.allocators import malloc_arenas
    from api.runtime.malloc_options import set_malloc_options

    arena_max, threshold = int(sys.argv[1]), int(sys.argv[2])
    taken = set_malloc_options(arena_max, threshold)
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    # Four threads alive at once, each allocating: glibc gives each its own
    # arena up to the limit.
    ready = threading.Barrier(5)
    def allocate():
        block = libc.malloc(1024)
        ready.wait()
        ready.wait()
        libc.free(block)
    threads = [threading.Thread(target=allocate) for _ in range(4)]
    for thread in threads:
        thread.start()
    ready.wait()
    arenas = len(malloc_arenas())
    ready.wait()
    for thread in threads:
        thread.join()

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
            "fsmblks", "uordblks", "fordblks", "keepcost")]
    libc.mallinfo2.restype = MallInfo2
    # A 1 MiB block is mapped alone; freed, glibc's own threshold rises to
    # 1 MiB, so the next 256 KiB blocks come from the heap, unless fixed.
    libc.free(libc.malloc(2**20))
    before = libc.mallinfo2().hblks
    blocks = [libc.malloc(256 * 1024) for _ in range(4)]
    mapped = libc.mallinfo2().hblks - before
    for block in blocks:
        libc.free(block)
    print(json.dumps({"arenas": arenas, "mapped": mapped, "taken": list(taken.values())}))
    """
)


def _child(arena_max: int, threshold: int) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(arena_max), str(threshold)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        # glibc's own variables would set what the test sets.
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    outcome: dict[str, object] = json.loads(result.stdout)
    return outcome


@pytest.fixture(autouse=True)
def _glibc() -> None:
    if sys.platform != "linux" or _child(0, 0)["arenas"] is None:
        pytest.skip("glibc's malloc only")


def test_the_arena_cap_holds_threads_to_that_many_arenas() -> None:
    assert _child(0, 0) == {"arenas": 5, "mapped": 0, "taken": []}
    assert _child(2, 0)["taken"] == [True]
    assert _child(2, 0)["arenas"] == 2
    assert _child(1, 0)["arenas"] == 1


def test_a_fixed_threshold_keeps_large_blocks_mapped_after_a_larger_one_was_freed() -> None:
    assert _child(0, 0)["mapped"] == 0
    assert _child(0, 128 * 1024)["mapped"] == 4


def test_off_sets_nothing() -> None:
    asked: list[tuple[int, int]] = []

    def option(parameter: int, value: int) -> bool:
        asked.append((parameter, value))
        return True

    assert set_malloc_options(0, 0, option) == {}
    assert set_malloc_options(2, 4096, option) == {M_ARENA_MAX: True, M_MMAP_THRESHOLD: True}
    assert asked == [(M_ARENA_MAX, 2), (M_MMAP_THRESHOLD, 4096)]


def test_the_settings_default_to_two_arenas_and_128_kib(tmp_path: Path) -> None:
    settings = Settings.from_env(environment(tmp_path))
    assert (settings.malloc_arena_max, settings.malloc_mmap_threshold_bytes) == (2, 131072)
    off = environment(
        tmp_path, PROOFGATE_MALLOC_ARENA_MAX="off", PROOFGATE_MALLOC_MMAP_THRESHOLD_BYTES="off"
    )
    settings = Settings.from_env(off)
    assert (settings.malloc_arena_max, settings.malloc_mmap_threshold_bytes) == (0, 0)
    with pytest.raises(ConfigurationError, match="PROOFGATE_MALLOC_ARENA_MAX"):
        Settings.from_env(environment(tmp_path, PROOFGATE_MALLOC_ARENA_MAX="two"))
