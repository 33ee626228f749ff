"""The two GraphQL-over-WebSocket protocols, as this gateway speaks them.

Strawberry's handlers, plus what a hostile client must not get past
(docs/design.md, WebSocket connections): a connection is registered while it
is open (so the key watcher and shutdown can close it), must initialise within
the init timeout on either protocol, and initialises once: a second
``connection_init`` on legacy graphql-ws would otherwise re-authenticate the
connection as someone else (anonymous, out of the revocation watcher's sight)
while its subscriptions run on, so it is closed as graphql-transport-ws does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from starlette.types import Message, Receive, Send
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler
from strawberry.subscriptions.protocols.graphql_ws.types import ConnectionInitMessage

from api.observability.fallbacks import fell_back
from api.runtime.direct_frames import DIRECT_FRAMES, FrameWriter
from api.settings.limits import Lane
from api.ws.connections import Connections, LiveConnection, SocketContext
from api.ws.keepalive import KA, PING, Keepalive, answer_idle
from domain.errors import ErrorCode
from resolvers.context import RequestContext

__all__ = [
    "CLOSE_INIT_TIMEOUT",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_TOO_MANY_INITS",
    "DirectOperation",
    "DirectStarts",
    "TransportWSHandler",
    "WSHandler",
    "bounded_receive",
]

CLOSE_TOO_MANY_INITS = (4429, "Too many initialisation requests")
CLOSE_INIT_TIMEOUT = (4408, "Connection initialisation timeout")
"""graphql-transport-ws's codes, used on legacy graphql-ws too, which has none."""
CLOSE_MESSAGE_TOO_BIG = (1009, "Message too big")


def bounded_receive(receive: Receive, send: Send, limit: int) -> Receive:
    """``receive`` for a WebSocket whose messages obey the body limit, as a
    POST does: a larger one closes the connection (1009) before anything
    parses it. ``serve`` also gives uvicorn the limit, which refuses such a
    frame from its header, before reading it; this holds under any server."""

    async def bounded() -> Message:
        message = await receive()
        if message["type"] == "websocket.receive" and _size(message) > limit:
            code, reason = CLOSE_MESSAGE_TOO_BIG
            await send({"type": "websocket.close", "code": code, "reason": reason})
            return {"type": "websocket.disconnect", "code": code}
        return message

    return bounded


def _size(message: Message) -> int:
    data = message.get("bytes")
    if data is not None:
        return len(data)
    text: str = message.get("text") or ""
    return len(text) if text.isascii() else len(text.encode())


_LIBRARY_ERRORS = {
    "Subscription limit reached": (
        ErrorCode.RATE_LIMITED,
        "This connection holds its limit of operations; complete one, or open another connection.",
    ),
}
"""Errors Strawberry sends itself, by message: their code and hint."""


def with_codes(message: Any) -> Any:
    """``message`` with ``extensions.code`` on every error it carries: an
    ``error`` (either protocol) or legacy ``connection_error`` Strawberry
    builds has only a message, and every error a client gets has a code."""
    if not isinstance(message, dict) or message.get("type") not in _ERROR_TYPES:
        return message
    payload = message.get("payload")
    errors = payload if isinstance(payload, list) else [payload]
    for error in errors:
        if isinstance(error, dict) and "code" not in (error.get("extensions") or {}):
            code, hint = _LIBRARY_ERRORS.get(
                str(error.get("message")), (ErrorCode.BAD_USER_INPUT, None)
            )
            extensions = {**(error.get("extensions") or {}), "code": code.value}
            if hint is not None:
                extensions["hint"] = hint
            error["extensions"] = extensions
    return message


_ERROR_TYPES = frozenset({"error", "connection_error"})


class DirectOperation(Protocol):
    """A subscription the direct fan-out delivers, kept among the handler's
    operations in place of Strawberry's (docs/design.md, Alert fan-out)."""

    task: None

    def end(self) -> None: ...


