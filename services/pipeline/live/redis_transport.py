"""Alerts across processes through Redis pub/sub, the table as the guarantee.

Pub/sub is at-most-once: a message published while a subscriber's connection
is down is gone. So Redis is only the fast path; every process still reads
the table (docs/design.md, "Alerts across processes") for the brands it
watches, every ``redis_sweep_interval`` while Redis is reachable and every
``tail_interval`` while it is not, and the broker passes each alert id on once
whichever path brought it first.

After an outage the listener re-subscribes, waits until Redis confirms every
channel, reads the table once for the gap, and only then stops tailing.

A message is signed by its publisher and checked before the broker sees it
(``services/pipeline/live/messages.py``): a forged, stale or malformed one is
counted and dropped, never passed to a subscriber, and never ends the
listener or a subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from services.pipeline.live.broker import Broker
from services.pipeline.live.cancellation import raise_if_cancelled
from services.pipeline.live.messages import (
    SKEW_SECONDS,
    MalformedMessage,
    open_message,
    seal_message,
)
from services.pipeline.live.tailer import Tailer
from services.pipeline.settings import PipelineSettings
from storage import Item

__all__ = ["CHANNEL_PREFIX", "OUTGOING_MAX", "RedisTransport", "channel", "redis_client"]

logger = logging.getLogger("proofgate.pipeline")

CHANNEL_PREFIX = "alerts:"
"""After ``redis_prefix``: ``proofgate:alerts:<brandId>`` by default."""
_CONTROL = "-"
"""Subscribed always, published never: the listener holds a connection even
with nothing watched, so an outage is noticed before the first subscriber."""
OUTGOING_MAX = 10_000
"""Alerts waiting to be published; past it the oldest are left to the sweep."""
_BACKOFF_MIN = 0.05
_BACKOFF_MAX = 5.0
_CONFIRM_SECONDS = 2.0
_CONNECT_SECONDS = 1.0
_DROPPED_LOG_SECONDS = 60.0
"""At most one log line a minute for dropped messages, however many arrive."""


def channel(brand_id: str, prefix: str = "proofgate:") -> str:
    return prefix + CHANNEL_PREFIX + brand_id


def redis_client(url: str) -> Redis:
    """A client that fails at once rather than retrying: every caller has
    its own fallback (the table sweep, the cache's read-through)."""
    return Redis.from_url(
        url,
        retry=Retry(NoBackoff(), 0),
        socket_connect_timeout=_CONNECT_SECONDS,
        decode_responses=False,
    )


class _Outage(Exception):
    """The listener's connection is gone or never confirmed a subscription."""


class RedisTransport:
    def __init__(
        self,
        url: str,
        broker: Broker,
        tailer: Tailer,
        settings: PipelineSettings,
        *,
        key: bytes,
        on_outage: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``key``: the messages' HMAC key (``MESSAGE_KEY_LABEL``), the same
        in every process of the deployment."""
        self._url = url
        self._key = key
        self._clock = clock
        self.dropped = 0
        """Messages refused (forged, stale, malformed); a metric."""
        self._dropped_logged = -math.inf
        self._broker = broker
        self._tailer = tailer
        self._settings = settings
        self._prefix = settings.redis_prefix
        self._on_outage = on_outage
        self._publisher = self._client()
        self._pubsub: PubSub | None = None
        self._confirmed: dict[str, asyncio.Future[None]] = {}
        self._commands = asyncio.Lock()
        self._outgoing: deque[tuple[float, Item]] = deque(maxlen=OUTGOING_MAX)
        self._outgoing_ready = asyncio.Event()
        self._degraded = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.connected = False
        self.outages = 0
        """Times the process fell back to the table tail (a metric)."""
        self.unannounced = 0
        """Alerts this process never got onto Redis; the sweep delivers them."""

    def _client(self) -> Redis:
        return redis_client(self._url)

    # --- AlertTransport --------------------------------------------------------

    async def run(self) -> None:
        # gather, not a task group: see CacheChannel.run.
        await asyncio.gather(self._listen_forever(), self._tail_forever(), self._publish_forever())

    async def watch(self, brand_id: str) -> None:
        name = channel(brand_id, self._prefix)
        waiter = self._confirmed.get(name)
        if waiter is None:
            waiter = self._confirmed[name] = asyncio.get_running_loop().create_future()
            try:
                async with self._commands:
                    if self._pubsub is None:
                        return
                    waiter = self._confirmed.setdefault(name, waiter)
                    await self._pubsub.subscribe(name)
            except (RedisError, OSError):
                self._fall_back("subscribing failed")
                return
        if not self.connected:
            return
        try:
            # Not ``asyncio.wait_for``: on Python 3.11 it returns the result
            # when the waiter completes in the turn the caller is cancelled,
            # and the cancelled subscription then stayed registered
            # (docs/design.md, Alerts across processes).
            async with asyncio.timeout(_CONFIRM_SECONDS):
                await asyncio.shield(waiter)
        except TimeoutError:
            self._fall_back("a subscription was not confirmed")

    def unwatch(self, brand_id: str) -> None:
        self._spawn(self._unsubscribe(brand_id))

    def announce(self, item: Item) -> None:
        if len(self._outgoing) == OUTGOING_MAX:
            self.unannounced += 1
        self._outgoing.append((time.monotonic(), item))
        self._outgoing_ready.set()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self._publisher.aclose()

    # --- listening -------------------------------------------------------------

    async def _listen_forever(self) -> None:
        delay = _BACKOFF_MIN
        while True:
            raise_if_cancelled()
            client = self._client()
            pubsub = client.pubsub()
            try:
                await self._listen(pubsub)
            except (RedisError, OSError, _Outage) as error:
                if self.connected:
                    delay = _BACKOFF_MIN
                self._fall_back(f"{type(error).__name__}: {error}")
            except Exception as error:
                logger.exception("Listening to Redis failed; reconnecting")
                self._fall_back(f"{type(error).__name__}: {error}")
            finally:
                try:
                    await self._drop(pubsub)
                finally:
                    # Each attempt's client owns its connection pool: left
                    # open, its connection is closed only by the collector.
                    with contextlib.suppress(RedisError, OSError):
                        await client.aclose()
            await asyncio.sleep(delay * (0.5 + random.random() / 2))
            delay = min(2 * delay, _BACKOFF_MAX)

    async def _listen(self, pubsub: PubSub) -> None:
        async with self._commands:
            self._pubsub = pubsub
            control = channel(_CONTROL, self._prefix)
            names = [control, *(channel(brand, self._prefix) for brand in self._broker.watched())]
            loop = asyncio.get_running_loop()
            self._confirmed = {name: loop.create_future() for name in names}
            await pubsub.subscribe(*names)
        reader = asyncio.create_task(self._read(pubsub))
        try:
            pending = [asyncio.shield(waiter) for waiter in self._confirmed.values()]
            done, _ = await asyncio.wait([reader, *pending], timeout=_CONFIRM_SECONDS)
            if reader in done:
                await reader
            if len(done) < len(pending):
                raise _Outage("Redis did not confirm the subscriptions")
            await self._tailer.poll()
            if self.outages:
                logger.warning("Redis is reachable again; alerts travel through it")
            self.connected = True
            await reader
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, RedisError, OSError):
                await reader

    async def _read(self, pubsub: PubSub) -> None:
        while True:
            raise_if_cancelled()
            message = await pubsub.get_message(timeout=None)
            if message is None:
                continue
            name = message["channel"].decode()
            if message["type"] == "subscribe":
                waiter = self._confirmed.get(name)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
            elif message["type"] == "message":
                self._receive(name, message["data"])

    def _receive(self, name: str, data: bytes) -> None:
        """An alert from another process, passed on only once it is signed,
        fresh, well-formed and of its channel's brand; anything else is
        counted and dropped (the sweep still reads the real ones from the
        table), and nothing here ends the listener."""
        now = self._clock()
        try:
            max_age = self._settings.tail_overlap.total_seconds() + SKEW_SECONDS
            item = open_message(self._key, name, data, now, max_age)
            if channel(item["brandId"], self._prefix) != name:
                raise MalformedMessage(f"an alert of brand {item['brandId']!r}")
        except MalformedMessage as error:
            self.dropped += 1
            if now - self._dropped_logged >= _DROPPED_LOG_SECONDS:
                self._dropped_logged = now
                logger.warning(
                    "Dropped a message on %s (%s); %d dropped so far",
                    name[:200],
                    error,
                    self.dropped,
                )
            return
        try:
            self._broker.publish(item)
        except Exception:
            logger.exception("Passing on an alert from Redis failed")

    async def _drop(self, pubsub: PubSub) -> None:
        async with self._commands:
            if self._pubsub is pubsub:
                self._pubsub = None
        with contextlib.suppress(RedisError, OSError):
            await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _unsubscribe(self, brand_id: str) -> None:
        name = channel(brand_id, self._prefix)
        async with self._commands:
            if self._broker.is_watched(brand_id):
                return
            self._confirmed.pop(name, None)
            if self._pubsub is not None:
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.unsubscribe(name)

    def _fall_back(self, reason: str) -> None:
        """Once per outage: log, count, and tail the table at once."""
        if not self.connected and self.outages:
            return
        self.connected = False
        self.outages += 1
        if self._on_outage is not None:
            self._on_outage()
        logger.warning(
            "Redis unreachable (%s); alerts from other processes come from the table "
            "every %d ms until it is back",
            reason,
            self._settings.tail_interval.total_seconds() * 1000,
        )
        self._degraded.set()

    # --- the table, and publishing ---------------------------------------------

    async def _tail_forever(self) -> None:
        while True:
            raise_if_cancelled()
            try:
                await self._tailer.poll()
            except Exception:
                logger.exception("Tailing alerts failed; retrying")
            interval = (
                self._settings.redis_sweep_interval
                if self.connected
                else self._settings.tail_interval
            )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval.total_seconds()):
                    await self._degraded.wait()
            self._degraded.clear()

    async def _publish_forever(self) -> None:
        delay = _BACKOFF_MIN
        horizon = self._settings.tail_overlap.total_seconds()
        # The connection made now rather than by the first alert's publish:
        # its handshake's turns of the loop would fall among the fan-out's
        # (docs/design.md, Alert fan-out), and the other processes' sockets
        # would wait for this one's.
        with contextlib.suppress(RedisError, OSError):
            await self._publisher.ping()
        while True:
            raise_if_cancelled()
            await self._outgoing_ready.wait()
            self._outgoing_ready.clear()
            while self._outgoing:
                queued, item = self._outgoing[0]
                if time.monotonic() - queued > horizon:
                    self._outgoing.popleft()
                    self.unannounced += 1
                    continue
                try:
                    name = channel(item["brandId"], self._prefix)
                    message = seal_message(self._key, name, item, self._clock())
                    await self._publisher.publish(name, message)
                except (RedisError, OSError):
                    await asyncio.sleep(delay)
                    delay = min(2 * delay, _BACKOFF_MAX)
                    continue
                delay = _BACKOFF_MIN
                self._outgoing.popleft()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
