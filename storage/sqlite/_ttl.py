"""TTL expiry the way DynamoDB does it: a background sweep deletes expired
items some time after they expire, in small batches so writers never wait
long behind it. Reads of items that carry an expiry check it themselves, so an
item is invisible the moment it expires and gone within a sweep interval.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress

from domain.errors import ServiceUnavailable

from ._schema import DELETE_EXPIRED
from ._worker import Worker

__all__ = [
    "SWEEP_BATCH_ITEMS",
    "SWEEP_INTERVAL_SECONDS",
    "SWEEP_MAX_BATCHES",
    "TTL_MAX_AGE_SECONDS",
    "TtlSweeper",
    "delete_expired",
]

log = logging.getLogger(__name__)

SWEEP_INTERVAL_SECONDS = 60.0
# One batch is one short write transaction; other writes queue behind it.
SWEEP_BATCH_ITEMS = 100
# A backlog (a file that sat unopened) drains over several sweeps, not in one.
SWEEP_MAX_BATCHES = 50
# DynamoDB leaves items whose expiry is more than five years past alone: such
# a number is almost certainly not a TTL.
TTL_MAX_AGE_SECONDS = 5 * 365 * 24 * 3600


def delete_expired(connection: sqlite3.Connection, now: int, limit: int) -> int:
    cursor = connection.execute(DELETE_EXPIRED, (now - TTL_MAX_AGE_SECONDS, now, limit))
    return cursor.rowcount


class TtlSweeper:
    def __init__(
        self,
        writer: Worker,
        *,
        interval: float = SWEEP_INTERVAL_SECONDS,
        batch: int = SWEEP_BATCH_ITEMS,
        max_batches: int = SWEEP_MAX_BATCHES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._writer = writer
        self.interval = interval
        self.batch = batch
        self.max_batches = max_batches
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

    async def sweep(self) -> int:
        """Deletes expired items, at most ``max_batches`` x ``batch``; returns how many."""
        deleted = 0
        for _ in range(self.max_batches):
            count = await self._writer.call(delete_expired, int(self._clock()), self.batch)
            deleted += count
            if count < self.batch:
                break
        return deleted

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="proofgate-sqlite-ttl"
            )

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            try:
                await self.sweep()
            except ServiceUnavailable:
                log.warning("TTL sweep skipped: the store stayed locked")
            except Exception:
                log.exception("TTL sweep failed; next in %ss", self.interval)
            await asyncio.sleep(self.interval)
