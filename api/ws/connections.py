"""GraphQL over WebSocket: authentication, keep-alive, and closing with a reason.

Both protocols authenticate in ``connection_init`` (``{"authorization":
"Bearer <key>"}``); a bad key is refused there (4403), no key is anonymous,
whose subscriptions then fail as UNAUTHENTICATED. Each connection is
registered while open, so the key watcher can close the connections of a key
that was revoked, and a subscription that falls too far behind can close its
connection with a reason the client can act on rather than lose alerts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from api.observability.fallbacks import fell_back
from api.runtime.direct_frames import HELD, FrameWriter
from api.settings.limits import Lane
from api.ws.keepalive import Keepalive
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from storage import Storage
from storage.access_patterns import API_KEY_BY_HASH

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_REVOKED",
    "CLOSE_SLOW_CONSUMER",
    "Connections",
    "LiveConnection",
    "SocketContext",
]

logger = logging.getLogger("proofgate.websocket")

CLOSE_SLOW_CONSUMER = (4008, "Slow consumer: too many alerts were waiting to be sent")
CLOSE_REVOKED = (4403, "API key revoked")
CLOSE_GOING_AWAY = (1001, "Server shutting down")
_CLOSE_TIMEOUT_SECONDS = 5.0
KEEPALIVE_SENDERS = 32
"""Keep-alives sent at once through the handlers; a connection that does not
take one in ``_CLOSE_TIMEOUT_SECONDS`` holds up one sender that long."""
KEEPALIVE_BATCH = 256
"""Keep-alives written as frames between two turns of the loop: an alert
waits for at most one batch of a round (docs/design.md, Keep-alives)."""


class LiveConnection:
    """One open WebSocket, as the rest of the gateway sees it."""

    def __init__(
        self, websocket: Any, context: Any, keepalive: Callable[[], Awaitable[None]]
    ) -> None:
        self._websocket = websocket
        self.context = context
        self.keepalive = keepalive
        """Sends the protocol's keep-alive message once the connection is acknowledged."""
        self.direct: tuple[FrameWriter, Keepalive] | None = None
        """Where the keep-alive is written as a frame made once, and which
        (docs/design.md, Keep-alives); None: ``keepalive`` sends it."""
        self._closing: asyncio.Task[None] | None = None

    def write_keepalive(self) -> bool:
        """The keep-alive written as a frame (or the socket is closing, with
        nothing to keep alive); False for ``keepalive`` to send it, as when
        the transport asked to pause: the handler's send waits for it."""
        direct = self.direct
        if direct is None:
            return False
        frames, message = direct
        if frames.write_ready(message.data, message.frame) == HELD:
            fell_back(Lane.KEEPALIVE, "transport paused")
            return False
        return True

    @property
    def key_hash(self) -> str | None:
        key_hash: str | None = self.context.principal.key_hash
        return key_hash

    def slow_consumer(self) -> None:
        self.close_soon(*CLOSE_SLOW_CONSUMER)

    def close_soon(self, code: int, reason: str) -> asyncio.Task[None]:
        """From a callback: a send may be blocked on this very socket."""
        if self._closing is None:
            self._closing = asyncio.get_running_loop().create_task(self._close(code, reason))
        return self._closing

    async def _close(self, code: int, reason: str) -> None:
        logger.info("Closing WebSocket (%d %s)", code, reason)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_CLOSE_TIMEOUT_SECONDS):
                await self._websocket.close(code=code, reason=reason)


@dataclass
class SocketContext(RequestContext):
    """The context of a WebSocket connection: one for all its operations."""

    connection_params: dict[str, Any] | None = None
    connection: LiveConnection | None = field(default=None, repr=False)

    def for_operation(self) -> SocketContext:
        """A copy with DataLoaders of its own, for one query, mutation or
        alert: a socket lives for hours, and one cache for its whole life
        would grow with every alert and answer later ones with what the
        first read (docs/design.md, WebSocket connections)."""
        return replace(self, loaders=Loaders(self.services.storage, self.principal.tenant))