class DirectStarts(Protocol):
    """What the view offers as ``alert_fanout`` (``api/graphql/alert_fanout.py``)."""

    async def start(
        self,
        operation_id: str,
        payload: Any,
        context: Any,
        frames: FrameWriter | None,
        kind: str = "next",
    ) -> DirectOperation | None:
        """The subscription started, its frames of type ``kind``; or None
        for Strawberry's path to take."""


class _Registered:
    """Shared by both protocol handlers: register the connection while it is
    open, and give every error sent a code (``with_codes``)."""

    view: Any
    context: Any
    websocket: Any

    @property
    def connections(self) -> Connections:
        connections: Connections = self.view.connections
        return connections

    async def send_message(self, message: Any) -> None:
        await super().send_message(with_codes(message))  # type: ignore[misc]

    def _frames(self) -> FrameWriter | None:
        """The connection's direct frames, if the server offers them."""
        context = self.context
        if not isinstance(context, SocketContext) or context.request is None:
            return None
        frames: FrameWriter | None = context.request.scope.get(DIRECT_FRAMES)
        return frames

    def _keep_alive_directly(self, message: Keepalive, answers: bool) -> None:
        """Once acknowledged: the keep-alive written as one frame made once,
        and (``answers``) pongs and pings answered below the handler, with
        the ``keepalive`` lane on (docs/design.md, Keep-alives)."""
        if not self.view.direct_keepalive or not isinstance(self.context, SocketContext):
            return
        connection = self.context.connection
        frames = self._frames()
        if frames is None or connection is None:
            fell_back(Lane.KEEPALIVE, "server without direct frames")
            return
        connection.direct = (frames, message)
        if answers:
            frames.answer_idle(answer_idle)

    def _keepalive_fell_back(self) -> None:
        """A ping or pong that reached the handler, with the lane on."""
        if not self.view.direct_keepalive:
            return
        if not self.connection_acknowledged:  # type: ignore[attr-defined]
            cause = "before connection_ack"
        elif self._frames() is None:
            cause = "server without direct frames"
        else:
            cause = "handler busy, or not one frame"
        fell_back(Lane.KEEPALIVE, cause)

    async def _start_direct(self, message: Any, kind: str) -> DirectOperation | None:
        """``message``'s subscription started by the direct fan-out, or None
        (Strawberry's path takes it): the caller checked what the protocol
        checks first."""
        direct: DirectStarts | None = getattr(self.view, "alert_fanout", None)
        context = self.context
        if (
            direct is None
            or not isinstance(message.get("id"), str)
            or not isinstance(message.get("payload"), dict)
            or not isinstance(context, SocketContext)
            or context.request is None
        ):
            return None
        return await direct.start(message["id"], message["payload"], context, self._frames(), kind)

    def _register(self, keepalive: Callable[[], Awaitable[None]]) -> LiveConnection:
        connection = LiveConnection(self.websocket, self.context, keepalive)
        if isinstance(self.context, SocketContext):
            self.context.connection = connection
        self.connections.add(connection)
        return connection

    def _unregister(self, connection: LiveConnection) -> None:
        """Also unlinks the context from the connection, which holds it: left
        in a cycle, a closed socket's handler, context and loaders waited for
        a full collection (docs/design.md, Memory growth)."""
        self.connections.discard(connection)
        if isinstance(self.context, SocketContext) and self.context.connection is connection:
            self.context.connection = None


