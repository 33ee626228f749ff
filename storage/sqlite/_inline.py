"""Reads on the event loop's own thread.

In WAL mode a reader never waits for a writer: a read sees the last commit
without taking a lock, and an indexed read of at most one page of items
(1 MB) is done in less time than a hop to a worker thread and back, which
under load also waits for the GIL at every handoff. So reads of a file store
run where they are awaited; writes keep their thread (docs/design.md,
Storage). ``call`` keeps ``Worker``'s interface: it returns a settled future.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import TypeVar, TypeVarTuple, Unpack

from domain.errors import ServiceUnavailable

from ._worker import translate

__all__ = ["InlineReader"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class InlineReader:
    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        """Connects on the first call, on the loop's thread, which is the
        only thread that uses the connection afterwards."""
        self._connect = connect
        self._connection: sqlite3.Connection | None = None
        self._stopped = False

    def call(
        self, function: Callable[[sqlite3.Connection, Unpack[Ts]], T], *args: *Ts
    ) -> asyncio.Future[T]:
        if self._stopped:
            raise ServiceUnavailable("The SQLite store is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            future.set_result(self.run(function, *args))
        except Exception as error:
            future.set_exception(error)
        return future

    def run(self, function: Callable[[sqlite3.Connection, Unpack[Ts]], T], *args: *Ts) -> T:
        """``call`` without the future: what the driver's reads use, as a
        settled future only cost a read its making and awaiting."""
        if self._stopped:
            raise ServiceUnavailable("The SQLite store is closed")
        try:
            if self._connection is None:
                self._connection = self._connect()
            return function(self._connection, *args)
        except Exception as error:
            raise translate(error) from None

    def connection(self) -> sqlite3.Connection:
        """The loop thread's connection, which its group commits share
        (``_inline_writer.py``); opened here on first use."""
        if self._stopped:
            raise ServiceUnavailable("The SQLite store is closed")
        if self._connection is None:
            self._connection = self._connect()
        return self._connection

    async def stop(self) -> None:
        self._stopped = True
        if self._connection is not None:
            self._connection.close()
            self._connection = None
