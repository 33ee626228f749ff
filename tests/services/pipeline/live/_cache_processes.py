"""Two caches over one store, each with its own invalidation channel to a
real redis-server: two processes as far as the channel can tell
(docs/design.md, Cache invalidations across processes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from services.pipeline.live.cache_channel import CACHE_KEY_LABEL, CacheChannel
from storage import CursorCodec, Storage, Update
from storage.access_patterns import BRAND_BY_ID
from storage.cache import CachedStorage, Invalidation

__all__ = ["BRANDS", "CHANNEL", "CURSOR_KEY", "KEY", "DeafChannel", "Process"]

CURSOR_KEY = bytes(range(32))
KEY = CursorCodec(CURSOR_KEY).derive_key(CACHE_KEY_LABEL)
CHANNEL = "proofgate:cache"
BRANDS = [f"b{i}" for i in range(8)]


class Process:
    def __init__(
        self,
        store: Storage,
        url: str,
        channel_type: type[CacheChannel],
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock``: the cache's (when its reads begin), not the channel's."""
        self.cache = CachedStorage(store, max_bytes=1 << 20, ttl_seconds=600.0, clock=clock)

        def apply(plain: Any) -> None:
            self.cache.invalidate(Invalidation.from_plain(plain))

        self.channel = channel_type(
            url,
            key=KEY,
            prefix="proofgate:",
            apply=apply,
            flush=self.cache.flush,
            settled=self.cache.settled_through,
        )
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
