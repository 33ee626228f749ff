"""PROOFGATE_MALLOC_TRIM_MS: freed heap pages go back to the system."""

from __future__ import annotations

import asyncio
import ctypes
from datetime import timedelta
from pathlib import Path

import pytest
from _asgi import environment

from api.runtime.malloc_trim import malloc_trim, trimming
from api.settings.gateway import Settings

BLOCK = 16 * 1024
"""Below glibc's mmap threshold (128 KiB): served from the heap, kept when freed."""
BLOCKS = 2048
KEPT_EVERY = 64


def _rss_anon_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no RssAnon")


@pytest.fixture
def trim() -> object:
    trim = malloc_trim()
    if trim is None:
        pytest.skip("no glibc malloc_trim here")
    return trim


def test_trimming_hands_back_the_pages_free_between_live_blocks(trim: object) -> None:
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    for block in blocks:
        ctypes.memset(block, 1, BLOCK)
    touched = _rss_anon_mib()
    # One block in KEPT_EVERY (the last among them) stays: glibc's own
    # trimming only shortens the heap's top, so the freed space stays resident.
    kept = [b for i, b in enumerate(blocks) if i % KEPT_EVERY == KEPT_EVERY - 1]
    for i, block in enumerate(blocks):
        if i % KEPT_EVERY != KEPT_EVERY - 1:
            libc.free(block)
    freed = _rss_anon_mib()
    try:
        assert trim()  # type: ignore[operator]
        trimmed = _rss_anon_mib()
    finally:
        for block in kept:
            libc.free(block)
    held = BLOCK * BLOCKS / 2**20
    assert freed > touched - held / 4, "without the trim the freed pages stay resident"
    assert trimmed < freed - held / 2


async def test_trimming_runs_every_interval_and_never_when_off() -> None:
    calls: list[int] = []
    thrice = asyncio.Event()

    def counting() -> bool:
        calls.append(1)
        if len(calls) == 3:
            thrice.set()
        return True

    async with trimming(timedelta(0), counting):
        await asyncio.sleep(0.05)
    assert calls == []
    async with trimming(timedelta(milliseconds=5), counting):
        await asyncio.wait_for(thrice.wait(), 10)
    assert len(calls) >= 3


def test_the_setting_defaults_to_thirty_seconds_and_turns_off(tmp_path: Path) -> None:
    assert Settings.from_env(environment(tmp_path)).malloc_trim_ms == 30_000
    off = environment(tmp_path, PROOFGATE_MALLOC_TRIM_MS="off")
    assert Settings.from_env(off).malloc_trim_ms == 0
