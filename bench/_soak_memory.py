"""The soak's memory side: the RSS curve of the gateway, its bar, and the
allocation sites that grew (docs/design.md, Memory growth).

The bar is the slope, not the level: caches fill to their bounds early, so
what matters is whether RSS still grows once they have. Over a run of an
hour or more RSS may grow at most ``LONG_BAR_PERCENT`` in the second half;
over a shorter one (the ten-minute soak) at most ``SHORT_BAR_PERCENT``
between half-time and the end. ``BENCH_SOAK_TRACEMALLOC=N`` starts the
gateway with ``PROOFGATE_TRACEMALLOC_FRAMES=N`` and prints the sites that
grew over the second half (which slows the gateway, so its RSS is not the
bar's); untraced, the soak prints what SQLite, malloc and the collector held
at half-time and at the end, and SQLite's memory in use beside every row of
the curve: its page caches fill as the table grows, up to
``PROOFGATE_SQLITE_CACHE_MB`` a connection, so the curve less SQLite is
printed too (the bar stays on RSS).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from ._harness import print_table

__all__ = [
    "CURVE_ROWS",
    "TRACEMALLOC_FRAMES",
    "MemoryCurve",
    "memory_report",
    "native_memory",
]

LONG_BAR_PERCENT = 2.0
SHORT_BAR_PERCENT = 1.0
LONG_RUN_SECONDS = 3600
CURVE_ROWS = 13
"""Rows of the printed curve: every sample of a long run would not fit a note."""
TRACEMALLOC_FRAMES = int(os.environ.get("BENCH_SOAK_TRACEMALLOC", "0"))
SITES = 20


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    rss: float
    anon: float
    file: float
    """MB: resident in all, in anonymous memory (the heap), in mapped files."""
    native: Native | None = None
    """What SQLite and the allocators held (``/debug/memory``), None while traced."""

    @property
    def sqlite(self) -> float | None:
        return None if self.native is None else self.native.sqlite


@dataclass(frozen=True, slots=True)
class Native:
    """MiB (as the others): SQLite's memory in use, malloc's blocks in use and
    the free space in its heaps, and pymalloc's arenas."""

    sqlite: float
    malloc_used: float | None = None
    malloc_free: float | None = None
    pymalloc: float | None = None


def _status(pid: int) -> dict[str, float]:
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


