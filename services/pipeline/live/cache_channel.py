"""Cache invalidations across processes through Redis pub/sub
(docs/design.md, Cache invalidations across processes).

Each process publishes every invalidation its writes make (after they
committed and were applied here) on one channel, ``<prefix>cache``, signed
as alerts are (``messages.sign_body``, a key derived for this channel from
the cursor key), numbered in order, with a heartbeat when idle; it applies
every other process's to its own cache. ``ChannelFreshness`` is the cache's
gate: no cache while deaf, a flush when hearing again or on a gap.

A forged, stale or malformed message is counted and dropped; nothing a
message holds ends the listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import msgspec
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from services.pipeline.live.cache_freshness import ChannelFreshness
from services.pipeline.live.cancellation import raise_if_cancelled
from services.pipeline.live.messages import SKEW_SECONDS, MalformedMessage, open_body, sign_body
from services.pipeline.live.redis_transport import OUTGOING_MAX, redis_client

__all__ = ["CACHE_KEY_LABEL", "HEARTBEAT_SECONDS", "CacheChannel"]

logger = logging.getLogger("proofgate.pipeline")

CACHE_KEY_LABEL = b"proofgate redis cache invalidations v1"
HEARTBEAT_SECONDS = 0.2
DEAF_AFTER_SECONDS = 1.0
"""Without its own heartbeat back for this long a process stops trusting."""
CLOCK_SKEW_SECONDS = 0.05
"""The most two processes' wall clocks may differ (NTP on one network keeps
them within a few ms): a publisher's ``w`` counts for this much less."""
GONE_AFTER_SECONDS = 10.0
"""A publisher silent this long is taken as stopped: it no longer holds the
watermark back."""
MAX_AGE_SECONDS = 30.0
_BACKOFF_MIN = 0.05
_BACKOFF_MAX = 2.0
_CONFIRM_SECONDS = 2.0


class _Message(msgspec.Struct, frozen=True):
    p: str
    """The publisher (a random id per process)."""
    n: int
    """An invalidation's number, or a heartbeat's last one."""
    s: float
    """When the invalidation before this one (a heartbeat's: numbered ``n``)
    was sent, seconds since the epoch; 0: none."""
    i: Any = None
    """The invalidation (``Invalidation.to_plain()``), None for a heartbeat."""
    w: float = 0.0
    """The publisher's watermark, seconds since the epoch by its clock: every
    write of its own that began before ``w`` was handed to the channel before
    this message (docs/design.md, Cache invalidations across processes, The
    watermark); 0: proves nothing."""


_DECODE = msgspec.json.Decoder(_Message)


