"""Cache invalidations across processes through the table, when no Redis is
set (docs/design.md, Cache invalidations across processes).

Each process gathers the invalidations its writes make and writes them, as
one numbered batch, to the log partition ``CACHELOG`` (one item per batch,
kept an hour by the table's TTL); every ``TICK_SECONDS`` it reads the log
from ``OVERLAP_SECONDS`` before its previous read began (AP35, strongly
consistent) and applies every other process's batches to its own cache.
The gate is the Redis channel's (``ChannelFreshness``): a read that
succeeds is this process hearing itself, so no read for
``DEAF_AFTER_SECONDS`` stops the cache serving, the first read after a
failure flushes it, and a publisher whose batch numbers skip (a batch that
overflowed or was never written) flushes it too.

The log is the gateway's own table, written by the processes that write
everything else, so its items are not signed; an invalidation can only drop
entries, and ``Invalidation.from_plain`` refuses anything that is not one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from services.pipeline.live.cache_freshness import ChannelFreshness
from services.pipeline.live.messages import SKEW_SECONDS
from services.pipeline.periodic import repeat
from storage import Item, Storage
from storage.access_patterns import CACHE_LOG
from storage.keys import encode_time
from storage.writes import Put

__all__ = ["DEAF_AFTER_SECONDS", "OVERLAP_SECONDS", "TICK_SECONDS", "CacheLog"]

logger = logging.getLogger("proofgate.pipeline")

TICK_SECONDS = 0.1
OVERLAP_SECONDS = 10.0
"""How far behind its previous read a read begins: a batch whose write took
longer than half of it is written again under a later time (the same number,
which readers apply once)."""
DEAF_AFTER_SECONDS = 1.0
KEEP_SECONDS = 3600
"""The log's items expire (TTL) an hour after they were written."""
PENDING_MAX = 10_000
"""Invalidations waiting for their batch; past it the oldest are dropped and
the next batch's number skips, so every reader flushes."""
BATCH_BYTES_MAX = 256 * 1024
"""A batch item stays well under DynamoDB's 400 KB item limit."""
CLOSE_SECONDS = 2.0
_PAGES_MAX = 50
_TENANT = "cache-log"


class _LogFreshness(ChannelFreshness):
    """The Redis channel's gate, proving no watermark: a batch is written
    after its writes committed and carries none, and a quiet publisher may
    have committed a write whose batch is not written yet, so a pattern
    strong only for freshness always reads the store."""

    def heard_through(self) -> float:
        return -math.inf


