"""The writer thread (storage/sqlite/_worker.py): it sleeps on a pipe and a
call wakes it with one byte, written only when it may be asleep."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable

import pytest

from storage.sqlite import _worker
from storage.sqlite._worker import Worker


def _memory() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", check_same_thread=False)


def _echo(connection: sqlite3.Connection, value: int) -> int:
    (result,) = connection.execute("SELECT ?", (value,)).fetchone()
    return int(result)


@pytest.fixture
def wakes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every wake-up byte a call writes."""
    written: list[int] = []
    write: Callable[[int, bytes], int] = os.write

    def counted(fd: int, data: bytes) -> int:
        written.append(fd)
        return write(fd, data)

    monkeypatch.setattr(_worker.os, "write", counted)
    return written


async def test_calls_settle_whether_the_thread_sleeps_or_works() -> None:
    worker = Worker(_memory, "test-worker")
    try:
        for value in range(50):  # each call finds the thread asleep
            assert await asyncio.wait_for(worker.call(_echo, value), 10) == value
        burst = [worker.call(_echo, value) for value in range(200)]
        assert await asyncio.wait_for(asyncio.gather(*burst), 10) == list(range(200))
    finally:
        await worker.stop()


async def test_a_burst_of_calls_wakes_the_sleeping_thread_once(wakes: list[int]) -> None:
    worker = Worker(_memory, "test-worker")
    try:
        await worker.call(_echo, 0)
        for _ in range(1000):  # until the thread is back in its read
            if worker._asleep:
                break
            await asyncio.sleep(0.01)
        assert worker._asleep
        wakes.clear()
        burst = [worker.call(_echo, value) for value in range(100)]
        assert await asyncio.wait_for(asyncio.gather(*burst), 10) == list(range(100))
        # The calls run back to back while the thread waits for the GIL:
        # without the flag cleared by the first, each of them wrote a byte.
        assert 1 <= len(wakes) < 10
    finally:
        await worker.stop()