class CacheChannel:
    def __init__(
        self,
        url: str,
        *,
        key: bytes,
        prefix: str,
        apply: Callable[[Any], None],
        flush: Callable[[], None],
        settled: Callable[[], float],
        clock: Callable[[], float] = time.time,
        deaf_after: float = DEAF_AFTER_SECONDS,
    ) -> None:
        """``apply`` takes an invalidation's plain form from another process
        (raising ``ValueError`` when it is not one); ``flush`` drops the cache;
        ``settled`` is the cache's ``settled_through`` (its own writes in
        flight), which every message's watermark is bounded by;
        ``deaf_after``: how late its own heartbeat may come back before this
        process stops trusting (a test that plants a fault in what is heard
        waits longer, so a loaded machine cannot hide the fault)."""
        self._url = url
        self._key = key
        self._name = prefix + "cache"
        self._apply = apply
        self._clock = clock
        self.publisher = os.urandom(8).hex()
        self._settled = settled
        self.freshness = ChannelFreshness(
            flush,
            deaf_after=deaf_after,
            skew=SKEW_SECONDS,
            clock_skew=CLOCK_SKEW_SECONDS,
            gone_after=GONE_AFTER_SECONDS,
            wall_clock=clock,
        )
        self._number = 0
        self._last_sent = 0.0
        self._outgoing: deque[tuple[int, Any, float]] = deque(maxlen=OUTGOING_MAX)
        self._ready = asyncio.Event()
        self._sent = asyncio.Event()
        """Set whenever the queue has been sent empty."""
        self._client = redis_client(url)
        self.dropped = 0
        """Messages refused (forged, stale, malformed); a metric."""
        self.unpublished = 0
        """Invalidations the queue overflowed; listeners see the gap and flush."""

    # --- publishing ----------------------------------------------------------

    @property
    def numbered(self) -> int:
        """The number of the last invalidation handed to the channel."""
        return self._number

    def publish(self, plain: Any) -> None:
        """An invalidation this process's write made; never blocks, never raises."""
        if len(self._outgoing) == OUTGOING_MAX:
            self.unpublished += 1
        self._number += 1
        # Queued now, so every write settled before w is queued ahead of it
        # (this one's own write is still in flight: w is at most its start).
        self._outgoing.append((self._number, plain, self._watermark()))
        self._ready.set()

    def _watermark(self) -> float:
        return min(self._settled(), self._clock())

    async def _send(self, number: int, plain: Any, through: float) -> None:
        now = self._clock()
        message = _Message(self.publisher, number, self._last_sent, plain, through)
        body = msgspec.json.encode(message)
        await self._client.publish(self._name, sign_body(self._key, self._name, body, now))
        if plain is not None:
            self._last_sent = now

    async def _publish_forever(self) -> None:
        delay = _BACKOFF_MIN
        while True:
            raise_if_cancelled()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(HEARTBEAT_SECONDS):
                    await self._ready.wait()
            self._ready.clear()
            try:
                if not self._outgoing:  # all handed over is sent: w may be now
                    await self._send(self._number, None, self._watermark())
                while self._outgoing:
                    await self._send(*self._outgoing[0])
                    self._outgoing.popleft()
                self._sent.set()
            except (RedisError, OSError):
                await asyncio.sleep(delay)
                delay = min(2 * delay, _BACKOFF_MAX)
                continue
            delay = _BACKOFF_MIN

    async def drain(self, timeout: float) -> int:
        """Until every invalidation handed over has been sent, then a last
        heartbeat (its watermark now, so no listener waits on this process),
        or ``timeout``: for a process about to exit (a CLI job). Returns how
        many were left unsent."""
        with contextlib.suppress(TimeoutError, RedisError, OSError):
            async with asyncio.timeout(timeout):
                while self._outgoing:
                    self._sent.clear()
                    self._ready.set()
                    await self._sent.wait()
                await self._send(self._number, None, self._watermark())
        return len(self._outgoing)

    # --- listening -------------------------------------------------------------

    async def run(self) -> None:
        # Cancelled, gather returns once the first of the two has ended; the
        # other, if a wait in redis-py swallowed its cancellation, ends at its
        # loop's next turn (``raise_if_cancelled``). A task group would wait
        # for it, and for ever if it waits on a message that never comes.
        await asyncio.gather(self._listen_forever(), self._publish_forever())

    async def _listen_forever(self) -> None:
        delay = _BACKOFF_MIN
        while True:
            raise_if_cancelled()
            client = redis_client(self._url)
            pubsub = client.pubsub()
            try:
                await self._listen(pubsub)
            except (RedisError, OSError, TimeoutError) as error:
                if self.freshness.trusted():
                    delay = _BACKOFF_MIN
                    logger.warning(
                        "Redis unreachable (%s); the cache reads through until it is back",
                        type(error).__name__,
                    )
            except Exception:
                logger.exception("Listening for cache invalidations failed; reconnecting")
            finally:
                self.freshness.deaf()
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                with contextlib.suppress(RedisError, OSError):
                    await client.aclose()
            await asyncio.sleep(delay)
            delay = min(2 * delay, _BACKOFF_MAX)

    async def _listen(self, pubsub: PubSub) -> None:
        await pubsub.subscribe(self._name)
        async with asyncio.timeout(_CONFIRM_SECONDS):
            while True:
                message = await pubsub.get_message(timeout=_CONFIRM_SECONDS)
                if message is not None and message["type"] == "subscribe":
                    break
        self.freshness.listening()
        while True:
            raise_if_cancelled()
            message = await pubsub.get_message(timeout=None)
            if message is not None and message["type"] == "message":
                self._receive(message["data"])

    def _receive(self, data: bytes) -> None:
        now = self._clock()
        try:
            body = open_body(self._key, self._name, data, now, MAX_AGE_SECONDS + SKEW_SECONDS)
            message = _DECODE.decode(body)
            own = message.p == self.publisher
            invalidation = message.i is not None
            heard = self.freshness.heard
            if heard(
                message.p,
                message.n,
                message.s,
                invalidation=invalidation,
                own=own,
                through=message.w,
            ):
                self._apply(message.i)
        except (MalformedMessage, msgspec.DecodeError, msgspec.ValidationError, ValueError):
            self.dropped += 1
            if self.dropped == 1 or math.log2(self.dropped).is_integer():
                logger.warning("Dropped %d unsigned or malformed cache messages", self.dropped)

    async def close(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self._client.aclose()
