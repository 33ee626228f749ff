"""Where a process's memory goes: tracemalloc snapshots diffed by allocation
site, for an operator chasing growth (docs/design.md, Memory growth).

Off unless ``PROOFGATE_TRACEMALLOC_FRAMES`` is set: tracing every allocation
slows the process and holds a few bytes per live block. When on, ``serve``
starts tracing before it builds the app, and ``GET /debug/memory`` (admin key
only) answers the sites that grew since the previous call, largest first; the
first call answers the largest sites since start. Untraced, it answers the
totals below alone. Grouping a snapshot of a
large heap takes seconds of CPU, so the endpoint runs it off the event loop. A report names source
files, line numbers, bytes and block counts: never a value held in memory.

tracemalloc sees what Python allocates, not what SQLite or the C allocator
keep for themselves (SQLite's page caches and prepared statements, free
space the allocator has not returned), so a report starts with those too.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import sys
import threading
import tracemalloc
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from api.observability.allocators import allocator_lines

__all__ = ["FRAMES_MAX", "SITES_MAX", "Grouping", "MemorySites", "start_tracing", "totals_lines"]

FRAMES_MAX = 64
"""Deeper stacks cost memory per block and say little more about the site."""
SITES_MAX = 200
_IGNORED = frozenset({tracemalloc.__file__, "<unknown>"})
"""Innermost frames of no interest: tracemalloc's own (the snapshot held for
the next report) and blocks allocated before any Python frame ran."""


class Grouping(StrEnum):
    """What a site is: the line that allocated, its file, or its whole stack."""

    LINENO = "lineno"
    FILENAME = "filename"
    TRACEBACK = "traceback"


def start_tracing(frames: int) -> bool:
    """Starts tracing with ``frames`` frames a block; 0: off. True if tracing."""
    if frames <= 0:
        return False
    if not tracemalloc.is_tracing():
        tracemalloc.start(min(frames, FRAMES_MAX))
    return True


@dataclass(frozen=True, slots=True)
class Site:
    frames: tuple[str, ...]
    """``file:line`` of each frame, innermost first."""
    size: int
    size_diff: int
    count: int
    count_diff: int


class MemorySites:
    """The previous snapshot, so each report is the growth since the one before."""

    def __init__(self) -> None:
        self._previous: tracemalloc.Snapshot | None = None
        self._lock = threading.Lock()

    def report(self, grouping: Grouping, limit: int) -> str:
        """Plain text: the traced totals, then up to ``limit`` sites by growth."""
        with self._lock:
            snapshot = tracemalloc.take_snapshot()
            previous, self._previous = self._previous, snapshot
        sites = [s for s in _sites(snapshot, previous, grouping) if _shown(s)][:limit]
        since = "the previous report" if previous is not None else "tracing started"
        lines = [
            *totals_lines(),
            f"# {len(sites)} sites by {grouping.value}, largest growth since {since}",
            "# size_diff_bytes size_bytes count_diff count site",
        ]
        for site in sites:
            head = f"{site.size_diff:+d} {site.size} {site.count_diff:+d} {site.count}"
            lines.append(f"{head} {site.frames[0]}")
            lines.extend(f"    {frame}" for frame in site.frames[1:])
        return "\n".join(lines) + "\n"


def _sites(
    snapshot: tracemalloc.Snapshot, previous: tracemalloc.Snapshot | None, grouping: Grouping
) -> list[Site]:
    if previous is None:
        stats = snapshot.statistics(grouping.value)
        return [
            Site(_frames(stat.traceback), stat.size, stat.size, stat.count, stat.count)
            for stat in stats
        ]
    diffs = snapshot.compare_to(previous, grouping.value)
    diffs.sort(key=lambda diff: (-diff.size_diff, -diff.count_diff))
    return [
        Site(_frames(diff.traceback), diff.size, diff.size_diff, diff.count, diff.count_diff)
        for diff in diffs
    ]


def _shown(site: Site) -> bool:
    filename, _, _ = site.frames[0].rpartition(":")
    return filename not in _IGNORED


def _frames(traceback: tracemalloc.Traceback) -> tuple[str, ...]:
    # Traceback iterates oldest first; a site reads innermost first.
    return tuple(f"{frame.filename}:{frame.lineno}" for frame in reversed(traceback))


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
            "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def totals_lines() -> list[str]:
    """Report lines that need no tracing: SQLite, malloc and the collector;
    and the traced total while tracing."""
    lines = []
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        lines.append(f"# traced {current / 2**20:.1f} MiB now, {peak / 2**20:.1f} MiB at peak")
    lines.extend(native_lines())
    lines.append(f"# python {sys.getallocatedblocks()} blocks allocated by the interpreter")
    runs = "/".join(str(generation["collections"]) for generation in gc.get_stats())
    pending = "/".join(str(count) for count in gc.get_count())
    lines.append(
        f"# gc {runs} collections by generation, {pending} pending, "
        f"{len(gc.get_objects())} objects tracked, {gc.get_freeze_count()} frozen"
    )
    return lines


def native_lines() -> list[str]:
    """Resident memory, and what SQLite and glibc's allocator hold, as report
    lines; none of what the platform does not tell."""
    lines = []
    with contextlib.suppress(OSError):
        status = dict(
            line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
        )
        parts = ", ".join(
            f"{name} {int(status[field].split()[0]) / 1024:.1f} MiB"
            for name, field in (("anonymous", "RssAnon"), ("files", "RssFile"))
            if field in status
        )
        lines.append(f"# resident {parts}")
    try:
        sqlite = ctypes.CDLL("libsqlite3.so.0")
        sqlite.sqlite3_memory_used.restype = ctypes.c_int64
        sqlite.sqlite3_memory_highwater.restype = ctypes.c_int64
        used, highest = sqlite.sqlite3_memory_used(), sqlite.sqlite3_memory_highwater(0)
        lines.append(f"# sqlite {used / 2**20:.1f} MiB in use, {highest / 2**20:.1f} MiB at peak")
    except (OSError, AttributeError):
        pass
    with contextlib.suppress(OSError, AttributeError):
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
        mallinfo2.restype = _MallInfo2
        info = mallinfo2()
        lines.append(
            f"# malloc {info.uordblks / 2**20:.1f} MiB in use, {info.fordblks / 2**20:.1f} MiB "
            f"free in {info.arena / 2**20:.1f} MiB of heaps, {info.hblkhd / 2**20:.1f} MiB mapped"
        )
    return [*lines, *allocator_lines()]