class Connections:
    """The open connections of this process, and the watcher that closes those
    whose API key was revoked (checked every ``interval``, on any process)."""

    def __init__(self) -> None:
        self._open: set[LiveConnection] = set()
        self._going_away: tuple[int, str] | None = None

    def add(self, connection: LiveConnection) -> None:
        if self._going_away is not None:
            connection.close_soon(*self._going_away)
            return
        self._open.add(connection)

    def discard(self, connection: LiveConnection) -> None:
        self._open.discard(connection)

    def __len__(self) -> int:
        return len(self._open)

    async def close_all(self, code: int, reason: str) -> int:
        """Closes every open connection, and each one opened from now on; how
        many were open. Returns once their close handshakes finished."""
        self._going_away = (code, reason)
        closing = [connection.close_soon(code, reason) for connection in self._open]
        self._open.clear()
        await asyncio.gather(*closing)
        return len(closing)

    async def check_keys(self, storage: Storage) -> int:
        """Closes connections whose key is revoked or gone; how many it closed."""
        by_key: dict[str, list[LiveConnection]] = {}
        for connection in list(self._open):
            if connection.key_hash is not None:
                by_key.setdefault(connection.key_hash, []).append(connection)
        if not by_key:
            return 0
        keys = list(by_key)
        records = await storage.batch_get(API_KEY_BY_HASH, [{"key_hash": key} for key in keys])
        closed = 0
        for key, record in zip(keys, records, strict=True):
            if record is None or record.get("revokedAt"):
                for connection in by_key[key]:
                    connection.close_soon(*CLOSE_REVOKED)
                    self.discard(connection)
                    closed += 1
        return closed

    async def watch(self, storage: Storage, interval: timedelta) -> None:
        while True:
            await asyncio.sleep(interval.total_seconds())
            try:
                await self.check_keys(storage)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("Checking the API keys of open WebSockets failed")

    @contextlib.asynccontextmanager
    async def watching(
        self, storage: Storage, key_check: timedelta, keepalive: timedelta
    ) -> AsyncIterator[None]:
        """Keeps connections alive, and closes those whose API key gets revoked,
        on whichever process revoked it."""
        tasks = [
            asyncio.create_task(self.watch(storage, key_check)),
            asyncio.create_task(self.keep_alive(keepalive)),
        ]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def keep_alive(self, interval: timedelta) -> None:
        """One task for every connection's keep-alive, rather than one task per
        connection: an idle subscription should cost as little as possible.
        A round writes the keep-alives of connections with direct frames
        itself (docs/design.md, Keep-alives), and sends the others' through
        ``KEEPALIVE_SENDERS`` senders, not a task per connection, so it does
        not raise the process's memory for a moment by a task per connection
        either; a slow connection holds up one."""
        while True:
            await asyncio.sleep(interval.total_seconds())
            await self.keep_alive_round()

    async def keep_alive_round(self) -> None:
        """Frames first, ``KEEPALIVE_BATCH`` a turn of the loop; then the
        connections whose handlers send their own."""
        through_handlers = []
        for index, connection in enumerate(list(self._open), 1):
            if not connection.write_keepalive():
                through_handlers.append(connection)
            if index % KEEPALIVE_BATCH == 0:
                await asyncio.sleep(0)
        if through_handlers:
            waiting = iter(through_handlers)
            senders = min(KEEPALIVE_SENDERS, len(through_handlers))
            await asyncio.gather(*(_send_each(waiting) for _ in range(senders)))


async def _send_each(connections: Iterator[LiveConnection]) -> None:
    for connection in connections:
        await _quietly(connection.keepalive())


async def _quietly(send: Awaitable[None]) -> None:
    """A keep-alive that fails means the connection is going; its handler cleans up."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_CLOSE_TIMEOUT_SECONDS):
            await send
