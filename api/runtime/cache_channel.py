"""Starting and stopping this process's cache invalidation channel with the
app (docs/design.md, Cache invalidations across processes).

With the cache on and ``PROOFGATE_REDIS_URL`` set, every invalidation this
process's writes make is published, every other process's is applied, and
the cache is trusted only while the channel is heard. Without Redis nothing
crosses processes: one process per store (``serve --workers`` is refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from api.settings.gateway import Settings
from services.pipeline.live.cache_channel import CACHE_KEY_LABEL, CacheChannel
from storage import CursorCodec, Storage
from storage.cache import CachedStorage, Invalidation

__all__ = ["DRAIN_SECONDS", "cache_channel", "running_cache_channel"]

DRAIN_SECONDS = 5.0
"""How long a process about to exit waits for its invalidations to be sent."""
logger = logging.getLogger("proofgate.pipeline")


def cache_channel(settings: Settings, storage: Storage) -> CacheChannel | None:
    """The channel for ``storage``'s cache, wired in, or None (no cache, no Redis)."""
    url = settings.pipeline.redis_url
    if not isinstance(storage, CachedStorage) or url is None:
        return None

    def apply(plain: Any) -> None:
        storage.invalidate(Invalidation.from_plain(plain))

    channel = CacheChannel(
        url,
        key=CursorCodec(settings.cursor_key).derive_key(CACHE_KEY_LABEL),
        prefix=settings.pipeline.redis_prefix,
        apply=apply,
        flush=storage.flush,
        settled=storage.settled_through,
    )
    storage.freshness = channel.freshness
    storage.on_invalidation(lambda invalidation: channel.publish(invalidation.to_plain()))
    return channel


@contextlib.asynccontextmanager
async def running_cache_channel(
    settings: Settings, storage: Storage, *, drain: bool = False
) -> AsyncIterator[None]:
    """``drain``: before stopping, send what this process's writes made, for
    a CLI job, which exits next (docs/design.md, Cache invalidations across processes)."""
    channel = cache_channel(settings, storage)
    if channel is None:
        yield
        return
    task = asyncio.create_task(channel.run(), name="proofgate-cache-channel")
    try:
        yield
    finally:
        if drain:
            unsent = await channel.drain(DRAIN_SECONDS)
            if unsent:
                logger.warning(
                    "%d cache invalidations not published (Redis unreachable): gateways see "
                    "those writes by PROOFGATE_CACHE_TTL_MS",
                    unsent,
                )
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await channel.close()
