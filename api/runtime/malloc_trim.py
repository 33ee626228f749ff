"""Hands the C allocator's free pages back to the operating system, every
``PROOFGATE_MALLOC_TRIM_MS`` (docs/design.md, Memory growth).

Under the mixed soak the Python heap (tracemalloc) and SQLite's memory stay
level while RSS climbs: glibc's ``malloc`` keeps what is freed in its arenas,
and the free space between live blocks grows as requests, WebSocket frames
and rows of every size come and go on the loop's, the SQLite writer's and
the checkpoint's threads. glibc returns only the top of the main heap by
itself; ``malloc_trim(0)`` releases every whole free page of every arena.
A page it releases and ``malloc`` reuses costs a page fault, microseconds
each period, against memory that otherwise only grows. Elsewhere than glibc
(musl, macOS) there is no ``malloc_trim`` and nothing runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import functools
from collections.abc import AsyncIterator, Callable
from datetime import timedelta

from api.runtime.periodic import every

__all__ = ["malloc_trim", "trimming"]


def malloc_trim() -> Callable[[], bool] | None:
    """glibc's ``malloc_trim(0)``: True if it released memory; None without glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int

    def trimmed() -> bool:
        return bool(trim(0))

    return trimmed


@contextlib.asynccontextmanager
async def trimming(
    interval: timedelta, trim: Callable[[], bool] | None = None
) -> AsyncIterator[None]:
    """Trims every ``interval`` (zero: never) while the block runs; ``trim``
    defaults to ``malloc_trim()``."""
    trim = trim or (malloc_trim() if interval > timedelta(0) else None)
    if trim is None or interval <= timedelta(0):
        yield
        return
    # Off the loop: it walks every arena under the arena's lock.
    duty = functools.partial(asyncio.to_thread, trim)
    async with every(interval.total_seconds(), duty, "Returning freed memory to the system failed"):
        yield
