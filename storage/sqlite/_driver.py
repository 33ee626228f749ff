"""The embedded backend: one SQLite file in WAL mode, or ``:memory:``.

Writes run on their own thread, since a commit may wait for another
process's write lock; reads run on the event loop's thread with their own
connection (``_inline.py``): in WAL mode a read never waits behind a write.
``:memory:`` is one database per connection, so there one thread and one
connection serve both.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Sequence
from functools import partial

from ..driver import BatchGetResult, QueryRequest, QueryResult
from ..keys import Key
from ..values import Item
from ..writes import WriteAction
from . import _reads
from ._checkpoint import Checkpointer
from ._group import GroupCommitter
from ._inline import InlineReader
from ._inline_writer import InlineWriter
from ._query import query
from ._schema import (
    DEFAULT_CACHE_MIB,
    MEMORY,
    connect_checkpointer,
    connect_loop,
    connect_writer,
)
from ._ttl import SWEEP_INTERVAL_SECONDS, TtlSweeper
from ._worker import Worker

__all__ = ["SqliteDriver"]


def _nothing(connection: sqlite3.Connection) -> None:
    return None


class SqliteDriver:
    name = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 5.0,
        ttl_sweep_seconds: float | None = SWEEP_INTERVAL_SECONDS,
        cache_mib: int = DEFAULT_CACHE_MIB,
    ) -> None:
        """Starts the threads, which open their connections; nothing here
        blocks. ``timeout`` is how long a write waits for another process's
        write lock before failing with ``ServiceUnavailable``.
        ``ttl_sweep_seconds`` is the TTL sweep's interval (None: no sweep);
        ``cache_mib`` each connection's page cache."""
        self.path = os.fspath(path)
        ready = threading.Event()
        self._writer = Worker(
            partial(connect_writer, self.path, timeout, ready, cache_mib), "proofgate-sqlite-writer"
        )
        self._inline = (
            None
            if self.path == MEMORY
            else InlineReader(partial(connect_loop, self.path, timeout, ready, cache_mib))
        )
        self._reader: Worker | InlineReader = self._writer if self._inline is None else self._inline
        self.checkpointer = (
            None
            if self.path == MEMORY
            else Checkpointer(partial(connect_checkpointer, self.path, ready))
        )
        self._inline_writer = (
            None if self._inline is None else InlineWriter(self._inline.connection, timeout)
        )
        self._committer = GroupCommitter(
            self._writer,
            self.checkpointer.nudge if self.checkpointer else None,
            self._inline_writer,
        )
        self.ttl_sweeper = (
            None
            if ttl_sweep_seconds is None
            else TtlSweeper(self._writer, interval=ttl_sweep_seconds)
        )

    async def wait_ready(self) -> None:
        """Raises what opening the file raised (a bad path, a newer schema)."""
        await self._writer.call(_nothing)
        await self._reader.call(_nothing)
        if self.ttl_sweeper is not None:
            self.ttl_sweeper.start()

    async def get_item(self, key: Key, consistent: bool) -> tuple[Item | None, float]:
        if self._inline is not None:
            return self._inline.run(_reads.get_item, key, consistent)
        return await self._reader.call(_reads.get_item, key, consistent)

    async def batch_get_items(self, keys: Sequence[Key], consistent: bool) -> BatchGetResult:
        if self._inline is not None:
            return self._inline.run(_reads.batch_get_items, list(keys), consistent)
        return await self._reader.call(_reads.batch_get_items, list(keys), consistent)

    async def query(self, request: QueryRequest) -> QueryResult:
        if self._inline is not None:
            return self._inline.run(query, request)
        return await self._reader.call(query, request)

    async def write(self, action: WriteAction) -> float:
        return await self._committer.write(action)

    async def transact_write(self, actions: Sequence[WriteAction]) -> float:
        return await self._committer.transact_write(actions)

    async def close(self) -> None:
        if self.ttl_sweeper is not None:
            await self.ttl_sweeper.stop()
        if self._inline_writer is not None:
            self._inline_writer.stop()
        await self._reader.stop()
        await self._writer.stop()
        if self.checkpointer is not None:
            await asyncio.to_thread(self.checkpointer.stop)