class CacheLog:
    def __init__(
        self,
        storage: Storage,
        *,
        apply: Callable[[Any], None],
        flush: Callable[[], None],
        clock: Callable[[], float] = time.time,
        tick: float = TICK_SECONDS,
    ) -> None:
        """``storage`` is the store under the cache (the log's own items are
        not cached); ``apply`` takes another process's invalidation in its
        plain form (raising ``ValueError`` when it is not one); ``flush``
        drops the cache."""
        self._storage = storage
        self._apply = apply
        self._clock = clock
        self._tick = tick
        self.publisher = os.urandom(8).hex()
        self.freshness = _LogFreshness(
            flush,
            deaf_after=DEAF_AFTER_SECONDS,
            skew=SKEW_SECONDS,
            clock_skew=SKEW_SECONDS,
            gone_after=math.inf,
            wall_clock=clock,
        )
        self._pending: deque[str] = deque()
        self._number = 0
        self._skipped = False
        self._last_sent = 0.0
        self._read_from: float | None = None
        self._deaf = True
        self._wake = asyncio.Event()
        self.unpublished = 0
        """Invalidations dropped by a full queue; readers see the gap and flush."""
        self.dropped = 0
        """Logged invalidations refused as malformed; a metric."""

    # --- publishing ----------------------------------------------------------

    @property
    def numbered(self) -> int:
        """The number of the batch that holds (or will hold) the last
        invalidation handed to the log."""
        if not self._pending:
            return self._number
        return self._number + (2 if self._skipped else 1)

    def publish(self, plain: Any) -> None:
        """An invalidation this process's write made; never blocks, never raises."""
        if len(self._pending) >= PENDING_MAX:
            self._pending.popleft()
            self.unpublished += 1
            self._skipped = True
        encoded = json.dumps(plain, separators=(",", ":"))
        self._pending.append(encoded)
        self._wake.set()

    async def _write_pending(self) -> None:
        while self._pending:
            batch: list[str] = []
            size = 0  # the JSON of the batch, which must fit one item
            while self._pending and (not batch or size + len(self._pending[0]) < BATCH_BYTES_MAX):
                size += len(self._pending[0])
                batch.append(self._pending.popleft())
            number = self._number + (2 if self._skipped else 1)
            try:
                await self._write_batch(number, batch)
            except BaseException:
                self._pending.extendleft(reversed(batch))
                raise
            self._number, self._skipped = number, False

    async def _write_batch(self, number: int, batch: list[str]) -> None:
        body = "[" + ",".join(batch) + "]"
        while True:
            sent = self._clock()
            at = encode_time(datetime.fromtimestamp(sent, UTC))
            item: Item = {
                "PK": "CACHELOG",
                "SK": f"LOG#{at}#{self.publisher}#{number:012d}",
                "entity": "CacheLogBatch",
                "publisher": self.publisher,
                "number": number,
                "previousMs": int(self._last_sent * 1000),
                "body": body,
                "expiresAt": int(sent) + KEEP_SECONDS,
            }
            await self._storage.transact_write([Put(item)])
            if self._clock() - sent <= OVERLAP_SECONDS / 2:
                self._last_sent = sent
                return
            # Slow enough that a reader may have read past its time: again, later.

    # --- reading ---------------------------------------------------------------

    async def _read(self) -> None:
        started = self._clock()
        since = (started if self._read_from is None else self._read_from) - OVERLAP_SECONDS
        items: list[Item] = []
        after: str | None = None
        for _ in range(_PAGES_MAX):
            page = await self._storage.query(
                CACHE_LOG,
                {"since": datetime.fromtimestamp(since, UTC)},
                tenant=_TENANT,
                first=CACHE_LOG.max_page,
                after=after,
            )
            items.extend(page.items)
            if not page.has_next_page:
                break
            after = page.end_cursor
        if self._deaf:
            self.freshness.listening()  # flushes: what was missed is unknown
            self._deaf = False
        for item in sorted(items, key=lambda i: (str(i["publisher"]), int(i["number"]))):
            self._receive(item)
        self.freshness.heard(self.publisher, 0, 0, invalidation=False, own=True)
        self._read_from = started

    def _receive(self, item: Item) -> None:
        publisher, number = str(item["publisher"]), int(item["number"])
        last = self.freshness.last_of(publisher)
        if publisher == self.publisher or (last is not None and number <= last):
            return  # applied here as it committed, or read before
        previous = int(item.get("previousMs", 0)) / 1000
        if not self.freshness.heard(publisher, number, previous, invalidation=True, own=False):
            return
        try:
            plains = json.loads(str(item["body"]))
        except ValueError:
            self.dropped += 1
            return
        for plain in plains if isinstance(plains, list) else ():
            try:
                self._apply(plain)
            except ValueError:
                self.dropped += 1

    # --- the loop --------------------------------------------------------------

    async def _step(self) -> None:
        try:
            await self._write_pending()
            await self._read()
        except Exception:
            self.freshness.deaf()
            self._deaf = True
            raise

    async def run(self) -> None:
        await repeat(
            self._step,
            timedelta(seconds=self._tick),
            failure="Tailing the cache invalidation log failed; the cache reads through",
            wake=self._wake,
        )

    async def drain(self, timeout: float) -> int:
        """Writes what is pending within ``timeout`` (a CLI job about to
        exit); how many invalidations stay unwritten."""
        try:
            async with asyncio.timeout(timeout):
                await self._write_pending()
        except Exception as error:
            logger.warning("Logging cache invalidations failed (%s)", type(error).__name__)
        return len(self._pending)

    async def close(self) -> None:
        """Writes what is pending, so the other processes hear this one's
        last writes before it goes; within ``CLOSE_SECONDS``, best effort."""
        if not self._pending:
            return
        unsent = await self.drain(CLOSE_SECONDS)
        if unsent:
            logger.warning(
                "Could not log %d cache invalidations at shutdown; other processes "
                "drop those entries by PROOFGATE_CACHE_TTL_MS",
                unsent,
            )
