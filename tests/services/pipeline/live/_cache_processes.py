"""Two caches over one store, each with its own invalidation channel (to a
real redis-server, or the store's own log): two processes as far as the
channel can tell (docs/design.md, Cache invalidations across processes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from services.pipeline.live.cache_channel import CACHE_KEY_LABEL, CacheChannel
from services.pipeline.live.cache_log import CacheLog
from storage import CursorCodec, Storage, Update
from storage.access_patterns import BRAND_BY_ID
from storage.cache import CachedStorage, Invalidation

__all__ = [
    "BRANDS",
    "CHANNEL",
    "CURSOR_KEY",
    "KEY",
    "ChannelFactory",
    "DeafChannel",
    "DeafLog",
    "Process",
    "stale_reads",
    "through_redis",
    "through_the_table",
]

CURSOR_KEY = bytes(range(32))
KEY = CursorCodec(CURSOR_KEY).derive_key(CACHE_KEY_LABEL)
CHANNEL = "proofgate:cache"
BRANDS = [f"b{i}" for i in range(8)]


ChannelFactory = Callable[
    [Storage, Callable[[Any], None], Callable[[], None], Callable[[], float]],
    CacheChannel | CacheLog,
]
"""A channel for a process's store, given what applies, what flushes and the
cache's ``settled_through``."""

LOG_TICK_SECONDS = 0.02


def through_redis(
    url: str, channel_type: type[CacheChannel] = CacheChannel, **options: Any
) -> ChannelFactory:
    """``options``: more of the channel's keyword arguments (``deaf_after``)."""

    def channel(
        _store: Storage,
        apply: Callable[[Any], None],
        flush: Callable[[], None],
        settled: Callable[[], float],
    ) -> Any:
        return channel_type(
            url, key=KEY, prefix="proofgate:", apply=apply, flush=flush, settled=settled, **options
        )

    return channel


def through_the_table(log_type: type[CacheLog] = CacheLog) -> ChannelFactory:
    """The table's log, read every 20 ms instead of 100 (a shorter test)."""

    def channel(
        store: Storage, apply: Callable[[Any], None], flush: Callable[[], None], _settled: Any
    ) -> Any:
        return log_type(store, apply=apply, flush=flush, tick=LOG_TICK_SECONDS)

    return channel


class Process:
    def __init__(
        self, store: Storage, channel: ChannelFactory, clock: Callable[[], float] = time.time
    ) -> None:
        """``clock``: the cache's (when its reads begin), not the channel's."""
        self.cache = CachedStorage(store, max_bytes=1 << 20, ttl_seconds=600.0, clock=clock)

        def apply(plain: Any) -> None:
            self.cache.invalidate(Invalidation.from_plain(plain))

        self.channel = channel(store, apply, self.cache.flush, self.cache.settled_through)
        self.cache.freshness = self.channel.freshness
        self.cache.on_invalidation(lambda i: self.channel.publish(i.to_plain()))
        self.task: asyncio.Task[None] | None = None

    async def until_trusted(self, timeout: float = 10) -> None:
        async with asyncio.timeout(timeout):
            while not self.channel.freshness.trusted():
                await asyncio.sleep(0.01)

    async def name(self, brand: str) -> str:
        item = await self.cache.get(BRAND_BY_ID, brand_id=brand)
        assert item is not None
        return str(item["name"])

    async def rename(self, brand: str, name: str) -> None:
        await self.cache.transact_write(
            [Update(BRAND_BY_ID.key(brand_id=brand), set={"name": name})]
        )

    async def heard_from(self, other: Process, timeout: float = 5) -> None:
        """Until this process has heard every invalidation ``other`` numbered."""
        if isinstance(other.channel, CacheLog) and other.channel.numbered == 0:
            return  # a log has no heartbeat: nothing written, nothing to hear
        async with asyncio.timeout(timeout):
            while True:
                last = self.channel.freshness.last_of(other.channel.publisher)
                if last is not None and last >= other.channel.numbered:
                    return
                await asyncio.sleep(0.002)


class DeafChannel(CacheChannel):
    """The planted fault: hears everything (numbers, heartbeats), applies nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._apply = lambda plain: None


class DeafLog(CacheLog):
    """The planted fault: reads the log, applies nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._apply = lambda plain: None


async def stale_reads(a: Process, b: Process, truth: Storage, rounds: int, bound: float) -> int:
    """Writes on A, reads on B once A's write is acknowledged and ``bound``
    (the channel's documented bound) has passed: how many B answered stale."""
    stale = 0
    for n in range(1, rounds + 1):
        brand = BRANDS[n % len(BRANDS)]
        await b.name(brand)  # warm B's entry
        await a.rename(brand, str(n))
        await asyncio.sleep(bound)  # the documented bound; not a readiness wait
        expected = await truth.get(BRAND_BY_ID, brand_id=brand)
        assert expected is not None
        stale += await b.name(brand) != expected["name"]
    return stale
