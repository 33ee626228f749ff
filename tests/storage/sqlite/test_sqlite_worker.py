"""The writer thread (storage/sqlite/_worker.py): it sleeps on a pipe and a
call wakes it with one byte, written only when it may be asleep."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field

import pytest

from storage.sqlite import _worker
from storage.sqlite._worker import Worker


def _memory() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", check_same_thread=False)


def _echo(connection: sqlite3.Connection, value: int) -> int:
    (result,) = connection.execute("SELECT ?", (value,)).fetchone()
    return int(result)


@dataclass
class Wakes:
    written: list[int] = field(default_factory=list)
    """A wake-up byte per entry."""
    slept: list[int] = field(default_factory=list)
    """A sleep of the thread that ended, per entry."""


@pytest.fixture
def wakes(monkeypatch: pytest.MonkeyPatch) -> Wakes:
    counts = Wakes()
    wake, sleep = _worker._wake, _worker._sleep

    def counted_wake(fd: int) -> None:
        counts.written.append(fd)
        wake(fd)

    def counted_sleep(fd: int) -> None:
        sleep(fd)
        counts.slept.append(fd)

    monkeypatch.setattr(_worker, "_wake", counted_wake)
    monkeypatch.setattr(_worker, "_sleep", counted_sleep)
    return counts


async def test_calls_settle_whether_the_thread_sleeps_or_works() -> None:
    worker = Worker(_memory, "test-worker")
    try:
        for value in range(50):  # each call finds the thread asleep
            assert await asyncio.wait_for(worker.call(_echo, value), 10) == value
        burst = [worker.call(_echo, value) for value in range(200)]
        assert await asyncio.wait_for(asyncio.gather(*burst), 10) == list(range(200))
    finally:
        await worker.stop()


async def test_a_burst_of_calls_writes_no_more_bytes_than_the_thread_sleeps(wakes: Wakes) -> None:
    """Every byte is written for a sleep: the first call of a burst clears
    the flag, so the calls made while the woken thread waits for the GIL
    write none (with the flag left set, each of them wrote one)."""
    worker = Worker(_memory, "test-worker")
    try:
        for _ in range(20):
            await worker.call(_echo, 0)
            for _ in range(1000):  # until the thread is back in its sleep
                if worker._asleep:
                    break
                await asyncio.sleep(0.001)
            burst = [worker.call(_echo, value) for value in range(100)]
            assert await asyncio.wait_for(asyncio.gather(*burst), 10) == list(range(100))
        assert wakes.written
        # Nearly one byte per sleep. A byte written just as the thread found
        # a job anyway ends a later sleep at once, and two such bytes end
        # one sleep together: a rare race, hence the factor of two. With the
        # flag left set, each call of a burst wrote one: ~100 per sleep.
        assert len(wakes.written) <= 2 * len(wakes.slept) + 1
    finally:
        await worker.stop()
