"""Starting and stopping this process's cache invalidation channel with the
app (docs/design.md, Cache invalidations across processes).

With the cache on, every invalidation this process's writes make is
published, every other process's is applied, and the cache is trusted only
while the channel is heard: through Redis when ``PROOFGATE_REDIS_URL`` is
set, through the table's own log otherwise (``PROOFGATE_CACHE_CHANNEL``
says which, ``auto`` by default). With no channel, this process's own
writes are all the cache hears.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, Protocol

from api.settings.gateway import Backend, CacheChannel, Settings
from domain.errors import ConfigurationError
from services.pipeline.live.cache_channel import CACHE_KEY_LABEL
from services.pipeline.live.cache_channel import CacheChannel as RedisChannel
from services.pipeline.live.cache_log import CacheLog
from storage import CursorCodec, Storage
from storage.cache import CachedStorage, Invalidation

__all__ = ["DRAIN_SECONDS", "cache_channel", "channel_of", "running_cache_channel"]

DRAIN_SECONDS = 5.0
"""How long a process about to exit waits for its invalidations to be sent."""
logger = logging.getLogger("proofgate.pipeline")


class _Channel(Protocol):
    def publish(self, plain: Any) -> None: ...

    async def run(self) -> None: ...

    async def drain(self, timeout: float) -> int: ...

    async def close(self) -> None: ...


def channel_of(settings: Settings) -> CacheChannel:
    """The channel ``PROOFGATE_CACHE_CHANNEL`` names, ``auto`` resolved."""
    kind = settings.cache_channel
    if kind is CacheChannel.REDIS and settings.pipeline.redis_url is None:
        raise ConfigurationError(
            "PROOFGATE_CACHE_CHANNEL=redis needs PROOFGATE_REDIS_URL",
            hint="Set PROOFGATE_REDIS_URL, or PROOFGATE_CACHE_CHANNEL=table to use the table.",
        )
    if kind is not CacheChannel.AUTO:
        return kind
    if settings.pipeline.redis_url is not None:
        return CacheChannel.REDIS
    return CacheChannel.TABLE if settings.backend is Backend.DYNAMODB else CacheChannel.NONE


def cache_channel(settings: Settings, storage: Storage) -> _Channel | None:
    """The channel for ``storage``'s cache, wired in, or None (no cache, or
    one process that hears only itself)."""
    if not isinstance(storage, CachedStorage):
        return None
    kind = channel_of(settings)
    if kind is CacheChannel.NONE:
        return None

    def apply(plain: Any) -> None:
        storage.invalidate(Invalidation.from_plain(plain))

    channel: RedisChannel | CacheLog
    if kind is CacheChannel.REDIS:
        assert settings.pipeline.redis_url is not None  # channel_of checked it
        channel = RedisChannel(
            settings.pipeline.redis_url,
            key=CursorCodec(settings.cursor_key).derive_key(CACHE_KEY_LABEL),
            prefix=settings.pipeline.redis_prefix,
            apply=apply,
            flush=storage.flush,
            settled=storage.settled_through,
        )
    else:
        # The log's own items are read and written past the cache.
        channel = CacheLog(storage.inner, apply=apply, flush=storage.flush)
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
                    "%d cache invalidations not published (the channel unreachable): gateways see "
                    "those writes by PROOFGATE_CACHE_TTL_MS",
                    unsent,
                )
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await channel.close()
