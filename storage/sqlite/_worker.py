"""A thread that owns one SQLite connection and runs jobs for the event loop.

Measured on this stack, a bare thread with a queue costs less per call than
``run_in_executor`` (no concurrent future to wrap) and much less than
aiosqlite (a cursor object and a hop per fetch). Results are handed back in
batches: whatever finished before the queue ran dry costs one wake-up of the
loop, so concurrent callers share the thread hop instead of paying it each.

The thread sleeps on a pipe, not on a lock: ``os.write`` wakes it with the
GIL released. A lock's release wakes it holding the GIL, and when the
scheduler runs the woken thread in the waker's place, the loop's thread is
off its CPU holding the GIL that the woken thread needs first (measured under
load: 5-7% of the loop thread's GIL time at that one call). A call wakes the
thread only when it may be asleep.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar, TypeVarTuple, Unpack

from domain.errors import ServiceUnavailable

__all__ = ["Worker", "is_busy", "translate"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

_Job = tuple[Callable[..., Any] | None, tuple[Any, ...], "asyncio.Future[Any]"]
_Outcome = tuple["asyncio.Future[Any]", bool, Any]
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def is_busy(error: BaseException) -> bool:
    """Another connection holds the lock this one needs."""
    return isinstance(error, sqlite3.OperationalError) and error.sqlite_errorcode & 0xFF in _BUSY


def translate(error: BaseException) -> BaseException:
    if is_busy(error):
        return ServiceUnavailable(
            "The SQLite store stayed locked by another writer",
            hint="Another process holds the write lock; retry the request.",
        )
    return error


def _settle(outcomes: list[_Outcome]) -> None:
    for future, succeeded, value in outcomes:
        if future.cancelled():
            continue
        if succeeded:
            future.set_result(value)
        else:
            future.set_exception(value)


def _deliver(outcomes: list[_Outcome]) -> None:
    by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for outcome in outcomes:
        by_loop.setdefault(outcome[0].get_loop(), []).append(outcome)
    for loop, settled in by_loop.items():
        with suppress(RuntimeError):  # a closed loop has nobody waiting any more
            loop.call_soon_threadsafe(_settle, settled)


def _wake(fd: int) -> None:
    os.write(fd, b"\0")


def _sleep(fd: int) -> None:
    """Until a wake-up byte; takes every byte written by then."""
    os.read(fd, 4096)


class Worker:
    def __init__(self, connect: Callable[[], sqlite3.Connection], name: str) -> None:
        self._jobs: deque[_Job] = deque()
        self._wake_reader, self._wake_writer = os.pipe()
        self._asleep = False
        """Set by the thread before it looks at the queue a last time and
        sleeps; a call that sees it writes a wake-up byte."""
        self._stopped = False
        self._thread = threading.Thread(target=self._run, args=(connect,), name=name, daemon=True)
        self._thread.start()

    def call(
        self, function: Callable[[sqlite3.Connection, Unpack[Ts]], T], *args: *Ts
    ) -> asyncio.Future[T]:
        """Runs ``function(connection, *args)`` on the thread."""
        if self._stopped:
            raise ServiceUnavailable("The SQLite store is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._put((function, args, future))
        return future

    def _put(self, job: _Job) -> None:
        self._jobs.append(job)
        if self._asleep:
            self._asleep = False  # one byte wakes it; the calls until it runs need none
            _wake(self._wake_writer)

    async def stop(self) -> None:
        """Finishes the jobs already queued, then closes the connection."""
        if self._stopped:
            return
        self._stopped = True
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._put((None, (), done))
        await done
        self._thread.join()
        os.close(self._wake_reader)
        os.close(self._wake_writer)

    def _next(self) -> _Job:
        """The next job, sleeping until there is one. A wake-up byte written
        after the thread found a job anyway only makes one later sleep
        return at once, to look again."""
        jobs = self._jobs
        while not jobs:
            self._asleep = True
            if not jobs:
                _sleep(self._wake_reader)
            self._asleep = False
        return jobs.popleft()

    def _run(self, connect: Callable[[], sqlite3.Connection]) -> None:
        connection: sqlite3.Connection | None = None
        failure: BaseException | None = None
        try:
            connection = connect()
        except BaseException as error:
            failure = error
        jobs = self._jobs
        while True:
            job = self._next()
            outcomes: list[_Outcome] = []
            while True:
                function, args, future = job
                if function is None:
                    if connection is not None:
                        connection.close()
                    outcomes.append((future, True, None))
                    _deliver(outcomes)
                    return
                if failure is not None:
                    outcomes.append((future, False, failure))
                else:
                    try:
                        outcomes.append((future, True, function(connection, *args)))
                    except BaseException as error:
                        outcomes.append((future, False, translate(error)))
                if not jobs:
                    break
                job = jobs.popleft()
            _deliver(outcomes)