class MemoryCurve:
    def __init__(self, pid: int, seconds: int) -> None:
        self.pid, self.seconds = pid, seconds
        self.samples: list[Sample] = []
        self._started = time.monotonic()

    def sample(self, native: Native | None = None) -> None:
        fields = _status(self.pid)
        at = time.monotonic() - self._started
        rss, anon, file = fields["VmRSS"], fields["RssAnon"], fields["RssFile"]
        self.samples.append(Sample(at, rss, anon, file, native))

    async def sampling(
        self,
        every: float,
        stop: asyncio.Event,
        native: Callable[[], Awaitable[Native | None]] | None = None,
    ) -> None:
        """A sample every ``every`` seconds until ``stop``; ``native``, when
        given, what SQLite and the allocators hold at each."""
        self._started = time.monotonic()
        while not stop.is_set():
            self.sample(None if native is None else await native())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
        self.sample(None if native is None else await native())

    @property
    def bar(self) -> float:
        return LONG_BAR_PERCENT if self.seconds >= LONG_RUN_SECONDS else SHORT_BAR_PERCENT

    def growth(self) -> float:
        """RSS growth in percent from half-time to the end."""
        half = next(s for s in self.samples if s.at >= self.seconds / 2)
        end = self.samples[-1]
        return (end.rss - half.rss) / half.rss * 100

    def first_half_growth(self) -> float:
        """RSS growth in percent from the first sample to half-time (caches filling)."""
        half = next(s for s in self.samples if s.at >= self.seconds / 2)
        return (half.rss - self.samples[0].rss) / self.samples[0].rss * 100

    def slope(self) -> float:
        """MB per 10 minutes over the second half, fitted by least squares to
        every sample: one sample's jitter moves it less than end-minus-half."""
        points = [(s.at, s.rss) for s in self.samples if s.at >= self.seconds / 2]
        if len(points) < 2:
            return 0.0
        mean_t = sum(t for t, _ in points) / len(points)
        mean_r = sum(r for _, r in points) / len(points)
        spread = sum((t - mean_t) ** 2 for t, _ in points)
        if spread == 0:
            return 0.0
        return sum((t - mean_t) * (r - mean_r) for t, r in points) / spread * 600

    def growth_less_sqlite(self) -> float | None:
        """The same with what SQLite held taken off both ends; None if unknown."""
        half = next(s for s in self.samples if s.at >= self.seconds / 2)
        end = self.samples[-1]
        if half.sqlite is None or end.sqlite is None:
            return None
        start, last = half.rss - half.sqlite, end.rss - end.sqlite
        return (last - start) / start * 100

    def print(self) -> None:
        step = max(1, round((len(self.samples) - 1) / (CURVE_ROWS - 1)))
        rows = self.samples[::step]
        if rows[-1] is not self.samples[-1]:
            rows.append(self.samples[-1])
        print_table(
            f"Soak ({self.seconds} s): resident memory of the gateway, MB",
            [
                (f"{s.at:.0f}", f"{s.rss:.1f}", f"{s.anon:.1f}", f"{s.file:.1f}", *_native(s))
                for s in rows
            ],
            (
                "seconds", "RSS", "anonymous", "files", "SQLite in use",
                "malloc in use", "malloc free", "pymalloc arenas",
            ),
        )  # fmt: skip
        print("Soak: RSS curve, MB: " + ", ".join(f"{s.at:.0f} s {s.rss:.1f}" for s in rows))

    def bar_rows(self) -> list[tuple[str, str, str]]:
        half = self.seconds // 2
        rows = [
            (
                f"RSS growth {half}-{self.seconds} s (%)",
                f"{self.growth():+.2f}",
                f"<= {self.bar:g}",
            ),
            (f"RSS growth 0-{half} s (%)", f"{self.first_half_growth():+.2f}", "-"),
            (f"RSS slope {half}-{self.seconds} s (MB per 10 min)", f"{self.slope():+.2f}", "-"),
        ]
        less = self.growth_less_sqlite()
        if less is not None:
            rows.append(
                (
                    f"RSS less SQLite's memory, growth {half}-{self.seconds} s (%)",
                    f"{less:+.2f}",
                    "-",
                )
            )
        return rows


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _native(sample: Sample) -> tuple[str, str, str, str]:
    native = sample.native
    if native is None:
        return ("-", "-", "-", "-")
    return (
        _mb(native.sqlite),
        _mb(native.malloc_used),
        _mb(native.malloc_free),
        _mb(native.pymalloc),
    )


_SQLITE = re.compile(r"^# sqlite ([0-9.]+) MiB in use", re.MULTILINE)
_MALLOC = re.compile(r"^# malloc ([0-9.]+) MiB in use, ([0-9.]+) MiB free", re.MULTILINE)
_PYMALLOC = re.compile(r"^# pymalloc [0-9]+ arenas \(([0-9.]+) MiB\)", re.MULTILINE)


async def native_memory(client: httpx.AsyncClient, admin_key: str) -> Native | None:
    """What SQLite and the allocators hold, from ``/debug/memory`` untraced
    (traced, a call would move the baseline the sites are told against):
    None then."""
    if TRACEMALLOC_FRAMES:
        return None
    report = await memory_report(client, admin_key)
    sqlite = _SQLITE.search(report)
    if sqlite is None:
        return None
    malloc, pymalloc = _MALLOC.search(report), _PYMALLOC.search(report)
    return Native(
        float(sqlite[1]),
        None if malloc is None else float(malloc[1]),
        None if malloc is None else float(malloc[2]),
        None if pymalloc is None else float(pymalloc[1]),
    )


async def memory_report(client: httpx.AsyncClient, admin_key: str, *, by: str = "lineno") -> str:
    """The gateway's ``/debug/memory``: SQLite's, malloc's and the collector's
    totals, and while traced the allocation sites grown since the previous call."""
    response = await client.get(
        "/debug/memory",
        params={"by": by, "limit": str(SITES)},
        headers={"Authorization": f"Bearer {admin_key}"},
    )
    response.raise_for_status()
    return response.text
