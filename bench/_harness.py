"""Timing helpers shared by the benchmark sections."""

from __future__ import annotations

import asyncio
import shutil
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = ["CC", "Result", "measure_async", "measure_sync", "print_table"]

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
"""The C compiler the fan-out client and the callgrind client are built with;
None without one (Debian: ``apt-get install gcc``)."""


@dataclass(frozen=True)
class Result:
    name: str
    ops_per_second: float
    p50_us: float
    p99_us: float


def _result(name: str, samples: list[float], elapsed: float, count: int) -> Result:
    samples.sort()
    return Result(
        name,
        count / elapsed,
        statistics.median(samples) * 1e6,
        samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e6,
    )


def measure_sync(name: str, operation: Callable[[int], object], count: int) -> Result:
    for i in range(min(200, count)):
        operation(i)
    samples = []
    start = time.perf_counter()
    for i in range(count):
        t0 = time.perf_counter()
        operation(i)
        samples.append(time.perf_counter() - t0)
    return _result(name, samples, time.perf_counter() - start, count)


async def measure_async(
    name: str, operation: Callable[[int], Awaitable[object]], count: int, concurrency: int = 1
) -> Result:
    for i in range(min(100, count)):
        await operation(i)
    samples: list[float] = []
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < count:
            i = next_index
            next_index += 1
            t0 = time.perf_counter()
            await operation(i)
            samples.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return _result(name, samples, time.perf_counter() - start, count)


def print_table(title: str, rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n## {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("| " + " | ".join("-" * w for w in widths) + " |")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
