"""glibc ``malloc``'s options, set once as a served process starts
(docs/design.md, Memory growth).

``PROOFGATE_MALLOC_ARENA_MAX`` caps malloc's arenas. glibc gives a thread
that meets another in ``malloc`` an arena of its own, up to eight per core,
and a block stays in the arena that allocated it: the SQLite writer's and
checkpoint's threads, and the threads the loop hands work to, each keep free
space of their own that no other thread reuses, so the same live bytes sit
in more heaps with more holes between them. Python's threads hold the GIL
for most of what they allocate, so they rarely contend and a few arenas cost
no throughput.

``PROOFGATE_MALLOC_MMAP_THRESHOLD_BYTES`` fixes the size from which a block
is its own ``mmap``. Left to glibc, the threshold rises to the largest block
freed so far (up to 32 MiB), after which a large response or frame buffer
lands in the heap and, freed, leaves a hole that small long-lived blocks
then split; a fixed threshold sends every large block back to the system
when freed. glibc reads both from its own variables too (``MALLOC_ARENA_MAX``,
``MALLOC_MMAP_THRESHOLD_``); these settings win when set. Elsewhere than
glibc nothing is set.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

__all__ = ["M_ARENA_MAX", "M_MMAP_THRESHOLD", "MallOpt", "mallopt", "set_malloc_options"]

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter numbers (malloc.h)."""

MallOpt = Callable[[int, int], bool]


def mallopt() -> MallOpt | None:
    """glibc's ``mallopt``: True if it took the value; None without glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        function = libc.mallopt
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int]
    function.restype = ctypes.c_int

    def set_option(parameter: int, value: int) -> bool:
        return bool(function(parameter, value))

    return set_option


def set_malloc_options(
    arena_max: int, mmap_threshold: int, option: MallOpt | None = None
) -> dict[int, bool]:
    """Sets each option that is not 0 (off: glibc's default); what was asked
    and whether glibc took it. Nothing without glibc."""
    wanted = {M_ARENA_MAX: arena_max, M_MMAP_THRESHOLD: mmap_threshold}
    asked = {parameter: value for parameter, value in wanted.items() if value > 0}
    option = option or (mallopt() if asked else None)
    if option is None:
        return {}
    return {parameter: option(parameter, value) for parameter, value in asked.items()}