class TransportWSHandler(_Registered, BaseGraphQLTransportWSHandler[RequestContext, None]):
    """graphql-transport-ws, with server pings so idle connections stay open
    through proxies and dead ones are noticed. Strawberry already closes a
    second ``connection_init`` (4429) and a late one (4408)."""

    async def handle(self) -> None:
        connection = self._register(self._ping)
        try:
            await super().handle()
        finally:
            self._unregister(connection)

    async def handle_connection_init(self, message: Any) -> None:
        timeout = self.connection_init_timeout_task
        await super().handle_connection_init(message)
        if timeout is not None and timeout is self.connection_init_timeout_task:
            # Cancelled by Strawberry; a finished task keeps its coroutine and
            # the CancelledError's frames for the connection's life (1.5 KB).
            self.connection_init_timeout_task = None
        if self.connection_acknowledged:
            self._keep_alive_directly(PING, answers=True)

    async def handle_ping(self, message: Any) -> None:
        self._keepalive_fell_back()
        await super().handle_ping(message)

    async def handle_pong(self, message: Any) -> None:
        self._keepalive_fell_back()
        await super().handle_pong(message)

    async def _ping(self) -> None:
        if self.connection_acknowledged:
            await self.send_message({"type": "ping"})

    async def handle_subscribe(self, message: Any) -> None:
        """A subscription the direct fan-out takes, with Strawberry's
        checks first (acknowledged, a new id, under the connection's limit);
        anything else, and whatever the fan-out declines, Strawberry's way."""
        limit = self.max_subscriptions_per_connection
        if (
            self.connection_acknowledged
            and message.get("id") not in self.operations
            and (limit is None or len(self.operations) < limit)
        ):
            started = await self._start_direct(message, "next")
            if started is not None:
                self.operations[message["id"]] = started  # type: ignore[assignment]
                return
        await super().handle_subscribe(message)

    async def cleanup_operation(self, operation_id: str) -> None:
        operation = self.operations.get(operation_id)
        if operation is not None and not isinstance(operation, Operation):
            del self.operations[operation_id]
            direct: DirectOperation = operation
            direct.end()
            return
        await super().cleanup_operation(operation_id)


class WSHandler(_Registered, BaseGraphQLWSHandler[RequestContext, None]):
    """Legacy graphql-ws; its keep-alive is the protocol's own ``ka`` message."""

    _init_received = False

    async def handle(self) -> None:
        connection = self._register(self._keep_alive)
        timeout = asyncio.create_task(self._init_timeout())
        try:
            await super().handle()
        finally:
            timeout.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timeout
            self._unregister(connection)

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        if self._init_received:
            code, reason = CLOSE_TOO_MANY_INITS
            await self.websocket.close(code=code, reason=reason)
            return
        self._init_received = True
        await super().handle_connection_init(message)
        if self.connection_acknowledged:
            self._keep_alive_directly(KA, answers=False)

    async def _init_timeout(self) -> None:
        await asyncio.sleep(self.view.connection_init_wait_timeout.total_seconds())
        if not self._init_received:
            code, reason = CLOSE_INIT_TIMEOUT
            with contextlib.suppress(Exception):
                await self.websocket.close(code=code, reason=reason)

    async def _keep_alive(self) -> None:
        if self.connection_acknowledged:
            await self.send_message({"type": "ka"})

    async def handle_start(self, message: Any) -> None:
        """As graphql-transport-ws's ``handle_subscribe``: Strawberry's
        checks first (acknowledged, the id's earlier operation stopped,
        under the limit), then the direct fan-out, else Strawberry's way."""
        operation_id = message.get("id")
        if self.connection_acknowledged and isinstance(operation_id, str):
            if operation_id in self.tasks:
                await self.cleanup_operation(operation_id)
            limit = self.max_subscriptions_per_connection
            if limit is None or len(self.tasks) < limit:
                started = await self._start_direct(message, "data")
                if started is not None:
                    self.tasks[operation_id] = started  # type: ignore[assignment]
                    return
        await super().handle_start(message)

    async def cleanup_operation(self, operation_id: str) -> None:
        """A direct subscription ends with ``complete``, as Strawberry's
        cancelled operation task sends one (on ``stop`` and on close)."""
        operation = self.tasks.get(operation_id)
        if operation is not None and not isinstance(operation, asyncio.Task):
            del self.tasks[operation_id]
            direct: DirectOperation = operation
            direct.end()
            with contextlib.suppress(Exception):
                await self.send_message({"type": "complete", "id": operation_id})
            return
        await super().cleanup_operation(operation_id)
